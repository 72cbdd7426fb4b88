"""Student copies: solutions replaced at the markers' indentation, exercise outputs cleared, idempotent, safe."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from exercise_support import demo_lesson, plain_notebook, solution_cell, write

from mcp_teach import cli
from mcp_teach.exercises.convention import ConventionError, find_exercises
from mcp_teach.exercises.student_copy import strip_solution, student_notebook


def test_strip_solution_keeps_what_is_outside_the_markers_and_their_indentation():
    source = "import json\n\nasync def go():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n\nprint(go)"
    assert strip_solution(source) == ("import json\n\nasync def go():\n    # YOUR CODE HERE\n    pass\n\nprint(go)")


def test_strip_solution_replaces_every_block():
    source = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = a\n### BEGIN SOLUTION\nc = 2\n### END SOLUTION"
    placeholder = "# YOUR CODE HERE\npass"
    assert strip_solution(source) == f"{placeholder}\nb = a\n{placeholder}"


@pytest.mark.parametrize(
    "source",
    [
        "### BEGIN SOLUTION\na = 1",
        "a = 1\n### END SOLUTION",
        "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION",
    ],
    ids=["begin-without-end", "end-without-begin", "nested"],
)
def test_unbalanced_markers_are_refused(source):
    with pytest.raises(ConventionError, match="SOLUTION"):
        strip_solution(source, "cell 3")


def test_student_notebook_clears_exercise_outputs_and_keeps_the_lesson():
    teaching = demo_lesson()
    student, solutions = student_notebook(teaching)
    assert solutions == 6
    assert student is not teaching and teaching.cells[5].outputs  # the original is untouched
    for exercise in find_exercises(student):
        for index in (exercise.solution, exercise.check):
            assert student.cells[index].outputs == [] and student.cells[index].execution_count is None
        assert student.cells[exercise.check].source == teaching.cells[exercise.check].source
    assert student.cells[1] == teaching.cells[1]  # a teaching cell keeps its source and output
    assert [c.source for c in student.cells if c.cell_type == "markdown"] == [
        c.source for c in teaching.cells if c.cell_type == "markdown"
    ]
    assert solution_cell(student, "99.1").source == "# YOUR CODE HERE\npass"
    assert solution_cell(student, "99.2").source == "# YOUR CODE HERE\npass"


def test_a_cell_that_runs_the_solutions_loses_its_solved_output():
    teaching = demo_lesson()
    judged = nbformat.v4.new_code_cell(
        "print(judge(build_server()))",
        metadata={"tags": ["solved-output"]},
        outputs=[nbformat.v4.new_output("stream", text="37/37 scenarios passed\n")],
        execution_count=9,
    )
    teaching.cells.append(judged)
    student, _ = student_notebook(teaching)
    assert student.cells[-1].source == judged.source
    assert student.cells[-1].outputs == [] and student.cells[-1].execution_count is None
    assert teaching.cells[-1].outputs  # the solved lesson keeps its run


def test_a_solution_cell_without_markers_is_refused():
    teaching = demo_lesson()
    solution_cell(teaching, "99.3").source = "squares = [n * n for n in numbers]"
    with pytest.raises(ConventionError, match="would contain the solution"):
        student_notebook(teaching)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    folder = tmp_path / "notebooks"
    write(demo_lesson(), folder / "01_demo.ipynb")
    write(plain_notebook(), folder / "00_notes.ipynb")
    return folder


def test_cli_writes_copies_prints_them_and_is_idempotent(course, tmp_path, capsys):
    out = tmp_path / "student"
    assert cli.main(["student-copy", str(course), "-o", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"wrote {out / '00_notes.ipynb'} (no exercises: copied unchanged)",
        f"wrote {out / '01_demo.ipynb'} (6 exercises, solutions replaced)",
    ]
    assert (out / "00_notes.ipynb").read_bytes() == (course / "00_notes.ipynb").read_bytes()
    copy = nbformat.read(out / "01_demo.ipynb", as_version=4)
    assert "BEGIN SOLUTION" not in nbformat.writes(copy) and "product *= n" not in nbformat.writes(copy)
    nbformat.validate(copy)

    again = tmp_path / "again"
    assert cli.main(["student-copy", str(out), "-o", str(again)]) == 0
    assert "already a student copy: copied unchanged" in capsys.readouterr().out
    for name in ("00_notes.ipynb", "01_demo.ipynb"):
        assert (again / name).read_bytes() == (out / name).read_bytes()


def test_cli_accepts_single_notebooks(course, tmp_path, capsys):
    out = tmp_path / "one"
    assert cli.main(["student-copy", str(course / "01_demo.ipynb"), "-o", str(out)]) == 0
    assert [p.name for p in out.iterdir()] == ["01_demo.ipynb"]
    assert "solutions replaced" in capsys.readouterr().out


@pytest.mark.parametrize("target", [".", "student"], ids=["the-source-folder", "inside-it"])
def test_cli_refuses_to_write_into_the_source_folder(course, capsys, target):
    before = sorted(p.name for p in course.iterdir())
    assert cli.main(["student-copy", str(course), "-o", str(course / target)]) == 2
    assert "refusing to write student copies" in capsys.readouterr().err
    assert sorted(p.name for p in course.iterdir()) == before
    assert not (course / "student").exists()


def test_cli_writes_nothing_if_a_notebook_is_malformed(course, tmp_path, capsys):
    broken = demo_lesson()
    solution_cell(broken, "99.2").source = "def largest(values):\n    ### BEGIN SOLUTION\n    return max(values)"
    write(broken, course / "02_broken.ipynb")
    out = tmp_path / "student"
    assert cli.main(["student-copy", str(course), "-o", str(out)]) == 2
    assert "without '### END SOLUTION'" in capsys.readouterr().err
    assert not out.exists()
