"""Code size: how much code the package holds beside the code the lessons show, and which cells only call a helper.

Counting rules (they are the budget's definitions):

- A **code line** is a line of Python that holds a token other than a comment; blank lines, comment lines and the
  lines of docstrings (a string that is the first statement of a module, class or function) are not code lines.
- **Package**: code lines of every ``mcp_teach/**/*.py``, per subpackage (``mcp_teach/*.py`` counted as ``(top)``).
- **Lessons**: the solved lessons ``notebooks/solutions/NN_*.ipynb``. A code cell is *boilerplate* when its code
  lines are only imports, IPython magics (also under an ``if``), ``check("NN.K")`` calls or a bare name (a
  displayed value); the other code cells are *teaching* cells. A teaching cell is **helper-only** when at most one
  of its code lines is not a call into the package: a line counts as a package call when its statement is a simple
  statement (an expression, an assignment or ``await``) whose every call is of a name the notebook imported from
  ``mcp_teach`` or an attribute of one. Everything else (a ``def``, a ``with`` block, a request built by hand, a
  call of the SDK) is protocol code the student reads.

Ceilings: the library (the package minus ``mcp_teach/exercises``, the per-lesson checks) <= 10,000 code lines,
``mcp_teach/exercises`` <= 4,500, ``mcp_teach/lessons`` <= 1,200; in every lesson helper-only cells <= 20 % of its
teaching cells. Exit code 1 with ``--check`` when a budget is exceeded.

    python benchmarks/code_size.py [--check]
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import sys
import tokenize
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mcp_teach"
SOLUTIONS = ROOT / "notebooks" / "solutions"
LIBRARY_BUDGET = 10_000
EXERCISES_BUDGET = 4_500
LESSONS_BUDGET = 1_200
HELPER_SHARE_BUDGET = 0.20
SETUP_CALLS = {"check", "setup_notebook", "print_versions"}  # every lesson's first cell, and the check cells
IGNORED_TOKENS = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def code_lines(source: str) -> set[int]:
    """The numbers of the code lines of ``source`` (rules above)."""
    docstrings = _docstring_lines(ast.parse(source))
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in IGNORED_TOKENS:
            continue
        lines.update(line for line in range(token.start[0], token.end[0] + 1) if line not in docstrings)
    return lines


def package_sizes() -> Counter[str]:
    """Code lines per subpackage of ``mcp_teach``."""
    sizes: Counter[str] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        part = relative.parts[0] if len(relative.parts) > 1 else "(top)"
        sizes[part] += len(code_lines(path.read_text(encoding="utf-8")))
    return sizes


def _python(cell_source: str) -> str:
    """The cell with each IPython magic or shell line made a ``pass`` statement (the line commented after it)."""
    lines = []
    for line in cell_source.splitlines():
        stripped = line.lstrip()
        magic = stripped.startswith(("%", "!"))
        lines.append(f"{line[: len(line) - len(stripped)]}pass  # {stripped}" if magic else line)
    return "\n".join(lines)


def _imported_from_package(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mcp_teach"):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(
                (alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name.startswith("mcp_teach")
            )
    return names


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_package_call(statement: ast.stmt, package_names: set[str]) -> bool:
    if not isinstance(statement, ast.Expr | ast.Assign | ast.AnnAssign | ast.AugAssign):
        return False
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)]
    return bool(calls) and all(_root_name(call.func) in package_names for call in calls)


def _is_boilerplate(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Import | ast.ImportFrom | ast.Pass):
        return True
    if isinstance(statement, ast.If):  # every lesson's first cell: install the course where it is missing
        return all(_is_boilerplate(inner) for inner in [*statement.body, *statement.orelse])
    if isinstance(statement, ast.Expr):
        value = statement.value
        if isinstance(value, ast.Name | ast.Attribute | ast.Constant):
            return True
        return isinstance(value, ast.Call) and _root_name(value.func) in SETUP_CALLS
    return False


def classify_cells(notebook_path: Path) -> Counter[str]:
    """Counts of ``boilerplate``, ``helper-only`` and ``protocol`` code cells in one notebook."""
    cells = json.loads(notebook_path.read_text(encoding="utf-8"))["cells"]
    sources = [_python("".join(cell["source"])) for cell in cells if cell["cell_type"] == "code"]
    trees = []
    for source in sources:
        try:
            trees.append(ast.parse(source))
        except SyntaxError:  # a cell shown broken on purpose: protocol code
            trees.append(None)
    package_names = set().union(*(_imported_from_package(tree) for tree in trees if tree is not None))
    kinds: Counter[str] = Counter()
    for source, tree in zip(sources, trees, strict=True):
        if tree is None:
            kinds["protocol"] += 1
            continue
        statements = tree.body
        if all(_is_boilerplate(statement) for statement in statements):
            kinds["boilerplate"] += 1
            continue
        calls = [statement for statement in statements if _is_package_call(statement, package_names)]
        own = [statement for statement in statements if statement not in calls and not _is_boilerplate(statement)]
        own_lines = sum(len(code_lines(ast.get_source_segment(source, statement) or "x")) for statement in own)
        kinds["helper-only" if calls and own_lines <= 1 else "protocol"] += 1
    return kinds


def lesson_sizes() -> dict[str, tuple[Counter[str], int]]:
    """Per solved lesson: its cell kinds and the code lines of its code cells."""
    sizes = {}
    for path in sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        lines = 0
        for cell in cells:
            if cell["cell_type"] == "code":
                try:
                    lines += len(code_lines(_python("".join(cell["source"]))))
                except (SyntaxError, tokenize.TokenError):
                    lines += len([line for line in "".join(cell["source"]).splitlines() if line.strip()])
        sizes[path.stem] = (classify_cells(path), lines)
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is exceeded")
    arguments = parser.parse_args(argv)
    over: list[str] = []

    sizes = package_sizes()
    total = sum(sizes.values())
    print(f"{'subpackage':<14}{'code lines':>11}")
    for part, lines in sorted(sizes.items(), key=lambda item: -item[1]):
        print(f"{part:<14}{lines:>11}")
    library = total - sizes["exercises"]
    print(f"{'package':<14}{total:>11}")
    print(f"{'library':<14}{library:>11}   ceiling {LIBRARY_BUDGET:,} (the package minus exercises/)")
    if library > LIBRARY_BUDGET:
        over.append(f"library {library:,} > {LIBRARY_BUDGET:,}")
    if sizes["exercises"] > EXERCISES_BUDGET:
        over.append(f"exercises/ {sizes['exercises']:,} > {EXERCISES_BUDGET:,}")
    if sizes["lessons"] > LESSONS_BUDGET:
        over.append(f"lessons/ {sizes['lessons']:,} > {LESSONS_BUDGET:,}")

    print(f"\n{'lesson':<24}{'cell lines':>11}{'teaching':>9}{'protocol':>9}{'helper-only':>12}{'share':>7}")
    shown = 0
    for name, (kinds, lines) in lesson_sizes().items():
        teaching = kinds["protocol"] + kinds["helper-only"]
        share = kinds["helper-only"] / teaching if teaching else 0.0
        shown += lines
        flag = "" if share <= HELPER_SHARE_BUDGET else "  OVER"
        print(f"{name:<24}{lines:>11}{teaching:>9}{kinds['protocol']:>9}{kinds['helper-only']:>12}{share:>7.0%}{flag}")
        if flag:
            over.append(f"{name}: helper-only {share:.0%} > {HELPER_SHARE_BUDGET:.0%}")
    print(f"\npackage / lessons' code: {total / shown:.1f}x ({total:,} / {shown:,} code lines)")
    for line in over:
        print("over budget:", line)
    return 1 if arguments.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
