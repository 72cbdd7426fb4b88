"""Every check, whatever the student's code does, shows expected / found / hint: no traceback, no check internals,
no terminal colour codes, no answer; and a blank exercise, as a student's first Run All leaves it, is *not attempted
yet*, with no hint at all (mcp_teach.exercises.catalogue.check)."""

from __future__ import annotations

import ast
import builtins
import linecache
import re
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell

import mcp_teach
from mcp_teach.course.authoring import SOLUTIONS, lesson_notebooks
from mcp_teach.exercises.catalogue import GRADING_VARIABLE, check, expectations
from mcp_teach.exercises.check import Checker, ExerciseFailed, ExerciseNotAttempted
from mcp_teach.exercises.convention import BEGIN, END, find_exercises
from mcp_teach.exercises.student_copy import strip_solution

REPO = Path(__file__).resolve().parent.parent
PACKAGE = str(Path(mcp_teach.__file__).resolve().parent)
LESSONS = [nbformat.read(path, as_version=4) for path in lesson_notebooks(REPO / SOLUTIONS)]
#: Every exercise of every solved lesson: its solution cell's source, and the lesson's text a student reads.
SOLVED = {
    exercise.id: (
        notebook.cells[exercise.solution].source,
        "\n".join(cell.source for cell in notebook.cells if "solution" not in cell.metadata.get("tags", [])),
    )
    for notebook in LESSONS
    for exercise in find_exercises(notebook)
}
BUG = "the student's bug"


def sync_raises(*arguments: Any, **keywords: Any) -> Any:
    raise ValueError(BUG)


async def async_raises(*arguments: Any, **keywords: Any) -> Any:
    raise ValueError(BUG)


class Hostile:
    """An answer of no kind the check knows: every use of it raises."""

    def __getattr__(self, name: str) -> Any:
        raise ValueError(BUG)

    __call__ = __iter__ = __getitem__ = __eq__ = __str__ = __bool__ = sync_raises
    __hash__ = None  # type: ignore[assignment]


ANSWERS = {
    "a function that raises": lambda: sync_raises,
    "an async function that raises": lambda: async_raises,
    "a number": lambda: 42,
    "code that does not compile": lambda: "def broken(:\n",
    "an object whose every use raises": Hostile,
}


def flat(text: str) -> str:
    """``text`` without spaces and with one kind of quote."""
    return re.sub(r"\s", "", text).replace('"', "'")


def answer_lines(exercise_id: str) -> list[str]:
    """The solution's lines that tell something (long enough) the lesson does not say itself; a ``def`` or ``with``
    line (ending in ``:``) only gives the shape the task asks for."""
    source, lesson = SOLVED[exercise_id]
    block = source[source.index(BEGIN) : source.index(END)].splitlines()[1:]
    lines = [flat(line) for line in block if not line.strip().startswith("#")]
    return [line for line in lines if len(line) >= 30 and not line.endswith(":") and line not in flat(lesson)]


def assert_reveals_no_answer(exercise_id: str, shown: str) -> None:
    assert not [line for line in answer_lines(exercise_id) if line in flat(shown)], shown


def test_every_exercise_is_tried() -> None:
    assert len(SOLVED) >= 45 and all(expectations(exercise_id) for exercise_id in SOLVED)


@pytest.mark.parametrize("exercise_id", sorted(SOLVED))
def test_whatever_the_answer_raises_the_check_shows_feedback_alone(exercise_id: str, capsys) -> None:
    """Run as a notebook runs a check cell: what IPython prints is all the student sees."""
    shell = InteractiveShell.instance()
    shell.run_cell("from mcp_teach.exercises.catalogue import check")
    for kind, answer in ANSWERS.items():
        shell.user_ns.update({name: answer() for name in expectations(exercise_id).answers})
        failed = shell.run_cell(f'check("{exercise_id}")').error_in_exec
        shown = "".join(capsys.readouterr())
        assert isinstance(failed, ExerciseFailed), (kind, shown)
        labels = [line.split(":")[0].strip() for line in failed.lines]
        assert labels[1:3] == ["expected", "found"] and "hint" in labels[3:], (kind, shown)
        assert "Traceback" not in shown and PACKAGE not in shown and "mcp_teach/" not in shown, (kind, shown)
        assert "\x1b" not in str(failed) + "".join(failed.lines), (kind, shown)
        assert_reveals_no_answer(exercise_id, shown)


def test_the_feedback_names_the_line_of_the_students_code_and_the_error_inside_a_group() -> None:
    async def gated_call(mcp: Any, call: Any) -> None:
        raise ExceptionGroup("a task group's", [KeyError("calculator_add")])

    with pytest.raises(ExerciseFailed) as failed:
        check("04.1", {"gated_call": gated_call, "gated": None})
    assert "found:    it raised KeyError: 'calculator_add' in gated_call, line" in "\n".join(failed.value.lines)
    assert 'raise ExceptionGroup("a task group\'s"' in str(failed.value) and "fix that line" in str(failed.value)


class EarlierCells(dict):
    """A blank solution cell's local names; anything the lesson's earlier cells define is a stand-in."""

    def __missing__(self, name: str) -> Any:
        if hasattr(builtins, name):
            raise KeyError(name)
        return MagicMock(name=name)


def first_run_all(exercise_id: str) -> dict[str, Any]:
    """What the blank lesson's solution cell of ``exercise_id`` defines when it runs (placeholder and all)."""
    source, cell = strip_solution(SOLVED[exercise_id][0]), f"<cell {exercise_id}>"
    if source.startswith("%%"):  # a cell magic (lesson 13's %%server_part): the kernel runs the cell's body
        source = source.partition("\n")[2]
    linecache.cache[cell] = (len(source), None, source.splitlines(keepends=True), cell)  # as IPython keeps a cell's
    code = compile(source, cell, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    defined = EarlierCells()
    exec(code, {"__builtins__": builtins}, defined)
    return dict(defined)


@pytest.mark.parametrize("exercise_id", sorted(SOLVED))
def test_a_blank_exercise_is_not_attempted_yet_and_gives_no_hint(exercise_id: str, capsys, monkeypatch) -> None:
    blank = first_run_all(exercise_id)
    check(exercise_id, blank)
    shown = capsys.readouterr().out
    assert shown.startswith(f"Exercise {exercise_id} — not attempted yet") and "hint" not in shown.lower(), shown
    assert_reveals_no_answer(exercise_id, shown)
    monkeypatch.setenv(GRADING_VARIABLE, "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, blank)


def test_a_stub_that_still_raises_not_implemented_is_not_attempted(capsys, monkeypatch) -> None:
    def classify(message: dict) -> str:
        raise NotImplementedError

    check("01.2", {"classify": classify, "legacy_counts": {}, "modern_counts": {}})
    assert "01.2 — not attempted yet" in capsys.readouterr().out
    monkeypatch.setenv(GRADING_VARIABLE, "autograde")
    with pytest.raises(ExerciseNotAttempted, match="no longer raises NotImplementedError"):
        check("01.2", {"classify": classify, "legacy_counts": {}, "modern_counts": {}})


def test_terminal_colours_never_reach_the_feedback_and_every_failure_has_a_hint() -> None:
    failure = Checker("14.2").failure("your tests", "every test passes", "\x1b[31mE   SyntaxError\x1b[0m")
    assert str(failure) == (
        "Exercise 14.2 — your tests: expected every test passes, found E   SyntaxError. "
        "Hint: the task above says what your tests should be"
    )


def test_tests_that_do_not_compile_are_told_so_with_their_line() -> None:
    with pytest.raises(ExerciseFailed) as failed:
        check("14.2", {"BAD_NAME_TESTS": "import pytest\n\n\ndef test_bad_name(:\n    pass\n"})
    assert "expected Python that compiles, found it raised SyntaxError: invalid syntax (BAD_NAME_TESTS, line 4)" in (
        str(failed.value)
    )
