"""Real nbgrader on a real lesson in a folder made by ``mcp-teach nbgrader-course``: generate the assignment,
submit one exercise right and one wrong, autograde.

The lessons carry nbgrader's cell metadata (mcp_teach.exercises.nbgrader_cells), so a course folder can use
them unchanged; the only setting the course needs is the stub that replaces a solution (one that does not
raise, so Run All on a released lesson runs to the end, as on the blank lessons of notebooks/).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook  # the instructor extra, part of the test extra

from mcp_teach.course.nbgrader_course import write_course
from mcp_teach.exercises.catalogue import expectations
from mcp_teach.exercises.convention import BEGIN, END, PLACEHOLDER, find_exercises

REPO = Path(__file__).resolve().parent.parent
LESSON = REPO / "notebooks" / "solutions" / "02_tools_list.ipynb"
ASSIGNMENT = LESSON.stem  # mcp-teach nbgrader-course names each assignment after its lesson
NBGRADER = [sys.executable, "-m", "nbgrader"]
STUB = "\n".join(PLACEHOLDER)


def nbgrader(course: Path, *args: str) -> None:
    """Run nbgrader with this environment's scripts on PATH (it runs ``alembic`` for its database)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    result = subprocess.run(
        [*NBGRADER, *args], cwd=course, capture_output=True, text=True, timeout=600, env={**os.environ, "PATH": path}
    )
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"


def without_markers(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if line.strip() not in (BEGIN, END))


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("course")
    write_course(course, [LESSON])  # what mcp-teach nbgrader-course writes
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    return course


def test_the_released_lesson_hides_every_solution(course):
    released = nbformat.read(course / "release" / ASSIGNMENT / LESSON.name, as_version=4)
    solved = nbformat.read(LESSON, as_version=4)
    for exercise in find_exercises(solved):
        blank = released.cells[exercise.solution].source
        assert BEGIN not in blank and STUB in blank
        assert solved.cells[exercise.solution].source != blank


def test_autograde_scores_right_wrong_and_blank(course):
    solved = nbformat.read(LESSON, as_version=4)
    right, wrong, blank = find_exercises(solved)[:3]
    submission = nbformat.read(course / "release" / ASSIGNMENT / LESSON.name, as_version=4)
    submission.cells[right.solution].source = without_markers(solved.cells[right.solution].source)
    first_answer = expectations(wrong.id).answers[0]
    submission.cells[wrong.solution].source = (
        without_markers(solved.cells[wrong.solution].source) + f"\n{first_answer} = 'not the answer'"
    )
    submitted = course / "submitted" / "student1" / ASSIGNMENT
    submitted.mkdir(parents=True)
    nbformat.write(submission, submitted / LESSON.name)

    nbgrader(course, "autograde", ASSIGNMENT, "--force")

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(LESSON.stem, ASSIGNMENT, "student1")
        scores = {grade.name: grade.score for grade in notebook.grades}
        possible = {grade.name: grade.max_score for grade in notebook.grades}
    right_id, wrong_id, blank_id = (f"exercise-{e.id.replace('.', '-')}-check" for e in (right, wrong, blank))
    assert scores[right_id] == possible[right_id] > 0
    assert scores[wrong_id] == 0
    assert scores[blank_id] == 0
