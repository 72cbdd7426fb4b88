"""Lesson 09's exercises (when the server needs the client): what each one expects, for ``check("09.k")``.

- 09.1: ``build_greeter()``, a server whose tool elicits the user's name, in both eras: the check connects to
  a fresh one with ``mode="legacy"`` and ``"auto"``, answers "Ada" and then declines, and reads the wire
  (``elicitation/create`` mid-call in 2025-11-25, ``input_required`` and a retry in 2026-07-28);
- 09.2: ``progress_fractions``, read from the capture of a ``count_slowly(n=4)`` call;
- 09.3: ``heard_levels`` after ``logging/setLevel`` "error" on a 2025-11-25 connection (checked against the
  student's capture ``error_capture``).

The checks are synchronous; 09.1, which talks to the student's server, runs its clients with :func:`run_sync`.
"""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP
from fastmcp.client.elicitation import ElicitResult

from mcp_teach.client import teaching_client
from mcp_teach.exercises.answers import captured, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import SERVER_TO_CLIENT, Capture

#: What 09.1's check answers, in order, and what greet must then return.
GREETINGS = [({"name": "Ada"}, "Hello, Ada!"), (ElicitResult(action="decline"), "Hello, stranger!")]


async def _greet_twice(server: FastMCP, mode: str) -> tuple[list[str], Capture]:
    answers = [answer for answer, _ in GREETINGS]

    async def elicit(message: str, response_type: Any, params: Any, context: Any) -> Any:
        return answers.pop(0)

    capture = CaptureTransport(server)
    async with teaching_client(capture, mode=mode, elicitation_handler=elicit) as client:
        said = []
        for _ in GREETINGS:
            result = await client.call_tool("greet", {}, raise_on_error=False)
            said.append(result.content[0].text if result.content else "")
    return said, capture.capture


@exercise("09.1", answers=("build_greeter",))
def tool_that_elicits(check: Checker, build_greeter: Any) -> None:
    check.true(
        callable(build_greeter),
        "build_greeter",
        expected="a function",
        found=build_greeter,
        hint="def build_greeter() -> FastMCP: ... return server",
    )
    server = build_greeter()
    check.instance(server, FastMCP, "build_greeter()", hint="build_greeter() returns FastMCP('greeter', ...)")
    found = []
    for mode, era in (("legacy", "2025-11-25"), ("auto", "2026-07-28")):
        said, capture = run_sync(_greet_twice(build_greeter(), mode))
        check.equal(
            said,
            [text for _, text in GREETINGS],
            f"what greet returned over {era} after 'Ada', then a decline",
            hint="accept -> f'Hello, {answer.content[\"name\"]}!'; decline or cancel -> 'Hello, stranger!'; in "
            "2026-07-28, return the InputRequiredResult ask_client gives you on the first round",
        )
        asked = capture.requests("elicitation/create")
        required = [
            w.message["result"]
            for w in capture
            if w.direction == SERVER_TO_CLIENT and w.message.get("result", {}).get("resultType") == "input_required"
        ]
        if mode == "legacy":
            check.equal(
                len(asked), 2, f"elicitation/create requests from the server over {era}", hint="greet asks every call"
            )
            schema = asked[0].message["params"]["requestedSchema"]
        else:
            check.equal(len(asked), 0, f"server requests over {era}", hint="use ask_client, not ctx.elicit")
            check.equal(len(required), 2, f"input_required results over {era}", hint="return what ask_client returns")
            schema = next(iter(required[0]["inputRequests"].values()))["params"]["requestedSchema"]
        check.true(
            schema.get("properties", {}).get("name", {}).get("type") == "string"
            and "name" in schema.get("required", []),
            "the requestedSchema",
            expected="a required string property 'name'",
            found=schema,
            hint='elicit_form("What is your name?", {"name": {"type": "string"}}, ["name"])',
        )
        found.append(f"{era}: {len(asked) or len(required)} × {'elicitation/create' if asked else 'input_required'}")
    print(f"greet said {', '.join(text for _, text in GREETINGS)} in both eras ({'; '.join(found)})")


@exercise("09.2", answers=("count_capture", "progress_fractions"))
def progress_off_the_wire(check: Checker, count_capture: Any, progress_fractions: Any) -> None:
    capture = captured(count_capture)
    check.instance(capture, Capture, "count_capture", hint="count_capture = CaptureTransport(build_assistant_server())")
    calls = [w.message["params"] for w in capture.requests("tools/call")]
    check.true(
        any(c.get("name") == "count_slowly" and (c.get("arguments") or {}).get("n") == 4 for c in calls),
        "the tools/call requests in count_capture",
        expected="a call of count_slowly with n = 4",
        found=[(c.get("name"), c.get("arguments")) for c in calls],
        hint='await client.call_tool("count_slowly", {"n": 4, "delay": 0.01}) on a client of count_capture',
    )
    notes = [w.message["params"] for w in capture if w.method == "notifications/progress"]
    check.equal(len(notes), 4, "notifications/progress in count_capture", hint="one call of count_slowly, n = 4")
    expected = [n["progress"] / n["total"] for n in notes]
    check.instance(progress_fractions, list, "progress_fractions", hint="a list comprehension over the capture")
    check.equal(progress_fractions, expected, "progress_fractions", hint="progress / total of each notification")
    print(f"4 notifications/progress: {progress_fractions}")


@exercise("09.3", answers=("error_capture", "heard_levels"))
def only_the_errors(check: Checker, error_capture: Any, heard_levels: Any) -> None:
    capture = captured(error_capture)
    check.instance(capture, Capture, "error_capture", hint="error_capture = CaptureTransport(build_assistant_server())")
    check.true(
        bool(capture.requests("initialize")),
        "error_capture's era",
        expected="a 2025-11-25 connection (an initialize request)",
        found=[w.method for w in capture.requests()][:3],
        hint='teaching_client(error_capture, mode="legacy", ...)',
    )
    levels = [w.message["params"].get("level") for w in capture.requests("logging/setLevel")]
    check.equal(levels, ["error"], "the logging/setLevel levels sent", hint='await client.set_logging_level("error")')
    sent = [w.message["params"]["level"] for w in capture if w.method == "notifications/message"]
    check.equal(
        sent, ["error"], "the levels of the notifications/message the server sent", hint="set the level before the call"
    )
    check.equal(heard_levels, ["error"], "heard_levels", hint="the levels your log_handler received, in order")
    print("logging/setLevel error -> the server sent only the error message")
