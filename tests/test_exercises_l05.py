"""Lesson 05's exercise checks (mcp_teach.exercises.l05): the real solutions pass, wrong answers fail with
expected / found / hint, and missing ones are "not attempted" (an error while grading)."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from exercise_support import failed_with, passed

from mcp_teach.client import teaching_client
from mcp_teach.exercises import ExerciseNotAttempted, check
from mcp_teach.lessons.l05_diff import diff_captures
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http, stdio_transport
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.raw_stdio import RawStdioServer

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}






async def _session(target, mode="legacy", calls=(("calculator_multiply", 6, 7), ("calculator_subtract", 42, 2))):
    capture = CaptureTransport(target)
    async with teaching_client(capture, mode=mode) as client:
        await client.list_tools()
        for tool, a, b in calls:
            await client.call_tool(tool, {"a": a, "b": b})
    return capture


@pytest.fixture(scope="module")
def stdio_and_sse(tmp_path_factory):
    """The solution of 05.1, run for real."""
    log_file = tmp_path_factory.mktemp("stdio") / "server.log"

    async def solve():
        stdio_capture = await _session(stdio_transport(log_file=log_file))
        async with serve_http("sse") as url:
            sse_capture = await _session(url)
        return stdio_capture, sse_capture

    stdio_capture, sse_capture = asyncio.run(solve())
    my_diff = diff_captures({"stdio": stdio_capture, "sse": sse_capture})
    return {"stdio_capture": stdio_capture, "sse_capture": sse_capture, "my_diff": my_diff}


def test_05_1_the_real_sessions_pass(stdio_and_sse, capsys):
    check("05.1", stdio_and_sse)
    assert "found: identical: all 9 messages" in passed(capsys, "05.1")


def test_05_1_a_modern_stdio_session_fails_with_the_era_hint(stdio_and_sse, run):
    in_memory = run(_session, build_calculator_server(), "auto")
    failed_with("05.1", {**stdio_and_sse, "stdio_capture": in_memory}, "StdioTransport", "stdio_transport()")


def test_05_1_other_calls_fail(stdio_and_sse, run):
    async def other_calls():
        async with serve_http("sse") as url:
            return await _session(url, calls=(("calculator_add", 1, 2), ("calculator_subtract", 42, 2)))

    failed_with("05.1", {**stdio_and_sse, "sse_capture": run(other_calls)}, "the tools called in sse_capture")


def test_05_1_a_diff_in_the_other_order_fails(stdio_and_sse):
    reversed_diff = diff_captures({"sse": stdio_and_sse["sse_capture"], "stdio": stdio_and_sse["stdio_capture"]})
    failed_with("05.1", {**stdio_and_sse, "my_diff": reversed_diff}, "stdio first")


@pytest.fixture(scope="module")
def session_answers():
    """The solution of 05.2: the lesson's 2025-11-25 streamable-HTTP session, then two hand-made POSTs."""

    async def solve():
        async with serve_http("streamable-http") as url:
            lesson_capture = await _session(url)
        async with serve_http("streamable-http") as url, httpx2.AsyncClient() as http_client:
            made_up = await http_client.post(url, json=TOOLS_LIST, headers=HEADERS | {"mcp-session-id": "0" * 32})
            none = await http_client.post(url, json=TOOLS_LIST, headers=HEADERS)
        return lesson_capture, made_up, none

    lesson_capture, made_up_reply, no_session_reply = asyncio.run(solve())
    exchanges = lesson_capture.capture.http
    issued_in = next(n for n, e in enumerate(exchanges, start=1) if "mcp-session-id" in e.response_headers)
    session_id = exchanges[issued_in - 1].response_headers["mcp-session-id"]
    first_sent_back = next(
        n for n, e in enumerate(exchanges, start=1) if e.request_headers.get("mcp-session-id") == session_id
    )
    return {
        "exchanges": exchanges,
        "session_id": session_id,
        "issued_in": issued_in,
        "first_sent_back": first_sent_back,
        "made_up_reply": made_up_reply,
        "no_session_reply": no_session_reply,
    }


def test_05_2_the_real_answers_pass(session_answers, capsys):
    check("05.2", session_answers)
    assert "made-up id → 404, no id → 400" in passed(capsys, "05.2")


def test_05_2_a_copied_session_id_fails(session_answers):
    failed_with("05.2", {**session_answers, "session_id": "4aeb88909109466c9ad60694f5b8db45"}, "do not copy it")


def test_05_2_counting_from_zero_fails(session_answers):
    failed_with("05.2", {**session_answers, "issued_in": 0}, "numbering starts at 1")


def test_05_2_the_replies_swapped_fail(session_answers):
    swapped = {
        **session_answers,
        "made_up_reply": session_answers["no_session_reply"],
        "no_session_reply": session_answers["made_up_reply"],
    }
    failed_with("05.2", swapped, "whether the request of made_up_reply has an mcp-session-id header")


def test_05_2_the_hint_says_when_a_session_id_is_required(session_answers):
    ok = httpx2.Response(200, request=session_answers["no_session_reply"].request)
    message = failed_with("05.2", {**session_answers, "no_session_reply": ok}, "expected 400, found 200")
    assert "once the server has assigned a session id" in message


def test_05_2_exchanges_of_another_transport_fail(session_answers, stdio_and_sse):
    sse_exchanges = stdio_and_sse["sse_capture"].capture.http
    failed_with("05.2", {**session_answers, "exchanges": sse_exchanges}, "the first exchange in exchanges")


def predicted_requests(transport, mode, n):
    if transport == "stdio":
        return 0
    if transport == "sse":
        return 1 + 3 + n
    if mode == "legacy":
        return 3 + 1 + n + 1
    return 2 + n


@pytest.fixture(scope="module")
def five_calls():
    """The sessions of the solution of 05.3."""

    async def solve():
        found = {}
        for transport, mode in [("sse", "legacy"), ("streamable-http", "legacy"), ("streamable-http", "auto")]:
            async with serve_http(transport) as url:
                found[transport, mode] = await _session(url, mode, calls=[("calculator_add", k, 1) for k in range(5)])
        return found

    return asyncio.run(solve())


def test_05_3_the_real_formula_passes(five_calls, capsys):
    check("05.3", {"predicted_requests": predicted_requests, "five_calls": five_calls})
    out = passed(capsys, "05.3")
    assert "streamable-http  legacy  10                   10" in out


def test_05_3_a_formula_without_the_delete_fails(five_calls):
    def no_delete(transport, mode, n):
        return predicted_requests(transport, mode, n) - (transport == "streamable-http" and mode == "legacy")

    failed_with("05.3", {"predicted_requests": no_delete, "five_calls": five_calls}, "section 8")


def test_05_3_a_formula_right_only_for_five_calls_fails(five_calls):
    def only_five(transport, mode, n):
        return predicted_requests(transport, mode, 5)

    failed_with("05.3", {"predicted_requests": only_five, "five_calls": five_calls}, "a real session with 0 tool calls")


def test_05_3_a_missing_session_fails(five_calls):
    partial = {key: value for key, value in five_calls.items() if key[0] != "sse"}
    failed_with("05.3", {"predicted_requests": predicted_requests, "five_calls": partial}, "the keys of five_calls")


@pytest.fixture(scope="module")
def framing_answers():
    """The solution of 05.4, run for real against the stdio server."""

    async def solve():
        pretty = json.dumps(INITIALIZE, indent=2)
        async with RawStdioServer() as raw_server:
            await raw_server.send(pretty)
            pretty_replies = await raw_server.receive_all()
            compact_reply = await raw_server.exchange(INITIALIZE)
        return {
            "raw_server": raw_server,
            "pretty_replies": pretty_replies,
            "compact_reply": compact_reply,
            "pretty_lines": len(pretty.splitlines()),
        }

    return asyncio.run(solve())


def test_05_4_the_real_answers_pass(framing_answers, capsys):
    check("05.4", framing_answers)
    assert "13 lines → 13 replies" in passed(capsys, "05.4")


def test_05_4_a_wrong_line_count_fails(framing_answers):
    failed_with("05.4", {**framing_answers, "pretty_lines": 1}, "pretty_lines", "splits its input at every newline")


def test_05_4_the_dict_sent_instead_of_the_pretty_text_fails(run):
    async def compact_first():
        async with RawStdioServer() as raw_server:
            first = await raw_server.exchange(INITIALIZE)
            second = await raw_server.exchange(INITIALIZE)
        return {"raw_server": raw_server, "pretty_replies": [first], "compact_reply": second, "pretty_lines": 13}

    failed_with("05.4", run(compact_first), "one Parse error per line")


@pytest.mark.parametrize("exercise_id", ["05.1", "05.2", "05.3", "05.4"])
def test_missing_answers_are_not_attempted(exercise_id, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check(exercise_id, {})
    assert f"Exercise {exercise_id} — not attempted yet" in capsys.readouterr().out
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, {})
