"""Babel extraction method for the sentences the exercise checks show (``docs/zh/babel.cfg``).

A check's feedback is built from the ``what`` / ``expected`` / ``found`` / ``hint`` a check function hands to a
:class:`~mcp_teach.exercises.check.Checker` method, and from the fixed sentences ``said(...)`` names; what a check
prints once it passed is what ``say(...)`` prints. Those texts are
rarely written at the call: a hint comes from a table, a helper's parameter, a branch or a loop. So the extraction
follows each such argument back through the package's own code (statically, nothing is imported or run):

- the sinks are ``Checker.failure``'s four parameters, ``said``'s first and ``say``'s values (printed as one
  message: ``say(a, b)`` is read as ``say(f"{a} {b}")``, with its ``sep``); a function whose parameter reaches a sink
  (``Checker.equal``'s ``what``, ``made_capture``'s ``name``) becomes a sink too, as does a function whose return
  value does (``_question_hint``), until nothing changes;
- an argument is followed through ``a if c else b``, ``a or b``, ``a + b``, names assigned in its function or module
  (or imported from a sibling module), tuple unpacking, ``for`` targets over literal tables (``zip``, ``.items()``,
  ``.values()``, subscripts and ``.get``), and calls of the package's functions (their ``return`` values);
- an f-string becomes one message with ``{expression}`` placeholders (``f"the result of {tool!r}"`` -> ``the result
  of {tool}``); a plain ``{name}`` in it is followed too, so a sentence put into another is translated on its own;
- anything else (``repr(x)``, an attribute, a call of the standard library) is a placeholder: data, shown as it is.

``Checker.true`` shows its ``found`` as a value (its ``repr``), so a sentence given there is extracted as shown,
quotes included. A message with no letter outside its placeholders is data and left out, and so is one that is a
single word of code (a name, an expression).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

EXERCISES = Path(__file__).resolve().parents[1] / "mcp_teach" / "exercises"
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
#: The parameters every other sink leads to: the feedback's four texts, a fixed sentence of the checks, and what a
#: check prints once it passed.
SINKS = {
    ("Checker", "failure"): {"what", "expected", "found", "hint"},
    (None, "said"): {"text"},
    (None, "say"): {"values"},
}
#: Arguments shown as a value (their repr) rather than as text: ``Checker.true``'s ``found``.
SHOWN_AS_VALUE = {("Checker", "true"): "found"}
#: Calls that hand back (an element of) their first argument.
PASSING_ON = {"run_sync", "list", "tuple", "sorted", "reversed", "set"}
CONTAINER = ast.Tuple | ast.List | ast.Set | ast.Dict


@dataclass(eq=False)
class Function:
    """A function of the exercises package, and what of it reaches the feedback."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    module: Module
    owner: str | None
    parent: Function | None
    sinks: set[str] = field(default_factory=set)
    returns_message: bool = False

    @property
    def parameters(self) -> list[str]:
        arguments = self.node.args
        names = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
        return names[1:] if self.owner else names

    @property
    def keyword_parameters(self) -> list[str]:
        return [a.arg for a in [*self.node.args.args, *self.node.args.kwonlyargs]]


@dataclass(eq=False)
class Module:
    """One module of the exercises package: its tree, assignments, imports from siblings and functions."""

    path: Path
    tree: ast.Module
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)
    functions: list[Function] = field(default_factory=list)


@dataclass
class Package:
    """Every module of the exercises package, and its functions by name."""

    modules: dict[str, Module]
    by_name: dict[str, list[Function]]


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's (or module's) body, without those of the functions and classes defined in it."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            yield from _own_nodes(child)


@cache
def package(folder: Path = EXERCISES) -> Package:
    """Read every module of ``folder``; then mark the sinks until no function adds one."""
    modules: dict[str, Module] = {}
    by_name: dict[str, list[Function]] = {}
    for path in sorted(folder.glob("*.py")):
        module = Module(path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
        modules[path.stem] = module
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mcp_teach.exercises."):
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = (node.module.rsplit(".", 1)[1], alias.name)
        _collect(module, module.tree, None, None, by_name)
    for function in (f for functions in by_name.values() for f in functions):
        function.sinks |= SINKS.get((function.owner, function.node.name), set())
    found = Package(modules, by_name)
    while _mark(found):
        pass
    return found


def _collect(module: Module, node: ast.AST, owner: str | None, parent: Function | None, by_name: dict) -> None:
    for child in _own_nodes(node) if not isinstance(node, ast.ClassDef) else node.body:
        if isinstance(child, ast.ClassDef):
            _collect(module, child, child.name, parent, by_name)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            function = Function(child, module, owner, parent)
            module.functions.append(function)
            by_name.setdefault(child.name, []).append(function)
            _collect(module, child, None, function, by_name)


@dataclass(frozen=True)
class Scope:
    """Where a name is looked up: a function (and the functions around it), then its module."""

    module: Module
    function: Function | None

    def node(self) -> ast.AST:
        return self.function.node if self.function else self.module.tree

    def outer(self) -> Scope | None:
        if self.function is None:
            return None
        return Scope(self.module, self.function.parent)


class Reader:
    """Follows the expressions that reach the feedback; collects their messages and the parameters they come from."""

    def __init__(self, found: Package) -> None:
        self.package = found
        self.changed = False
        self.messages: list[tuple[int, str]] = []

    def callees(self, call: ast.Call) -> list[Function]:
        if isinstance(call.func, ast.Name):
            return self.package.by_name.get(call.func.id, [])
        if isinstance(call.func, ast.Attribute):
            return [f for f in self.package.by_name.get(call.func.attr, []) if f.owner == "Checker"]
        return []

    def message_arguments(self, call: ast.Call) -> Iterator[tuple[ast.expr, bool]]:
        """The arguments of ``call`` that reach the feedback, each with whether it is shown as a value."""
        for callee in self.callees(call):
            if (values := callee.node.args.vararg) and values.arg in callee.sinks:
                yield _printed(call), False
                continue
            shown = SHOWN_AS_VALUE.get((callee.owner, callee.node.name))
            for name, argument in zip(callee.parameters, call.args, strict=False):
                if isinstance(argument, ast.Starred):
                    yield argument.value, False
                    break
                if name in callee.sinks:
                    yield argument, False
            for keyword in call.keywords:
                if keyword.arg in callee.sinks:
                    yield keyword.value, False
                elif keyword.arg == shown and keyword.arg in callee.keyword_parameters:
                    yield keyword.value, True

    def read_scope(self, scope: Scope) -> None:
        for node in _own_nodes(scope.node()):
            if isinstance(node, ast.Call):
                for argument, shown in self.message_arguments(node):
                    for message in self.texts(argument, scope, ()):
                        self.keep(node.lineno, repr(message) if shown else message)
            elif isinstance(node, ast.Return) and node.value and scope.function and scope.function.returns_message:
                for message in self.texts(node.value, scope, ()):
                    self.keep(node.lineno, message)

    def keep(self, line: int, message: str) -> None:
        """Keep ``message`` unless it is data: no letter outside its placeholders (nested ones too), or code (one
        word that is not a plain lowercase one: ``http_capture``, ``samples_on[{number}]``, ``POST``)."""
        text = message
        while PLACEHOLDER.search(text):
            text = PLACEHOLDER.sub("X", text)
        code = not re.search(r"\s", text.strip()) and not re.fullmatch(r"'?[a-z]+'?", text.strip())
        if re.search("[A-Za-z]", text.replace("X", "")) and not code:
            self.messages.append((line, message))

    def texts(self, node: ast.expr, scope: Scope, seen: tuple) -> list[str]:
        """The messages ``node`` may hold (placeholders for what is data); marks what it comes from."""
        if node in seen or len(seen) > 40:
            return []
        seen = (*seen, node)
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else []
        if isinstance(node, ast.JoinedStr):
            return [self.joined(node, scope, seen)]
        if isinstance(node, ast.Tuple | ast.List):
            return [text for element in node.elts for text in self.texts(element, scope, seen)]
        if isinstance(node, ast.IfExp):
            return self.texts(node.body, scope, seen) + self.texts(node.orelse, scope, seen)
        if isinstance(node, ast.BoolOp):
            return [text for value in node.values for text in self.texts(value, scope, seen)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            lefts, rights = self.texts(node.left, scope, seen), self.texts(node.right, scope, seen)
            return [left + right for left in lefts for right in rights]
        values = self.values(node, scope, (), seen)
        if values is None:
            return ["{" + ast.unparse(node) + "}"]
        return [text for value, where in values for text in self.texts(value, where, seen)]

    def joined(self, node: ast.JoinedStr, scope: Scope, seen: tuple) -> str:
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(value.value)
                continue
            assert isinstance(value, ast.FormattedValue)
            if value.conversion == -1 and value.format_spec is None:
                for text in self.texts(value.value, scope, seen):  # a sentence put into another: its own message
                    self.keep(node.lineno, text)
            parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)

    def values(self, node: ast.expr, scope: Scope, path: tuple[int, ...], seen: tuple) -> list | None:
        """The expressions (with their scopes) ``node`` stands for, at ``path`` inside them; None: not known."""
        if isinstance(node, ast.Name):
            return self.named(node.id, scope, path, seen)
        if isinstance(node, ast.Tuple | ast.List) and path:
            return self.values(node.elts[path[0]], scope, path[1:], seen) if path[0] < len(node.elts) else []
        if isinstance(node, ast.Subscript):
            return self.elements(node.value, scope, path, seen)
        if isinstance(node, ast.Starred):
            return self.values(node.value, scope, path, seen)
        if isinstance(node, ast.Call):
            return self.called(node, scope, path, seen)
        if not path and isinstance(node, ast.Constant | ast.JoinedStr | ast.IfExp | ast.BoolOp | ast.BinOp | CONTAINER):
            return [(node, scope)]
        return None

    def called(self, call: ast.Call, scope: Scope, path: tuple[int, ...], seen: tuple) -> list | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and call.args:
            items = self.elements(func.value, scope, path, seen) or []
            return items + ([(call.args[1], scope)] if len(call.args) > 1 else [])
        if isinstance(func, ast.Name) and func.id == "next" and isinstance(call.args[0], ast.GeneratorExp):
            generator = call.args[0]
            inner = self.values(generator.elt, scope, path, seen) or []
            return inner + ([(call.args[1], scope)] if len(call.args) > 1 else [])
        if isinstance(func, ast.Name) and func.id in PASSING_ON and call.args:
            return self.values(call.args[0], scope, path, seen)
        callees = [f for f in self.callees(call) if f.owner is None]
        if not callees:
            return None
        found = []
        for callee in callees:
            if not path and not callee.returns_message:
                callee.returns_message = self.changed = True
            where = Scope(callee.module, callee)
            for node in _own_nodes(callee.node):
                if isinstance(node, ast.Return) and node.value is not None:
                    found += self.values(node.value, where, path, seen) or ([] if path else [(node.value, where)])
        return found

    def elements(self, node: ast.expr, scope: Scope, path: tuple[int, ...], seen: tuple) -> list | None:
        """Every element of the container ``node`` (a dict's values), at ``path`` inside each."""
        containers = self.values(node, scope, (), seen)
        if containers is None:
            return None
        found = []
        for container, where in containers:
            if isinstance(container, ast.Dict):
                found += [x for value in container.values for x in self.values(value, where, path, seen) or []]
            elif isinstance(container, ast.Tuple | ast.List | ast.Set):
                found += [x for elt in container.elts for x in self.values(elt, where, path, seen) or []]
        return found

    def iterated(self, node: ast.expr, scope: Scope, path: tuple[int, ...], seen: tuple) -> list:
        """What a ``for`` over ``node`` binds, at ``path`` inside each item."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "zip" and path:
                return self.iterated(node.args[path[0]], scope, path[1:], seen) if path[0] < len(node.args) else []
            if node.func.id == "enumerate" and path:
                return self.iterated(node.args[0], scope, path[1:], seen) if path[0] == 1 else []
            if node.func.id in PASSING_ON and node.args:
                return self.iterated(node.args[0], scope, path, seen)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
            kind = node.func.attr
            if kind in ("items", "values", "keys"):
                pairs = self.pairs(node.func.value, scope, seen)
                if kind == "items" and path:
                    chosen = [pair[path[0]] for pair in pairs]
                    return [x for value, where in chosen for x in self.values(value, where, path[1:], seen) or []]
                chosen = [pair[1] if kind == "values" else pair[0] for pair in pairs]
                return [x for value, where in chosen for x in self.values(value, where, path, seen) or []]
        containers = self.values(node, scope, (), seen) or []
        found = []
        for container, where in containers:
            if isinstance(container, ast.Tuple | ast.List | ast.Set):
                found += [x for elt in container.elts for x in self.values(elt, where, path, seen) or []]
            elif isinstance(container, ast.Dict):
                found += [x for key in container.keys if key for x in self.values(key, where, path, seen) or []]
        return found

    def pairs(self, node: ast.expr, scope: Scope, seen: tuple) -> list:
        """The (key, value) pairs of a dict: a literal's, or those assigned one by one (``found[key] = value``), also
        of the dict a function of the package returns."""
        found = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            if node.func.id in PASSING_ON:
                return self.pairs(node.args[0], scope, seen)
            for callee in (f for f in self.callees(node) if f.owner is None):
                where = Scope(callee.module, callee)
                returned = [n.value for n in _own_nodes(callee.node) if isinstance(n, ast.Return) and n.value]
                found += [pair for value in returned for pair in self.pairs(value, where, seen)]
            return found
        for container, where in self.values(node, scope, (), seen) or []:
            if isinstance(container, ast.Dict):
                found += [((k, where), (v, where)) for k, v in zip(container.keys, container.values, strict=True) if k]
        if isinstance(node, ast.Name):
            for at in self.scopes(scope):
                for child in _own_nodes(at.node()):
                    if isinstance(child, ast.Assign):
                        for target in child.targets:
                            if isinstance(target, ast.Subscript) and ast.unparse(target.value) == node.id:
                                found.append(((target.slice, at), (child.value, at)))
        return found

    def scopes(self, scope: Scope) -> Iterator[Scope]:
        at: Scope | None = scope
        while at is not None:
            yield at
            at = at.outer()
        if scope.function is not None:
            yield Scope(scope.module, None)

    def named(self, name: str, scope: Scope, path: tuple[int, ...], seen: tuple) -> list | None:
        """The values assigned to ``name`` where ``scope`` sees it; a parameter that reaches the feedback is marked."""
        for at in self.scopes(scope):
            bound = list(self.bindings(name, at, path, seen))
            if bound:
                return [x for values in bound for x in values]
            function = at.function
            if function is not None and name in function.keyword_parameters + function.parameters:
                if not path and name not in function.sinks:
                    function.sinks.add(name)
                    self.changed = True
                return []
        if name in scope.module.imports:
            module, original = scope.module.imports[name]
            if module in self.package.modules:
                return self.named(original, Scope(self.package.modules[module], None), path, seen)
        return None

    def bindings(self, name: str, scope: Scope, path: tuple[int, ...], seen: tuple) -> Iterator[list]:
        """What each assignment of ``name`` in ``scope`` (its own statements only) binds to it."""
        for node in _own_nodes(scope.node()):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for where in _positions(target, name):
                        yield self.values(node.value, scope, where + path, seen) or []
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                for where in _positions(node.target, name):
                    yield self.iterated(node.iter, scope, where + path, seen)


def _printed(call: ast.Call) -> ast.expr:
    """What ``say(...)`` prints, as one expression: its only value, or an f-string of its values joined by its ``sep``
    (a starred value, ``*also``, is one placeholder)."""
    if len(call.args) == 1 and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    sep = next((keyword.value for keyword in call.keywords if keyword.arg == "sep"), ast.Constant(" "))
    parts: list[ast.expr] = []
    for value in call.args:
        parts += [sep] if parts else []
        parts.append(value.value if isinstance(value, ast.Starred) else value)
    text = [p if isinstance(p, ast.Constant) and isinstance(p.value, str) else ast.FormattedValue(p, -1) for p in parts]
    return ast.copy_location(ast.JoinedStr(text), call)


def _positions(target: ast.expr, name: str) -> Iterator[tuple[int, ...]]:
    """Where ``name`` sits in an assignment's target: ``()`` for the whole value, ``(1, 0)`` inside nested tuples."""
    if isinstance(target, ast.Name) and target.id == name:
        yield ()
    elif isinstance(target, ast.Tuple | ast.List):
        for index, element in enumerate(target.elts):
            for inner in _positions(element, name):
                yield (index, *inner)


def _mark(found: Package) -> bool:
    """One round over every scope; True when it marked a new sink."""
    reader = Reader(found)
    for module in found.modules.values():
        for scope in [Scope(module, None), *(Scope(module, f) for f in module.functions)]:
            reader.read_scope(scope)
    return reader.changed


def messages(path: Path) -> list[tuple[int, str]]:
    """The messages of one module of the exercises package, with their lines, in order, each once."""
    found = package(path.resolve().parent)
    module = found.modules[path.stem]
    reader = Reader(found)
    for scope in [Scope(module, None), *(Scope(module, f) for f in module.functions)]:
        reader.read_scope(scope)
    first: dict[str, int] = {}
    for line, message in reader.messages:
        first[message] = min(line, first.get(message, line))
    return sorted(((line, message) for message, line in first.items()), key=lambda item: item)


def extract(fileobj, keywords, comment_tags, options) -> Iterator[tuple[int, None, str, list[str]]]:
    """Babel's extraction method: ``(lineno, funcname, message, comments)`` for each message of the file."""
    for line, message in messages(Path(fileobj.name)):
        yield line, None, message, []
