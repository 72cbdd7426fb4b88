"""Code a lesson teaches and a later lesson reuses is written in the lesson's cell and exported to the package.

A cell whose first line is ``# exported to mcp_teach/<path>.py`` is the source: every top-level statement of the
cell other than an import must appear in that module as a top-level statement with the same text (a function or
class with its decorators and docstring, an assignment). The module may hold more (plumbing, other cells' code);
a statement that differs fails here, naming the lesson, the cell and the statement. An exercise's solution cell
may be exported too: its ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines mark what the blank lesson leaves
out, and are not part of the code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from mcp_teach.exercises.convention import BEGIN, END

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^# exported to (mcp_teach/[\w/]+\.py)\s*$")


def _statements(source: str) -> dict[str, str]:
    """Top-level statements other than imports, by name (a def's or class's name, an assignment's targets)."""
    tree = ast.parse(source)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = node.name
            start = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
        else:
            name = ast.unparse(node.targets[0]) if isinstance(node, ast.Assign) else ast.unparse(node)
            start = node.lineno
        lines = source.splitlines()[start - 1 : node.end_lineno]
        found[name] = "\n".join(line.rstrip() for line in lines)
    return found


def exported_cells(notebook: Path) -> list[tuple[int, str, str]]:
    """``(cell number, module path, code)`` of every exporting cell of ``notebook``."""
    cells = nbformat.read(notebook, as_version=4).cells
    exported = []
    for number, cell in enumerate(cells):
        first, _, rest = cell.source.partition("\n")
        if cell.cell_type == "code" and (marker := MARKER.match(first)):
            code = "\n".join(line for line in rest.split("\n") if line.strip() not in (BEGIN, END))
            exported.append((number, marker.group(1), code))
    return exported


def differences(notebook: Path, root: Path = ROOT) -> list[str]:
    """What differs between each exporting cell of ``notebook`` and its module (empty: they agree)."""
    problems = []
    for number, module, code in exported_cells(notebook):
        path = root / module
        if not path.exists():
            problems.append(f"{notebook.name} cell {number}: exports to {module}, which does not exist")
            continue
        in_module = _statements(path.read_text(encoding="utf-8"))
        for name, text in _statements(code).items():
            if name not in in_module:
                problems.append(f"{notebook.name} cell {number}: {name} is not in {module}")
            elif in_module[name] != text:
                problems.append(f"{notebook.name} cell {number}: {name} differs from its copy in {module}")
    return problems


SOLVED = sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("notebook", SOLVED, ids=[path.stem for path in SOLVED])
def test_exported_cells_agree_with_the_package(notebook: Path) -> None:
    assert differences(notebook) == []


def test_the_course_exports_its_reused_code() -> None:
    modules = {module for notebook in SOLVED for _, module, _ in exported_cells(notebook)}
    assert "mcp_teach/llm/loop.py" in modules  # the tool loop, written in lesson 04, reused by 10 and 11


def _made_up(tmp_path: Path, cell: str, module: str) -> Path:
    (tmp_path / "mcp_teach").mkdir()
    (tmp_path / "mcp_teach" / "tiny.py").write_text(module, encoding="utf-8")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    path = tmp_path / "00_tiny.ipynb"
    nbformat.write(notebook, path)
    return path


MODULE = '''"""A module."""

import json

LIMIT = 3


def double(x: int) -> int:
    """Why."""
    return 2 * x


def plumbing() -> None:
    pass
'''


def test_a_cell_that_matches_its_module_passes(tmp_path: Path) -> None:
    cell = (
        "# exported to mcp_teach/tiny.py\nimport json\n\nLIMIT = 3\n\n\n"
        'def double(x: int) -> int:\n    """Why."""\n    return 2 * x\n'
    )
    assert differences(_made_up(tmp_path, cell, MODULE), tmp_path) == []


def test_a_cell_that_differs_from_its_module_fails(tmp_path: Path) -> None:
    cell = '# exported to mcp_teach/tiny.py\ndef double(x: int) -> int:\n    """Why."""\n    return x + x\n'
    assert differences(_made_up(tmp_path, cell, MODULE), tmp_path) == [
        "00_tiny.ipynb cell 0: double differs from its copy in mcp_teach/tiny.py"
    ]


def test_an_exported_solution_cell_is_compared_without_its_markers(tmp_path: Path) -> None:
    cell = (
        '# exported to mcp_teach/tiny.py\ndef double(x: int) -> int:\n    """Why."""\n'
        "    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
    )
    assert differences(_made_up(tmp_path, cell, MODULE), tmp_path) == []


def test_a_definition_missing_from_the_module_fails(tmp_path: Path) -> None:
    cell = "# exported to mcp_teach/tiny.py\nLIMIT = 4\n\ndef triple(x):\n    return 3 * x\n"
    assert differences(_made_up(tmp_path, cell, MODULE), tmp_path) == [
        "00_tiny.ipynb cell 0: LIMIT differs from its copy in mcp_teach/tiny.py",
        "00_tiny.ipynb cell 0: triple is not in mcp_teach/tiny.py",
    ]
