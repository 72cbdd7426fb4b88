"""No solved lesson builds a view and drops it: a cell shows only its last expression.

A view is what ``show``, ``show_trace``, ``table``, ``summary``, ``show_http`` and the other display helpers
return: an object Jupyter renders (``_repr_html_``, ``_repr_pretty_``, a figure, a widget). Called as a
statement that is not the cell's last (or inside a loop, a ``with``, an ``if``), its value is dropped and the
reader sees nothing: lesson 09 once explained a message that ``show(reports[0])`` never showed. Which names build
views is read from the package (each public function and class of ``mcp_teach.display`` and
``mcp_teach.lessons`` whose return annotation is a displayable class), then matched to what each lesson imports.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import typing
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

import mcp_teach.display
import mcp_teach.lessons

ROOT = Path(__file__).resolve().parents[1]
SOLVED = sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))
#: What makes an object something Jupyter renders.
DISPLAY_HOOKS = ("_repr_html_", "_repr_pretty_", "_repr_mimebundle_", "_ipython_display_", "_repr_png_", "savefig")


def _is_view_class(value: object) -> bool:
    return inspect.isclass(value) and any(hasattr(value, hook) for hook in DISPLAY_HOOKS)


def _returns_a_view(function: object) -> bool:
    """True if ``function``'s return annotation names a displayable class (resolved in its module)."""
    annotation = inspect.signature(function).return_annotation
    if annotation is inspect.Signature.empty:
        return False
    if isinstance(annotation, str):
        module = importlib.import_module(function.__module__)
        names = [part for part in annotation.replace("|", " ").replace("[", " ").replace("]", " ").split() if part]
        found = [typing.cast(object, getattr(module, name.split(".")[-1], None)) for name in names]
        return any(_is_view_class(value) for value in found)
    return _is_view_class(annotation)


def _modules(package) -> Iterator[object]:
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        yield importlib.import_module(info.name)


def view_builders() -> set[object]:
    """Every public function (or class) of ``mcp_teach.display`` and ``mcp_teach.lessons`` that builds a view."""
    found = set()
    for module in [*_modules(mcp_teach.display), *_modules(mcp_teach.lessons)]:
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if (inspect.isfunction(value) and _returns_a_view(value)) or _is_view_class(value):
                found.add(value)
    return found


def python_of(cell_source: str) -> str:
    """A code cell's source as Python: each IPython magic or shell line (``%pip ...``, ``!ls``) becomes ``pass``;
    of a cell magic's cell, lesson 13's ``%%server_part`` runs its body as Python, any other (``%%project_file``,
    a file's text) is no Python at all."""
    if cell_source.startswith("%%"):
        first, _, body = cell_source.partition("\n")
        return body if first.startswith("%%server_part") else "pass"
    return "\n".join(
        line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
        for line in cell_source.splitlines()
    )


def view_names(sources: list[str], builders: set[object]) -> set[str]:
    """The names the lesson binds to a view builder with ``from mcp_teach... import name [as other]``."""
    names = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mcp_teach"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if id(getattr(module, alias.name, None)) in {id(builder) for builder in builders}:
                        names.add(alias.asname or alias.name)
    return names


def _called_name(expression: ast.expr) -> str | None:
    if isinstance(expression, ast.Await):
        expression = expression.value
    if isinstance(expression, ast.Call) and isinstance(expression.func, ast.Name):
        return expression.func.id
    return None


def dropped_views(source: str, names: set[str]) -> list[str]:
    """Each statement of a cell that calls a view builder and drops its value (not the cell's last expression)."""
    tree = ast.parse(source)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and node is not last and _called_name(node.value) in names
    ]


def test_the_check_finds_a_dropped_view_and_only_that():
    names = {"show", "table"}
    cell = "show(a)\nx = show(b)\ndisplay(show(c))\nfor r in rows:\n    table(r)\nprint(1)\nshow(d)"
    assert dropped_views(cell, names) == ["show(a)", "table(r)"]
    assert dropped_views("await show(a)\nprint(2)", names) == ["await show(a)"]
    assert dropped_views("show(a)", names) == []


def test_the_package_views_are_found():
    builders = view_builders()
    from mcp_teach.display.http_views import show_http
    from mcp_teach.display.show import show, show_trace, summary, table

    assert {show, show_trace, summary, table, show_http} <= builders
    from mcp_teach.display.call_outcomes import explain

    assert explain not in builders  # a string is printed by the cell, not rendered: not a view


@pytest.mark.parametrize("notebook", SOLVED, ids=[path.stem for path in SOLVED])
def test_no_solved_lesson_builds_a_view_and_drops_it(notebook: Path):
    cells = [
        (number, python_of(cell.source))
        for number, cell in enumerate(nbformat.read(notebook, as_version=4).cells)
        if cell.cell_type == "code"
    ]
    names = view_names([source for _, source in cells], view_builders())
    dropped = [(number, statement) for number, source in cells for statement in dropped_views(source, names)]
    assert dropped == [], (
        f"{notebook.name}: these views are built and dropped (wrap each in display(...), or make it the cell's "
        f"last expression): {dropped}"
    )
