"""mcp_teach.exercises.l09: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

The right answers are not retyped here: each test runs the code of the exercise's solution cell in
``notebooks/solutions/09_server_requests.ipynb`` (top-level ``await`` included), in a namespace holding what the
lesson defined before it. Wrong answers are real ones too: servers and captures made for real.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import mcp_types
import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from fastmcp import Context, FastMCP

from mcp_teach.client import teaching_client
from mcp_teach.exercises import ExerciseFailed, check
from mcp_teach.lessons.l09_server_requests import FormUser, Heard, ProgressBar
from mcp_teach.servers.assistant import ask_client, build_assistant_server, elicit_form
from mcp_teach.wire.capture import CaptureTransport

#: What the lesson has defined by the time its exercises start (the names their solution cells use).
LESSON = SolvedLesson(
    "09_server_requests.ipynb",
    {
        "CaptureTransport": CaptureTransport,
        "FormUser": FormUser,
        "Heard": Heard,
        "ProgressBar": ProgressBar,
        "build_assistant_server": build_assistant_server,
        "teaching_client": teaching_client,
        "warnings": warnings,
    },
)
run_solution = LESSON.run_solution


@pytest.mark.parametrize("exercise_id", ["09.1", "09.2", "09.3"])
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    LESSON.assert_answers_defined_nowhere_else()


@pytest.mark.parametrize(
    ("exercise_id", "said"),
    [
        (
            "09.1",
            "greet said Hello, Ada!, Hello, stranger! in both eras (2025-11-25: 2 × elicitation/create; "
            "2026-07-28: 2 × input_required)",
        ),
        ("09.2", "4 notifications/progress: [0.25, 0.5, 0.75, 1.0]"),
        ("09.3", "logging/setLevel error -> the server sent only the error message"),
    ],
)
def test_the_lesson_solution_passes(run, capsys, exercise_id: str, said: str) -> None:
    namespace = run(run_solution, exercise_id)
    capsys.readouterr()
    check(exercise_id, namespace)
    out = capsys.readouterr().out
    assert said in out and f"✔ Exercise {exercise_id} passed" in out


@dataclass
class Name:
    name: str


def _greeter(*, modern_aware: bool = True, stranger: str = "Hello, stranger!") -> Any:
    def build_greeter() -> FastMCP:
        server = FastMCP("greeter", version="1.0.0")

        @server.tool
        async def greet(ctx: Context) -> str | mcp_types.InputRequiredResult:
            if not modern_aware:  # fastmcp's own 2025-11-25 elicitation, which raises on 2026-07-28
                answer = await ctx.elicit("What is your name?", Name)
                return f"Hello, {answer.data.name}!" if answer.action == "accept" else stranger
            request = elicit_form("What is your name?", {"name": {"type": "string"}}, ["name"])
            answer = await ask_client(ctx, "name", request)
            if isinstance(answer, mcp_types.InputRequiredResult):
                return answer
            return f"Hello, {answer.content['name']}!" if answer.action == "accept" else stranger

        return server

    return build_greeter


def test_09_1_a_decline_answered_wrongly_fails() -> None:
    message = failed_with("09.1", {"build_greeter": _greeter(stranger="Go away.")}, "after 'Ada', then a decline")
    assert "'Go away.'" in message


def test_09_1_a_tool_that_works_only_in_2025_fails() -> None:
    message = failed_with("09.1", {"build_greeter": _greeter(modern_aware=False)}, "over 2026-07-28")
    assert "InputRequiredResult" in message


def test_09_1_not_a_function_fails() -> None:
    with pytest.raises(ExerciseFailed, match="build_greeter: expected a function"):
        check("09.1", {"build_greeter": FastMCP("greeter")})


def test_09_2_fractions_not_from_the_capture_fail(run) -> None:
    namespace = run(run_solution, "09.2")
    namespace["progress_fractions"] = [1, 2, 3, 4]  # the raw progress values, not progress / total
    failed_with("09.2", namespace, "progress_fractions", "[0.25, 0.5, 0.75, 1.0]")


def test_09_2_a_capture_without_progress_fails(run) -> None:
    async def no_handler() -> dict[str, Any]:
        capture = CaptureTransport(build_assistant_server())
        async with teaching_client(capture) as client:
            await client.call_tool("count_slowly", {"n": 3, "delay": 0})
        return {"count_capture": capture, "progress_fractions": []}

    failed_with("09.2", run(no_handler), "count_slowly with n = 4")


def test_09_3_a_modern_connection_fails(run) -> None:
    async def modern() -> dict[str, Any]:
        capture = CaptureTransport(build_assistant_server())
        heard = Heard()
        async with teaching_client(capture, log_handler=heard.log) as client:
            await client.call_tool("log_levels", {})
        return {"error_capture": capture, "heard_levels": [level for level, _ in heard.logs]}

    failed_with("09.3", run(modern), "a 2025-11-25 connection", 'mode="legacy"')


def test_09_3_the_wrong_level_fails(run, capsys) -> None:
    async def warning_level() -> dict[str, Any]:
        capture = CaptureTransport(build_assistant_server())
        heard = Heard()
        async with teaching_client(capture, mode="legacy", log_handler=heard.log) as client:
            with warnings.catch_warnings(action="ignore"):
                await client.set_logging_level("warning")
            await client.call_tool("log_levels", {})
        return {"error_capture": capture, "heard_levels": [level for level, _ in heard.logs]}

    failed_with("09.3", run(warning_level), "logging/setLevel levels sent", "['warning']")
