"""mcp_teach.exercises.l09: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

The right answers are not retyped here: each test runs the code of the exercise's solution cell in
``notebooks/solutions/09_server_requests.ipynb`` (top-level ``await`` included), in a namespace holding what the
lesson defined before it. Wrong answers are real ones too: servers and handlers run for real.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types
import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from fastmcp import Context, FastMCP
from fastmcp.client.logging import LogMessage
from fastmcp.exceptions import ToolError

from mcp_teach.client import teaching_client
from mcp_teach.exercises import ExerciseFailed, check
from mcp_teach.servers.assistant import ask_client, build_assistant_server, elicit_form

#: What the lesson has defined by the time its exercises start (the names their solution cells use).
LESSON = SolvedLesson(
    "09_server_requests.ipynb",
    {
        "Context": Context,
        "LogMessage": LogMessage,
        "ask_client": ask_client,
        "build_assistant_server": build_assistant_server,
        "elicit_form": elicit_form,
        "mcp_types": mcp_types,
        "teaching_client": teaching_client,
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
            "greet said Hello, Ada! then Hello, stranger! (2025-11-25: 2 × elicitation/create; "
            "2026-07-28: 2 × input_required)",
        ),
        ("09.2", "count_slowly -> ['25%', '50%', '75%', '100%']; no total -> ['1 so far', '2 so far', '3 so far']"),
        ("09.3", "backup: kept 'disk full', not 'starting backup'; of eight levels kept error, critical, alert"),
    ],
)
def test_the_lesson_solution_passes(run, capsys, exercise_id: str, said: str) -> None:
    namespace = run(run_solution, exercise_id)
    capsys.readouterr()
    check(exercise_id, namespace)
    out = capsys.readouterr().out
    assert said in out and f"✔ Exercise {exercise_id} passed" in out


# --- 09.1 ------------------------------------------------------------------------------------------------------


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


@pytest.mark.wrong_answer("09.1")
def test_09_1_a_decline_answered_wrongly_fails() -> None:
    message = failed_with("09.1", {"build_greeter": _greeter(stranger="Go away.")}, "after 'Ada', then a decline")
    assert "'Go away.'" in message


@pytest.mark.wrong_answer("09.1")
def test_09_1_a_tool_that_works_only_in_2025_fails() -> None:
    failed_with("09.1", {"build_greeter": _greeter(modern_aware=False)}, "over 2026-07-28", "first round")


@pytest.mark.wrong_answer("09.1")
def test_09_1_not_a_function_fails() -> None:
    with pytest.raises(ExerciseFailed, match="build_greeter: expected a function"):
        check("09.1", {"build_greeter": FastMCP("greeter")})


def _asking(reply: Any, properties: dict | None = None, required: tuple = ("name",), *, returns_question=True) -> Any:
    """A build_greeter whose greet asks with elicit_form (``properties``, ``required``), answers ``reply(answer)``."""

    def build_greeter() -> FastMCP:
        server = FastMCP("greeter", version="1.0.0")

        @server.tool
        async def greet(ctx: Context) -> str | mcp_types.InputRequiredResult:
            request = elicit_form("What is your name?", properties or {"name": {"type": "string"}}, list(required))
            answer = await ask_client(ctx, "name", request)
            if returns_question and isinstance(answer, mcp_types.InputRequiredResult):
                return answer
            return reply(answer)

        return server

    return build_greeter


def _named(greeting: Any) -> Any:
    """``reply``: the greeting for an accepted answer, "Hello, stranger!" otherwise."""
    return lambda answer: greeting(answer) if answer.action == "accept" else "Hello, stranger!"


def hint_of(message: str) -> str:
    """The hint of a failed check's feedback: the part that must name the mistake and never hold the answer."""
    return message.split("Hint:", 1)[1]


@pytest.mark.wrong_answer("09.1")
@pytest.mark.parametrize(
    ("build_greeter", "fragments"),
    [
        (
            _asking(lambda a: "Hello, stranger!" if a.action == "decline" else f"Hello, {a.content['name']}!"),
            ("after 'Grace', then a cancel", "a cancel, like a decline, carries no content"),
        ),
        (_asking(_named(lambda a: "Hello, Ada!")), ("'Hello, Grace!'", "whatever name the user typed")),
        (_asking(_named(lambda a: f"Hello, {a.content}!")), ("\"Hello, {'name': 'Ada'}!\"", "the form's fields")),
        (_asking(_named(lambda a: f"Hello, {a.content['name']}!"), required=()), ("its third lists the required",)),
        (
            _asking(_named(lambda a: f"Hello, {a.content['name']}!"), {"username": {"type": "string"}}, ("username",)),
            ("the requestedSchema", "'username'", "maps each property"),
        ),
        (
            _asking(_named(lambda a: f"Hello, {a.content['name']}!"), returns_question=False),
            ("over 2026-07-28", "'InputRequiredResult' object has no attribute", "not the user's yet"),
        ),
    ],
    ids=["decline-only-no-cancel", "name-typed-in", "content-not-its-field", "name-not-required", "another-property",
         "question-not-returned"],
)  # fmt: skip
def test_09_1_wrong_greeters_fail_with_the_hint_that_fits(build_greeter: Any, fragments: tuple[str, ...]) -> None:
    message = failed_with("09.1", {"build_greeter": build_greeter}, *fragments)
    assert "content['name']" not in hint_of(message) and "Hello, Grace!" not in hint_of(message)


# --- 09.2 ------------------------------------------------------------------------------------------------------


def _progress_answer(line: Any) -> dict[str, Any]:
    lines: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append(line(progress, total, message))

    return {"on_progress": on_progress, "progress_lines": lines}


@pytest.mark.wrong_answer("09.2")
def test_09_2_a_fraction_instead_of_a_percentage_fails() -> None:
    answer = _progress_answer(
        lambda progress, total, message: f"{progress / total}%" if total else f"{progress:g} so far"
    )
    failed_with("09.2", answer, "after count_slowly(n=4)", "['0.25%', '0.5%', '0.75%', '1.0%']", "whole number")


@pytest.mark.wrong_answer("09.2")
def test_09_2_a_handler_that_forgets_a_missing_total_fails() -> None:
    answer = _progress_answer(lambda progress, total, message: f"{round(100 * progress / total)}%" if total else "?")
    failed_with("09.2", answer, "reports no total", "['?', '?', '?']", "None")


@pytest.mark.wrong_answer("09.2")
def test_09_2_a_plain_function_fails() -> None:
    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    failed_with("09.2", {"on_progress": on_progress, "progress_lines": []}, "an async function", "async def")


@pytest.mark.wrong_answer("09.2")
@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        (  # count_slowly's n, typed into the handler
            lambda progress, total, message: f"{round(100 * progress / 4)}%" if total else f"{progress:g} so far",
            ("after count_slowly(n=5)", "'125%'", "not from a fixed n"),
        ),
        (
            lambda progress, total, message: f"{round(100 * progress / total)}%" if total else f"{progress} so far",
            ("reports no total", "'1.0 so far'", "the line shows 1"),
        ),
        (
            lambda progress, total, message: f"{100 * progress / total}%" if total else f"{progress:g} so far",
            ("after count_slowly(n=4)", "'25.0%'", "whole number"),
        ),
        (lambda progress, total, message: message, ("'step 1 of 4'", "from progress and total")),
    ],
    ids=["total-typed-in", "float-so-far", "percentage-with-decimals", "the-message"],
)
def test_09_2_wrong_lines_fail_with_the_hint_that_fits(line: Any, fragments: tuple[str, ...]) -> None:
    message = failed_with("09.2", _progress_answer(line), *fragments)
    assert "round(" not in hint_of(message)


@pytest.mark.wrong_answer("09.2")
def test_09_2_the_expected_lines_typed_in_fail() -> None:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    typed = {"on_progress": on_progress, "progress_lines": ["25%", "50%", "75%", "100%"]}
    failed_with("09.2", typed, "found []", "appended to progress_lines (the list the check empties)")


# --- 09.3 ------------------------------------------------------------------------------------------------------


def _backup(levels: tuple[str, str] = ("info", "error"), *, raises: bool = False) -> Any:
    def build_backup() -> FastMCP:
        server = FastMCP("backup", version="1.0.0")

        @server.tool
        async def backup(ctx: Context) -> str:
            await ctx.log("starting backup", level=levels[0])
            await ctx.log("disk full", level=levels[1])
            if raises:
                raise ToolError("Backup failed.")
            return "Backup failed."

        return server

    return build_backup


SEVERE = ("error", "critical", "alert", "emergency")


def _keeper(kept: tuple[str, ...], *, text: Any = lambda m: m.data["msg"], plain: bool = False) -> dict[str, Any]:
    errors: list[Any] = []

    async def keep_errors(message: LogMessage) -> None:
        if message.level in kept:
            errors.append(text(message))

    def keep_errors_plain(message: LogMessage) -> None:
        if message.level in kept:
            errors.append(text(message))

    return {"keep_errors": keep_errors_plain if plain else keep_errors, "errors": errors}


@pytest.mark.wrong_answer("09.3")
def test_09_3_a_handler_that_keeps_only_error_fails() -> None:
    answer = {"build_backup": _backup(), **_keeper(("error",))}
    failed_with("09.3", answer, "eight levels", "['at error']", "not the most severe")


@pytest.mark.wrong_answer("09.3")
def test_09_3_a_tool_logging_at_the_wrong_level_fails() -> None:
    answer = {"build_backup": _backup(("info", "warning")), **_keeper(("error", "critical", "alert", "emergency"))}
    failed_with("09.3", answer, "notifications/message backup sent", "('warning', 'disk full')", "log_levels")


@pytest.mark.wrong_answer("09.3")
def test_09_3_a_handler_that_keeps_everything_fails() -> None:
    answer = {"build_backup": _backup(), **_keeper(("debug", "info", "notice", "warning", "error"))}
    failed_with("09.3", answer, "errors after backup", "['starting backup', 'disk full']", "level")


@pytest.mark.wrong_answer("09.3")
@pytest.mark.parametrize(
    ("answer", "fragments"),
    [
        (  # levels compared as strings: "info" >= "error", "critical" < "error"
            {"build_backup": _backup(), **_keeper(("info", "notice", "warning", "error"))},
            ("errors after backup", "'starting backup'", "not alphabetical"),
        ),
        ({"build_backup": _backup(), **_keeper(SEVERE, text=lambda m: m.data)}, ("{'msg': 'disk full'", "data['msg']")),
        (
            {"build_backup": _backup(), **_keeper(SEVERE, text=lambda m: "disk full")},
            ("eight levels", "['disk full', 'disk full'", "not the most severe"),
        ),
        ({"build_backup": _backup(raises=True), **_keeper(SEVERE)}, ("(text, isError)", "True)", "raising fails")),
        ({"build_backup": _backup(), **_keeper(SEVERE, plain=True)}, ("an async function (a log handler)", "`async")),
    ],
    ids=["levels-compared-as-strings", "the-whole-data", "the-text-typed-in", "a-raising-tool", "a-plain-def"],
)  # fmt: skip
def test_09_3_wrong_answers_fail_with_the_hint_that_fits(answer: dict[str, Any], fragments: tuple[str, ...]) -> None:
    failed_with("09.3", answer, *fragments)
