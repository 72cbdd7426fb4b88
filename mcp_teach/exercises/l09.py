"""Lesson 09's exercises (when the server needs the client): what each one expects, for ``check("09.k")``.

- 09.1: ``build_greeter()``, a server whose tool elicits the user's name, in both eras: the check connects to
  a fresh one with ``mode="legacy"`` and ``"auto"``, answers "Ada" and then declines, and reads the wire
  (``elicitation/create`` mid-call in 2025-11-25, ``input_required`` and a retry in 2026-07-28); then it answers
  another name and cancels;
- 09.2: ``on_progress``, a progress handler writing ``progress_lines``: run against the assistant server's
  ``count_slowly`` with n = 4 and 5 (with a total) and a tool of the check's own that reports none;
- 09.3: ``build_backup()``, a server whose tool logs, and ``keep_errors``, a log handler keeping the messages from
  ``error`` up in ``errors``: run against the student's server and one that logs at every RFC 5424 level.

The checks are synchronous; they run their clients with :func:`run_sync`.
"""

from __future__ import annotations

from typing import Any

from fastmcp import Context, FastMCP
from fastmcp.client.elicitation import ElicitResult

from mcp_teach.client import teaching_client
from mcp_teach.exercises.answers import result_text, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import say
from mcp_teach.servers.assistant import build_assistant_server
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import SERVER_TO_CLIENT, Capture

#: What 09.1's check answers, in order, and what greet must then return; then once more, another name and a cancel
#: (a greeting typed in, or a cancel read as an answer, shows there).
GREETINGS = [({"name": "Ada"}, "Hello, Ada!"), (ElicitResult(action="decline"), "Hello, stranger!")]
OTHER_GREETINGS = [({"name": "Grace"}, "Hello, Grace!"), (ElicitResult(action="cancel"), "Hello, stranger!")]
#: Every RFC 5424 level, least severe first (server/utilities/logging), and those 09.3's handler keeps.
ALL_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
SEVERE = ALL_LEVELS[4:]


async def _greet_twice(server: FastMCP, mode: str, rounds: list[tuple] = GREETINGS) -> tuple[list[str], Capture]:
    answers = [answer for answer, _ in rounds]

    async def elicit(message: str, response_type: Any, params: Any, context: Any) -> Any:
        return answers.pop(0)

    capture = CaptureTransport(server)
    async with teaching_client(capture, mode=mode, elicitation_handler=elicit) as client:
        said = []
        for _ in rounds:
            result = await client.call_tool("greet", {}, raise_on_error=False)
            said.append(result_text(result))
    return said, capture.capture


@exercise("09.1", answers=("build_greeter",))
def tool_that_elicits(check: Checker, build_greeter: Any) -> None:
    check.function(
        build_greeter, "build_greeter", hint="build_greeter is a function that makes a server and returns it"
    )
    server = build_greeter()
    check.instance(server, FastMCP, "build_greeter()", hint="return the FastMCP server the function built")
    found = []
    for mode, era in (("legacy", "2025-11-25"), ("auto", "2026-07-28")):
        said, capture = run_sync(_greet_twice(build_greeter(), mode))
        asked = capture.requests("elicitation/create")
        required = [
            w.message["result"]
            for w in capture
            if w.direction == SERVER_TO_CLIENT and w.message.get("result", {}).get("resultType") == "input_required"
        ]
        questions = [w.message for w in asked] + [q for r in required for q in r.get("inputRequests", {}).values()]
        schema = questions[0]["params"]["requestedSchema"] if questions else {}
        check.true(not questions or (schema.get("properties", {}).get("name", {}).get("type") == "string"
                                     and "name" in schema.get("required", [])),
                   "the requestedSchema", expected="a required string property 'name'", found=schema,
                   hint="elicit_form's second argument maps each property to its JSON Schema; its third lists the "
                   "required")  # fmt: skip
        check.equal(
            said,
            [text for _, text in GREETINGS],
            f"what greet returned over {era} after 'Ada', then a decline",
            hint="look at answer.action first; only an accepted answer has content, the form's fields. In 2026-07-28 "
            "the first round's answer is not the user's yet: see what convert_length does with it",
        )
        if mode == "legacy":
            check.equal(
                len(asked), 2, f"elicitation/create requests from the server over {era}", hint="greet asks every call"
            )
        else:
            check.equal(
                len(asked), 0, f"server requests over {era}", hint="ctx.elicit is 2025-11-25 only; section 1's helper"
            )
            check.equal(
                len(required), 2, f"input_required results over {era}", hint="the tool returns the question itself"
            )
        found.append(f"{era}: {len(asked) or len(required)} × {'elicitation/create' if asked else 'input_required'}")
    said, _ = run_sync(_greet_twice(build_greeter(), "auto", OTHER_GREETINGS))
    check.equal(said, [text for _, text in OTHER_GREETINGS], "what greet returned after 'Grace', then a cancel",
                hint="greet whatever name the user typed; a cancel, like a decline, carries no content")  # fmt: skip
    say(f"greet said {' then '.join(text for _, text in GREETINGS)} ({'; '.join(found)})")


def _no_total_server() -> FastMCP:
    server = FastMCP("no-total", version="1.0.0")

    @server.tool
    async def crawl(ctx: Context) -> str:
        """Report three steps of a job whose end is not known."""
        for step in (1, 2, 3):
            await ctx.report_progress(step)
        return "crawled"

    return server


async def _progress_lines(server: FastMCP, tool: str, arguments: dict[str, Any], handler: Any, lines: list) -> list:
    lines.clear()
    async with teaching_client(server, progress_handler=handler) as client:
        await client.call_tool(tool, arguments)
    return list(lines)


@exercise("09.2", answers=("on_progress", "progress_lines"))
def progress_handler(check: Checker, on_progress: Any, progress_lines: Any) -> None:
    check.async_function(
        on_progress,
        "on_progress",
        expected="an async function (a progress handler)",
        hint="a handler is an `async def` with the signature shown in the task",
    )
    check.instance(progress_lines, list, "progress_lines", hint="a list your handler appends to")
    counted = run_sync(
        _progress_lines(build_assistant_server(), "count_slowly", {"n": 4, "delay": 0}, on_progress, progress_lines)
    )
    check.equal(
        counted,
        ["25%", "50%", "75%", "100%"],
        "progress_lines after count_slowly(n=4)",
        hint="one line per notification, appended to progress_lines (the list the check empties), from progress "
        "and total (floats); the percentage is a whole number",
    )
    fifths = run_sync(_progress_lines(build_assistant_server(), "count_slowly", {"n": 5, "delay": 0}, on_progress,
                                      progress_lines))  # fmt: skip
    check.equal(fifths, ["20%", "40%", "60%", "80%", "100%"], "progress_lines after count_slowly(n=5)",
                hint="the percentage comes from the total each notification carries, not from a fixed n")  # fmt: skip
    crawled = run_sync(_progress_lines(_no_total_server(), "crawl", {}, on_progress, progress_lines))
    check.equal(
        crawled,
        ["1 so far", "2 so far", "3 so far"],
        "progress_lines after a tool that reports no total",
        hint="total is None when the server sends none; progress arrives as a float (1.0) and the line shows 1",
    )
    say(f"count_slowly -> {counted}; no total -> {crawled}")


def _every_level_server() -> FastMCP:
    server = FastMCP("every-level", version="1.0.0")

    @server.tool
    async def log_all(ctx: Context) -> str:
        """Log once at each RFC 5424 level."""
        for level in ALL_LEVELS:
            await ctx.log(f"at {level}", level=level)
        return "logged"

    return server


def _level_and_text(params: dict[str, Any]) -> tuple[Any, Any]:
    data = params.get("data")
    return params.get("level"), data.get("msg") if isinstance(data, dict) else data


async def _log_run(server: FastMCP, tool: str, handler: Any, errors: list) -> tuple[Any, Capture]:
    errors.clear()
    capture = CaptureTransport(server)
    async with teaching_client(capture, log_handler=handler) as client:
        result = await client.call_tool(tool, {}, raise_on_error=False)
    return result, capture.capture


@exercise("09.3", answers=("build_backup", "keep_errors", "errors"))
def errors_only(check: Checker, build_backup: Any, keep_errors: Any, errors: Any) -> None:
    check.function(build_backup, "build_backup", hint="build_backup makes a server and returns it")
    server = build_backup()
    check.instance(server, FastMCP, "build_backup()", hint="return the FastMCP server the function built")
    check.async_function(
        keep_errors,
        "keep_errors",
        expected="an async function (a log handler)",
        hint="a handler is an `async def` taking one LogMessage",
    )
    check.instance(errors, list, "errors", hint="a list your handler appends to")
    result, capture = run_sync(_log_run(server, "backup", keep_errors, errors))
    check.equal((result_text(result), result.is_error), ("Backup failed.", False),
                "what backup returned (text, isError)",
                hint="the tool's return value is its answer: return the text, as raising fails the call")  # fmt: skip
    sent = [_level_and_text(w.message["params"]) for w in capture if w.method == "notifications/message"]
    check.equal(
        sent,
        [("info", "starting backup"), ("error", "disk full")],
        "the notifications/message backup sent (level, text)",
        hint="log_levels in section 7 shows how a tool logs at a level",
    )
    check.equal(list(errors), ["disk full"], "errors after backup",
                hint="keep a message's text (message.data['msg']) by its level: info is below error in section 7's "
                "table, whose order is not alphabetical")  # fmt: skip
    run_sync(_log_run(_every_level_server(), "log_all", keep_errors, errors))
    check.equal(
        list(errors),
        [f"at {level}" for level in SEVERE],
        "errors after a tool that logs once at each of the eight levels",
        hint="error is not the most severe level: the table in section 7 lists them in order",
    )
    say(f"backup: kept 'disk full', not 'starting backup'; of eight levels kept {', '.join(SEVERE)}")
