"""mcp_teach.exercises.check: a failed check shows expected / found / hint, and not the checker's traceback."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker, ExerciseFailed

FAILING_CELL = 'Checker("01.3").equal(3, 2, "the number of requests", hint="a request has an id")'


def test_the_message_names_what_was_expected_and_found() -> None:
    with pytest.raises(ExerciseFailed) as failed:
        Checker("01.3").equal(3, 2, "the number of requests", hint="a request has an id")
    assert str(failed.value) == (
        "Exercise 01.3 — the number of requests: expected 2, found 3. Hint: a request has an id"
    )


def test_a_notebook_shows_the_feedback_alone(capsys: pytest.CaptureFixture[str]) -> None:
    shell = InteractiveShell.instance()
    shell.run_cell("from mcp_teach.exercises.check import Checker")
    result = shell.run_cell(FAILING_CELL)
    shown = capsys.readouterr().out
    assert isinstance(result.error_in_exec, ExerciseFailed)  # still an error: nbgrader scores it 0
    assert "Exercise 01.3 — the number of requests" in shown
    assert "expected: 2" in shown and "found:    3" in shown and "hint:     a request has an id" in shown
    assert "Traceback" not in shown and "check.py" not in shown  # no frames into the package


def test_an_answer_that_raises_fails_with_the_exception() -> None:
    def broken(value: int) -> int:
        raise ValueError(f"no {value}")

    assert Checker("01.3").runs(abs, -2, what="abs(-2)", expected="a number") == 2
    with pytest.raises(ExerciseFailed) as failed:
        Checker("01.3").runs(broken, 2, what="broken(2)", expected="a number", hint="return the number")
    assert str(failed.value) == (
        "Exercise 01.3 — broken(2): expected a number, found it raised ValueError: no 2. Hint: return the number"
    )


def test_a_plain_function_where_an_async_one_is_asked_for_fails_before_it_is_awaited() -> None:
    async def gate(call: str) -> str:
        return call

    def plain(call: str) -> str:
        return call

    Checker("04.1").async_function(gate, "gated_call", expected="an async function")
    with pytest.raises(ExerciseFailed) as failed:
        Checker("04.1").async_function(plain, "gated_call", expected="an async function", hint="async def gated_call")
    assert str(failed.value).startswith("Exercise 04.1 — gated_call: expected an async function, found <function")
    assert str(failed.value).endswith("Hint: async def gated_call")


@exercise("99.1", answers=("answer",))
def fails_while_handling_an_exception_group(check: Checker, answer: object) -> None:
    try:
        raise ExceptionGroup("what a client raises", [OSError("connection closed")])
    except ExceptionGroup:
        check.fail("the answer", "a server that answers", "it closed the connection", "start it by hand")


def test_a_check_that_fails_while_handling_an_error_still_shows_the_feedback_alone(capsys) -> None:
    """An ExceptionGroup as a failure's context makes IPython print the whole chain: check() raises it afresh."""
    shell = InteractiveShell.instance()
    shell.run_cell("from mcp_teach.exercises.catalogue import check\nanswer = 1")
    result = shell.run_cell('check("99.1")')
    shown = capsys.readouterr().out
    assert isinstance(result.error_in_exec, ExerciseFailed) and result.error_in_exec.__context__ is None
    assert "expected: a server that answers" in shown and "hint:     start it by hand" in shown
    assert "Exception Group" not in shown and "Traceback" not in shown
