"""mcp_teach.exercises.check: a failed check shows expected / found / hint, and not the checker's traceback."""

from __future__ import annotations

import asyncio
import logging

import pytest
from fastmcp import Client, FastMCP
from IPython.core.interactiveshell import InteractiveShell

from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import check, exercise
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
        "Exercise 01.3 — broken(2): expected a number, found it raised ValueError: no 2 in broken, line "
        f'{broken.__code__.co_firstlineno + 1}: raise ValueError(f"no {{value}}"). Hint: return the number'
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


@exercise("99.2", answers=("handler",))
def waits_for_the_answer(check: Checker, handler: object) -> None:
    run_sync(handler(), timeout=0.2)


def test_a_check_whose_answer_never_returns_ends_in_feedback_in_time(capsys) -> None:
    async def waits_forever() -> None:
        await asyncio.Event().wait()

    with pytest.raises(ExerciseFailed) as failed:
        check("99.2", {"handler": waits_forever})
    assert "expected it to finish within 0.2 s, found it was still waiting" in str(failed.value)
    assert "never returns" in str(failed.value)


def test_a_checks_servers_log_nothing_into_the_cell(capsys) -> None:
    async def a_failing_tool() -> str:
        server = FastMCP("noisy")

        @server.tool
        def broken() -> str:
            raise RuntimeError("the student's bug")

        async with Client(server) as client:
            result = await client.call_tool("broken", {}, raise_on_error=False)
        return result.content[0].text

    assert "the student's bug" in run_sync(a_failing_tool())
    assert "Traceback" not in capsys.readouterr().err
    assert logging.getLogger("mcp").level == logging.NOTSET  # as it was before the check
