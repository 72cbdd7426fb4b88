"""The package's layers (see ``mcp_teach/__init__.py``): a module imports only its own layer or lower ones, no circles.

Every ``import`` in every module counts, also those inside functions: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import mcp_teach

PACKAGE = Path(mcp_teach.__file__).parent

#: Lowest first. A module's layer is its subpackage, or its own name for a top-level module; a dotted name places
#: one module of a subpackage apart from the rest (the conformance runner, which lesson 13's checks use).
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(names.split())
    for names in (
        "__init__ config private_files",
        "servers",
        "transports",
        "wire",
        "client course.conformance",
        "llm",
        "display",
        "lessons notebook_setup",
        "exercises",
        "serve course",
        "cli",
    )
)


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of ``mcp_teach.<first part>.<second part>``, else of ``mcp_teach.<first part>``."""
    parts = module.split(".")[1:] or ["__init__"]
    for name in (".".join(parts[:2]), parts[0]):
        for index, names in enumerate(LAYERS):
            if name in names:
                return index
    raise AssertionError(f"{module} is in no layer: add {parts[0]!r} to LAYERS and to the package docstring")


def imported_modules(path: Path, root: Path = PACKAGE) -> set[str]:
    """The ``mcp_teach`` modules ``path`` imports (``from mcp_teach.x import y``: ``mcp_teach.x.y`` if a module)."""
    found = set()
    this = module_name(path, root)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from ..y import z
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *filter(None, [base])])
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if _is_module(candidate, root) else base)
    return {name for name in found if name == "mcp_teach" or name.startswith("mcp_teach.")}


def _is_module(name: str, root: Path) -> bool:
    relative = Path(*name.split(".")[1:])
    return (root / relative).with_suffix(".py").is_file() or (root / relative / "__init__.py").is_file()


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of the package at ``root`` with the package modules it imports."""
    graph = {}
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        graph[name] = imported_modules(path, root) - {name}
    return graph


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module, targets in graph.items()
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each once, as the list of modules round it."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def visit(module: str, path: list[str]) -> None:
        for target in sorted(graph.get(module, ())):
            if target in path:
                circle = path[path.index(target) :]
                if frozenset(circle) not in seen:
                    seen.add(frozenset(circle))
                    found.append([*circle, target])
            elif len(path) < 12:
                visit(target, [*path, target])

    for module in graph:
        visit(module, [module])
    return found


def test_no_module_imports_a_higher_layer():
    assert upward_imports(import_graph()) == []


def test_no_import_circles():
    assert circles(import_graph()) == []


def test_every_subpackage_says_what_lives_there():
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and len(doc.splitlines()) >= 2, f"{init} needs a docstring: what lives here, what it may import"


def test_every_layer_is_named_in_the_package_docstring():
    doc = mcp_teach.__doc__ or ""
    for names in LAYERS[1:]:
        for name in names:
            assert name in doc, f"{name} is missing from the layer list in mcp_teach/__init__.py"


def test_the_checks_catch_a_wrong_import(tmp_path):
    """A copy of the package with one upward import and one circle added: both checks must report them."""
    copy = tmp_path / "mcp_teach"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    calculator = copy / "servers" / "calculator.py"
    calculator.write_text(calculator.read_text() + "\nfrom mcp_teach.display.show import show\n")
    frames = copy / "transports" / "frames.py"
    frames.write_text(frames.read_text() + "\nfrom mcp_teach.transports import stdio_loop\n")
    graph = import_graph(copy)
    assert "mcp_teach.servers.calculator (layer 1) imports mcp_teach.display.show (layer 6)" in upward_imports(graph)
    assert any({"mcp_teach.transports.frames", "mcp_teach.transports.stdio_loop"} <= set(c) for c in circles(graph))


@pytest.mark.parametrize("module", ["mcp_teach.serve", "mcp_teach.transports.stdio_loop"])
def test_serving_imports_nothing_of_the_notebook_side(module):
    """A stdio server starts for every connection: it must not pay for the display, the LLM or the lessons."""
    graph = import_graph()
    reached, todo = set(), [module]
    while todo:
        current = todo.pop()
        if current not in reached:
            reached.add(current)
            todo.extend(graph.get(current, ()))
    heavy = {name for name in reached if layer_of(name) >= layer_of("mcp_teach.client") and name != module}
    assert heavy == set()


def test_the_top_level_shows_the_design():
    """Beside its subpackages the package keeps at most six modules of its own: the rest lives where its job is."""
    modules = sorted(path.stem for path in PACKAGE.glob("*.py") if path.name != "__init__.py")
    assert len(modules) <= 6, modules
