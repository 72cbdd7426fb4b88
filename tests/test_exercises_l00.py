"""Lesson 00's exercise checks (mcp_teach.exercises.l00): real answers pass, wrong ones fail with feedback, and
missing ones are "not attempted" (an error while grading)."""

from __future__ import annotations

import copy

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


@pytest.fixture(scope="module")
def streamable_http_answers():
    """The solution of 00.1, run for real."""
    import asyncio

    async def solve():
        async with serve_http("streamable-http") as url:
            http_capture = CaptureTransport(url)
            async with teaching_client(http_capture) as client:
                await client.list_tools()
                result = await client.call_tool("calculator_multiply", {"a": 6, "b": 7})
        return {"product": result.data, "http_capture": http_capture}

    return asyncio.run(solve())


@pytest.fixture(scope="module")
def typed_answers():
    """The solution of 00.2, run for real against the stdio server."""
    import asyncio

    async def solve():
        async with RawStdioServer() as stdio_server:
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
            await stdio_server.exchange(initialize)
            await stdio_server.exchange({"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools_reply = await stdio_server.exchange({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        return {"stdio_server": stdio_server, "tool_names": [t["name"] for t in tools_reply["result"]["tools"]]}

    return asyncio.run(solve())


@pytest.fixture(scope="module")
def opening_answers():
    """The solution of 00.3: a session over SSE and one over streamable HTTP."""
    import asyncio

    async def methods_of_session(connection):
        async with calculator_target(connection) as target:
            capture = CaptureTransport(target)
            async with teaching_client(capture) as client:
                await client.list_tools()
                await client.call_tool("calculator_add", {"a": 1, "b": 2})
        return capture.capture.methods()

    async def solve():
        sse_methods = await methods_of_session("sse")
        http_methods = await methods_of_session("streamable-http")
        return {
            "sse_methods": sse_methods,
            "http_methods": http_methods,
            "only_sse": set(sse_methods) - set(http_methods),
            "only_http": set(http_methods) - set(sse_methods),
        }

    return asyncio.run(solve())


def test_00_1_the_real_call_passes_and_says_what_it_found(streamable_http_answers, capsys):
    check("00.1", streamable_http_answers)
    out = passed(capsys, "00.1")
    assert "product = 42.0" in out and "/mcp" in out


def test_00_1_a_wrong_product_fails(streamable_http_answers):
    failed_with("00.1", {**streamable_http_answers, "product": 41.0}, "expected 42.0, found 41.0")


def test_00_1_a_server_object_instead_of_the_url_fails(run):
    async def in_memory():
        from mcp_teach.servers.calculator import build_calculator_server

        http_capture = CaptureTransport(build_calculator_server())
        async with teaching_client(http_capture) as client:
            await client.list_tools()
            result = await client.call_tool("calculator_multiply", {"a": 6, "b": 7})
        return {"product": result.data, "http_capture": http_capture}

    failed_with("00.1", run(in_memory), "the HTTP paths", "serve_http")


def test_00_1_not_a_capture_fails_with_a_hint(streamable_http_answers):
    failed_with("00.1", {**streamable_http_answers, "http_capture": "http://127.0.0.1/mcp"}, "CaptureTransport")


def test_00_2_the_real_conversation_passes(typed_answers, capsys):
    check("00.2", typed_answers)
    assert "calculator_divide" in passed(capsys, "00.2")


def test_00_2_missing_tool_names_fail(typed_answers):
    failed_with("00.2", {**typed_answers, "tool_names": ["calculator_add"]}, "tool_names compared")


def test_00_2_a_notification_with_an_id_fails(typed_answers):
    changed = RawStdioServer()
    typed = typed_answers["stdio_server"].capture
    changed.capture = Capture.of(WireMessage(wire.direction, copy.deepcopy(wire.message), wire.at) for wire in typed)
    for wire in changed.capture:
        if wire.method == "notifications/initialized":
            wire.message["id"] = 9
    failed_with("00.2", {**typed_answers, "stdio_server": changed}, "no 'id' member")


def test_00_3_the_real_sessions_pass(opening_answers, capsys):
    check("00.3", opening_answers)
    assert "server/discover" in passed(capsys, "00.3")


def test_00_3_a_wrong_difference_fails(opening_answers):
    failed_with("00.3", {**opening_answers, "only_sse": {"initialize"}}, "only_sse")


def test_00_3_both_sessions_in_legacy_mode_fail_with_the_hint(opening_answers):
    legacy = list(opening_answers["sse_methods"])
    answers = {"sse_methods": legacy, "http_methods": legacy, "only_sse": set(), "only_http": set()}
    failed_with("00.3", answers, "mode='legacy'")


@pytest.mark.parametrize("exercise_id", ["00.1", "00.2", "00.3"])
def test_missing_answers_are_not_attempted(exercise_id, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check(exercise_id, {})
    assert f"Exercise {exercise_id} — not attempted yet" in capsys.readouterr().out
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, {})
