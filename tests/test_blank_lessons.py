"""The blank lessons students open are generated from notebooks/solutions/ and never stale (course.authoring)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from mcp_teach.course.authoring import NOTEBOOKS, SOLUTIONS, lesson_notebooks, stale_lessons
from mcp_teach.exercises.convention import BEGIN, CHECK, END, PLACEHOLDER, SOLUTION, find_exercises, tags

REPO = Path(__file__).resolve().parent.parent
SOLVED = lesson_notebooks(REPO / SOLUTIONS)
BLANK = lesson_notebooks(REPO / NOTEBOOKS)


def test_every_solved_lesson_has_its_blank_twin_and_no_other():
    assert SOLVED, "no lessons in notebooks/solutions/"
    assert [path.name for path in BLANK] == [path.name for path in SOLVED]


def test_nothing_is_stale(monkeypatch):
    """Fails after an edit of a solved lesson without rebuilding: run `mcp-teach build-lessons` and commit."""
    monkeypatch.chdir(REPO)
    assert list(stale_lessons()) == [], "run `.venv/bin/mcp-teach build-lessons` (or `execute-notebooks`) and commit"


@pytest.mark.parametrize("path", BLANK, ids=lambda path: path.stem)
def test_blank_lessons_show_no_solution(path):
    notebook = nbformat.read(path, as_version=4)
    for exercise in find_exercises(notebook):
        solution, check = notebook.cells[exercise.solution], notebook.cells[exercise.check]
        assert BEGIN not in solution.source and END not in solution.source
        assert all(line in solution.source for line in PLACEHOLDER)
        for cell in (solution, check):
            assert cell.outputs == [] and cell.execution_count is None
        assert check.source == f'check("{exercise.id}")', "a check cell is one line and shows no expected value"


@pytest.mark.parametrize("path", SOLVED, ids=lambda path: path.stem)
def test_solved_lessons_carry_nbgrader_metadata(path):
    notebook = nbformat.read(path, as_version=4)
    exercises = find_exercises(notebook)
    assert len(exercises) >= 3, "a lesson ends with 3-4 exercises"
    ids = set()
    for exercise in exercises:
        solution = notebook.cells[exercise.solution].metadata["nbgrader"]
        check = notebook.cells[exercise.check].metadata["nbgrader"]
        assert solution["solution"] is True and solution["grade"] is False
        assert check["grade"] is True and check["points"] > 0 and check["locked"] is True
        ids |= {solution["grade_id"], check["grade_id"]}
    assert len(ids) == 2 * len(exercises)
    for cell in notebook.cells:
        if "nbgrader" in cell.metadata and cell.cell_type == "code":
            assert {SOLUTION, CHECK} & set(tags(cell)), "only exercise cells are nbgrader cells"
