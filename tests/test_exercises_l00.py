"""Lesson 00's exercise checks (mcp_teach.exercises.l00): real answers pass, wrong ones fail with feedback, and
missing ones are "not attempted" (an error while grading).

Most wrong answers are made from the real run's capture (a message changed, left out or repeated), so that they cost
no new server."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable

import pytest
from exercise_support import failed_with, passed

from mcp_teach.client import calculator_target, teaching_client
from mcp_teach.exercises import ExerciseNotAttempted, check
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture, WireMessage
from mcp_teach.wire.raw_stdio import RawStdioServer

INITIALIZE_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "terminal", "version": "0"},
}
Change = Callable[[list[WireMessage]], list[WireMessage]]


def copied(capture: Capture, change: Change) -> Capture:
    """``change`` applied to a copy of ``capture``'s messages, with its HTTP exchanges: a wrong answer's capture."""
    messages = [WireMessage(wire.direction, copy.deepcopy(wire.message), wire.at) for wire in capture]
    return Capture(change(messages), http=list(capture.http))


def transport_with(transport: CaptureTransport, change: Change) -> CaptureTransport:
    """A CaptureTransport that recorded ``change`` of what ``transport`` recorded (it never connects)."""
    return CaptureTransport("http://127.0.0.1/mcp", capture=copied(transport.capture, change))


def hint_of(feedback: str) -> str:
    return feedback.split("Hint:", 1)[1]


@pytest.fixture(scope="module")
def streamable_http_answers():
    """The solution of 00.1, run for real (``result``, the call's return value, for the wrong answers)."""

    async def solve():
        async with serve_http("streamable-http") as url:
            http_capture = CaptureTransport(url)
            async with teaching_client(http_capture) as client:
                await client.list_tools()
                result = await client.call_tool("calculator_multiply", {"a": 6, "b": 7})
        return {"product": result.data, "http_capture": http_capture, "result": result}

    return asyncio.run(solve())


@pytest.fixture(scope="module")
def typed_answers():
    """The solution of 00.2, run for real against the stdio server (``tools_reply`` for the wrong answers)."""

    async def solve():
        async with RawStdioServer() as stdio_server:
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
            await stdio_server.exchange(initialize)
            await stdio_server.exchange({"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools_reply = await stdio_server.exchange({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tool_names = [t["name"] for t in tools_reply["result"]["tools"]]
        return {"stdio_server": stdio_server, "tool_names": tool_names, "tools_reply": tools_reply}

    return asyncio.run(solve())


async def capture_connection(connection: str, mode: str = "auto") -> CaptureTransport:
    """00.3's connection: list the tools and add 1 and 2 through a fresh calculator."""
    async with calculator_target(connection) as target:
        capture = CaptureTransport(target)
        async with teaching_client(capture, mode=mode) as client:
            await client.list_tools()
            await client.call_tool("calculator_add", {"a": 1, "b": 2})
    return capture


def openings(sse_capture: CaptureTransport, streamable_capture: CaptureTransport) -> dict:
    """00.3's answers as its solution computes them from the two captures."""
    sse_methods, http_methods = sse_capture.capture.methods(), streamable_capture.capture.methods()
    return {
        "sse_capture": sse_capture,
        "streamable_capture": streamable_capture,
        "sse_methods": sse_methods,
        "http_methods": http_methods,
        "only_sse": set(sse_methods) - set(http_methods),
        "only_http": set(http_methods) - set(sse_methods),
    }


@pytest.fixture(scope="module")
def opening_answers():
    """The solution of 00.3: a connection over SSE and one over streamable HTTP."""

    async def solve():
        return openings(await capture_connection("sse"), await capture_connection("streamable-http"))

    return asyncio.run(solve())


# 00.1 — a tool call over streamable HTTP


def test_00_1_the_real_call_passes_and_says_what_it_found(streamable_http_answers, capsys):
    check("00.1", streamable_http_answers)
    out = passed(capsys, "00.1")
    assert "product = 42.0" in out and "/mcp" in out


@pytest.mark.wrong_answer("00.1")
def test_00_1_a_wrong_product_fails(streamable_http_answers):
    failed_with("00.1", {**streamable_http_answers, "product": 41.0}, "expected 42.0, found 41.0")


@pytest.mark.wrong_answer("00.1")
def test_00_1_a_server_object_instead_of_the_url_fails(run):
    async def in_memory():
        from mcp_teach.servers.calculator import build_calculator_server

        http_capture = CaptureTransport(build_calculator_server())
        async with teaching_client(http_capture) as client:
            await client.list_tools()
            result = await client.call_tool("calculator_multiply", {"a": 6, "b": 7})
        return {"product": result.data, "http_capture": http_capture}

    failed_with("00.1", run(in_memory), "the HTTP paths", "serve_http")


@pytest.mark.wrong_answer("00.1")
def test_00_1_not_a_capture_fails_with_a_hint(streamable_http_answers):
    failed_with("00.1", {**streamable_http_answers, "http_capture": "http://127.0.0.1/mcp"}, "CaptureTransport")


def renamed_tool(messages: list[WireMessage]) -> list[WireMessage]:
    for wire in messages:
        if wire.method == "tools/call":
            wire.message["params"]["name"] = "calculator_add"
    return messages


def arguments_as_strings(messages: list[WireMessage]) -> list[WireMessage]:
    for wire in messages:
        if wire.method == "tools/call":
            wire.message["params"]["arguments"] = {"a": "6", "b": "7"}
    return messages


def called_twice(messages: list[WireMessage]) -> list[WireMessage]:
    call = next(at for at, wire in enumerate(messages) if wire.method == "tools/call")
    return [*messages, *copy.deepcopy(messages[call : call + 2])]


@pytest.mark.wrong_answer("00.1")
@pytest.mark.parametrize(
    ("change", "product", "fragments"),
    [
        pytest.param(renamed_tool, None, ("tools/call requests for calculator_multiply", "once"), id="typed-42-added"),
        pytest.param(
            arguments_as_strings, None, ("the arguments of your tools/call", "a number for each"), id="text-args"
        ),
        pytest.param(called_twice, None, ("expected 1, found 2", "call calculator_multiply once"), id="called-twice"),
        pytest.param(None, "result", ("product, the value", "store result.data"), id="the-result-object"),
        pytest.param(None, "text", ("product, the value", "not its text"), id="the-result-text"),
    ],
)
def test_00_1_a_call_that_is_not_the_task_or_not_its_value_fails(streamable_http_answers, change, product, fragments):
    """A product typed by hand beside a call of another tool, arguments sent as text, the tool called twice, or the
    call's result object (or its text) stored instead of the value it returned."""
    answers = dict(streamable_http_answers)
    if change is not None:
        answers["http_capture"] = transport_with(answers["http_capture"], change)
    if product == "result":
        answers["product"] = answers["result"]
    elif product == "text":
        answers["product"] = answers["result"].content[0].text
    feedback = failed_with("00.1", answers, *fragments)
    assert "42" not in hint_of(feedback)


# 00.2 — the protocol typed by hand


def test_00_2_the_real_conversation_passes(typed_answers, capsys):
    check("00.2", typed_answers)
    assert "calculator_divide" in passed(capsys, "00.2")


@pytest.mark.wrong_answer("00.2")
def test_00_2_missing_tool_names_fail(typed_answers):
    feedback = failed_with("00.2", {**typed_answers, "tool_names": ["calculator_add"]}, "tool_names compared")
    assert "calculator_divide" not in feedback


def stdio_server_with(typed: RawStdioServer, change: Change) -> RawStdioServer:
    """A RawStdioServer (never started) whose capture holds ``change`` of what ``typed`` exchanged."""
    changed = RawStdioServer()
    changed.capture = copied(typed.capture, change)
    return changed


def notification_with_an_id(messages: list[WireMessage]) -> list[WireMessage]:
    for wire in messages:
        if wire.method == "notifications/initialized":
            wire.message["id"] = 9
    return messages


def tools_list_reusing_id_1(messages: list[WireMessage]) -> list[WireMessage]:
    for wire in (messages[-2], messages[-1]):  # tools/list and its reply
        wire.message["id"] = 1
    return messages


def notification_left_out(messages: list[WireMessage]) -> list[WireMessage]:
    return [wire for wire in messages if wire.method != "notifications/initialized"]


def tools_list_first(messages: list[WireMessage]) -> list[WireMessage]:
    return [*messages[3:], *messages[:3]]


@pytest.mark.wrong_answer("00.2")
@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        pytest.param(notification_with_an_id, ("no 'id' member",), id="notification-with-id"),
        pytest.param(tools_list_reusing_id_1, ("used twice", "must be new on its connection"), id="id-1-reused"),
        pytest.param(notification_left_out, ("the methods you sent", "the notification"), id="no-notification"),
        pytest.param(tools_list_first, ("the methods you sent", "in order"), id="tools-list-first"),
    ],
)
def test_00_2_a_conversation_other_than_the_tasks_fails(typed_answers, change, fragments):
    """The notification sent with an id, tools/list reusing initialize's id 1, the notification left out, or
    tools/list sent before the handshake."""
    changed = stdio_server_with(typed_answers["stdio_server"], change)
    failed_with("00.2", {**typed_answers, "stdio_server": changed}, *fragments)


@pytest.mark.wrong_answer("00.2")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        pytest.param("tools", ("tool_names compared", "a tool itself is a dict"), id="the-tool-dicts"),
        pytest.param("first-name", ("tool_names", "a list of names"), id="one-name-not-a-list"),
        pytest.param("reply", ("stdio_server", "RawStdioServer()"), id="the-reply-not-the-server"),
    ],
)
def test_00_2_answers_of_the_wrong_kind_fail(typed_answers, wrong, fragments):
    """The tool dicts instead of their names, the first name alone, or the reply stored instead of the server."""
    tools = typed_answers["tools_reply"]["result"]["tools"]
    answers = {
        "tools": {**typed_answers, "tool_names": tools},
        "first-name": {**typed_answers, "tool_names": tools[0]["name"]},
        "reply": {**typed_answers, "stdio_server": typed_answers["tools_reply"]},
    }[wrong]
    failed_with("00.2", answers, *fragments)


# 00.3 — two HTTP transports, two openings


def test_00_3_the_real_connections_pass(opening_answers, capsys):
    check("00.3", opening_answers)
    assert "server/discover" in passed(capsys, "00.3")


@pytest.mark.wrong_answer("00.3")
def test_00_3_a_wrong_difference_fails(opening_answers):
    feedback = failed_with("00.3", {**opening_answers, "only_sse": {"initialize"}}, "only_sse", "from your lists")
    assert "notifications/initialized" not in feedback


@pytest.mark.wrong_answer("00.3")
def test_00_3_both_connections_in_legacy_mode_fail_with_the_hint(opening_answers, run):
    legacy = run(capture_connection, "streamable-http", "legacy")
    feedback = failed_with("00.3", openings(opening_answers["sse_capture"], legacy), "mode='legacy'")
    assert "notifications/initialized" not in hint_of(feedback) and "server/discover" not in feedback


#: Method lists typed from the table of section 3 and the lesson's text, without running anything.
TYPED_SSE = ["initialize", "notifications/initialized", "tools/list", "tools/call"]
TYPED_HTTP = ["server/discover", "tools/list", "tools/call"]


def never_connected(opening_answers: dict) -> dict:
    """Lists typed by hand beside CaptureTransports that never connected: nothing crossed a wire."""
    empty = {name: CaptureTransport("http://127.0.0.1/sse") for name in ("sse_capture", "streamable_capture")}
    return {**opening_answers, **empty, "sse_methods": TYPED_SSE, "http_methods": TYPED_HTTP}


def typed_exactly(opening_answers: dict) -> dict:
    """Every entry typed right, from what the lesson shows, beside CaptureTransports that never connected."""
    sse = ["initialize", "initialize (result)", "notifications/initialized"]
    http = ["server/discover", "server/discover (result)"]
    call = ["tools/list", "tools/list (result)", "tools/call", "tools/call (result)"]
    return {**never_connected(opening_answers), "sse_methods": sse + call, "http_methods": http + call}


def typed_beside_real_captures(opening_answers: dict) -> dict:
    """Lists typed by hand (each response left out) beside the two real captures."""
    typed = {"sse_methods": TYPED_SSE, "http_methods": TYPED_HTTP}
    return {**opening_answers, **typed, "only_sse": {"initialize", "notifications/initialized"}}


def swapped(opening_answers: dict) -> dict:
    sse, streamable = opening_answers["sse_capture"], opening_answers["streamable_capture"]
    return {**opening_answers, "sse_capture": streamable, "streamable_capture": sse}


def in_memory(opening_answers: dict) -> dict:
    """Both connections captured without HTTP (the calculator object itself): the same messages, no transport."""
    without_http = {}
    for name in ("sse_capture", "streamable_capture"):
        without_http[name] = transport_with(opening_answers[name], lambda messages: messages)
        without_http[name].capture.http.clear()
    return {**opening_answers, **without_http}


def reversed_differences(opening_answers: dict) -> dict:
    return {**opening_answers, "only_sse": opening_answers["only_http"], "only_http": opening_answers["only_sse"]}


def lists_as_sets(opening_answers: dict) -> dict:
    return {**opening_answers, "sse_methods": set(opening_answers["sse_methods"])}


@pytest.mark.wrong_answer("00.3")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        pytest.param(never_connected, ("the HTTP paths sse_capture recorded", "calculator_target('sse')"), id="typed"),
        pytest.param(typed_exactly, ("the HTTP paths sse_capture recorded", "a client connected"), id="typed-right"),
        pytest.param(typed_beside_real_captures, ("sse_methods compared with", "not a list typed by hand"), id="typo"),
        pytest.param(swapped, ("the HTTP paths sse_capture recorded", "calculator_target('sse')"), id="swapped"),
        pytest.param(in_memory, ("the HTTP paths", "a client connected to what calculator_target"), id="in-memory"),
        pytest.param(reversed_differences, ("only_sse", "the names in sse_methods that http_methods lacks"), id="rev"),
        pytest.param(lists_as_sets, ("sse_methods", "the list of method names"), id="a-set-not-the-list"),
    ],
)
def test_00_3_lists_that_are_not_what_the_two_captures_recorded_fail(opening_answers, wrong, fragments):
    """Method lists typed by hand (with captures that never connected, or beside real ones), the two captures
    swapped or made in memory, the two differences reversed, a set stored for a list."""
    feedback = failed_with("00.3", wrong(opening_answers), *fragments)
    assert "initialize (result)" not in hint_of(feedback) and "server/discover (result)" not in hint_of(feedback)


@pytest.mark.parametrize("exercise_id", ["00.1", "00.2", "00.3"])
def test_missing_answers_are_not_attempted(exercise_id, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check(exercise_id, {})
    assert f"Exercise {exercise_id} — not attempted yet" in capsys.readouterr().out
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, {})
