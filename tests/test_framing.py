"""Lesson 05 helpers: capture diffs, HTTP exchange rendering, SSE parsing, stdio lines, the two terminals."""

from __future__ import annotations

import asyncio
import json

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l05_framing import (
    PROTOCOL_HEADERS,
    SseEvent,
    diff_captures,
    differing_paths,
    http_overview,
    plain_environment,
    received_messages,
    run_command,
    sent_messages,
    show_http,
    show_stdio,
    sse_events,
    terminal_server,
)
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture, WireMessage
from mcp_teach.wire.stdio_tap import TappedLine


async def _session(target, mode: str) -> CaptureTransport:
    capture = CaptureTransport(target)
    async with teaching_client(capture, mode=mode) as client:
        await client.list_tools()
        await client.call_tool("calculator_add", {"a": 1, "b": 2})
        await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
    return capture


@pytest.fixture(scope="module")
def sessions():
    """The lesson's session in memory and over both HTTP transports, in both eras (SSE: legacy only)."""

    async def record() -> dict[tuple[str, str], CaptureTransport]:
        found = {}
        for mode in ("legacy", "auto"):
            found["memory", mode] = await _session(build_calculator_server(), mode)
            for transport in ("sse", "streamable-http"):
                if transport == "sse" and mode == "auto":
                    continue
                async with serve_http(transport) as url:
                    found[transport, mode] = await _session(url, mode)
        return found

    return asyncio.run(record())


# --- differing_paths / diff_captures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "paths"),
    [
        ({"x": 1, "y": [1, 2]}, {"y": [1, 2], "x": 1}, []),  # key order does not matter
        ({"x": 1}, {"x": 2}, ["x"]),
        ({"x": {"y": 1, "z": 2}}, {"x": {"y": 1}}, ["x.z"]),
        ({"x": 1}, {"x": 1, "w": 0}, ["w"]),
        ({"l": [1, {"k": 1}]}, {"l": [1, {"k": 2}]}, ["l.1.k"]),
        ({"l": [1, 2]}, {"l": [1, 2, 3]}, ["l"]),
        ({"n": 3}, {"n": 3.0}, ["n"]),  # different JSON numbers on the wire
        ({"n": 1}, {"n": True}, ["n"]),
        ("a", "b", [""]),
    ],
)
def test_differing_paths(a, b, paths):
    assert differing_paths(a, b) == paths


def test_the_same_session_is_identical_on_every_transport(sessions):
    legacy = diff_captures({k[0]: v for k, v in sessions.items() if k[1] == "legacy"})
    assert legacy.identical and legacy.differences() == []
    assert len(legacy.rows) == 9
    modern = diff_captures({k[0]: v for k, v in sessions.items() if k[1] == "auto"})
    assert modern.identical and len(modern.rows) == 8
    assert "identical: all 8 messages are equal in both captures" in repr(modern)


def test_diff_names_the_fields_that_differ_and_handles_shifted_captures(sessions):
    diff = diff_captures({"2026": sessions["memory", "auto"], "2025": sessions["memory", "legacy"]}, max_paths=2)
    assert not diff.identical
    first = diff.differences()[0]
    assert first[:2] == (1, "2025")
    assert first[2][:2] == ["method", "params._meta"]
    text = repr(diff)
    assert "#1  client → server  server/discover" in text
    assert "differs: method, params._meta, … (+3)" in text
    assert "differs: direction" in text
    assert "extra: tools/call (result)" in text  # the legacy capture has one message more
    assert text.endswith("9 of 9 positions differ")
    shorter = diff_captures({"2025": sessions["memory", "legacy"], "2026": sessions["memory", "auto"]})
    assert shorter.rows[-1].differences == (["(missing)"],)
    assert repr(shorter).splitlines()[-2].split() == [
        "#9",
        "server",
        "→",
        "client",
        "tools/call",
        "(result)",
        "missing",
    ]


def test_diff_notices_a_single_changed_value():
    def capture(value: float) -> Capture:
        return Capture(
            [
                WireMessage(CLIENT_TO_SERVER, {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                WireMessage(SERVER_TO_CLIENT, {"jsonrpc": "2.0", "id": 1, "result": {"v": value}}),
            ]
        )

    diff = diff_captures({"a": capture(1.0), "b": capture(1.0), "c": capture(2.0)})
    assert diff.differences() == [(2, "c", ["result.v"])]
    assert "ping (result)" in repr(diff)
    assert "color: #cf222e" in diff._repr_html_()
    with pytest.raises(ValueError, match="at least two"):
        diff_captures({"a": capture(1.0)})


# --- SSE and HTTP exchanges ----------------------------------------------------------------------------------------


def test_sse_events_parses_fields_comments_and_line_endings():
    body = (
        "event: endpoint\r\ndata: /messages/?session_id=1\r\n\r\n"
        ": a comment\n\n"
        "data: line one\ndata: line two\nid: 7\n\n"
        "event: message\rdata:{}\r\r"
    )
    assert sse_events(body) == [
        SseEvent("endpoint", "/messages/?session_id=1"),
        SseEvent("message", "line one\nline two", "7"),
        SseEvent("message", "{}"),
    ]


def test_sse_session_framing(sessions):
    capture = sessions["sse", "legacy"].capture
    stream, *posts = capture.http
    assert (stream.method, stream.target, stream.status) == ("GET", "/sse", 200)
    events = sse_events(stream.response_body)
    assert events[0].event == "endpoint" and events[0].data.startswith("/messages/?session_id=")
    assert received_messages(stream) == [m.message for m in capture if m.direction == SERVER_TO_CLIENT]
    assert [sent_messages(p)[0] for p in posts] == [m.message for m in capture if m.direction == CLIENT_TO_SERVER]
    assert {(p.method, p.status, p.response_body) for p in posts} == {("POST", 202, "Accepted")}
    assert all(received_messages(p) == [] for p in posts)


def test_overview_of_a_streamable_http_session(sessions):
    text = repr(http_overview(sessions["streamable-http", "legacy"]))
    lines = text.splitlines()
    assert lines[0].split() == [
        "#",
        "request",
        "JSON-RPC",
        "sent",
        "status",
        "response",
        "type",
        "JSON-RPC",
        "received",
    ]
    assert lines[2].split() == [
        "#1",
        "POST",
        "/mcp",
        "initialize",
        "id=1",
        "200",
        "OK",
        "text/event-stream",
        "result",
        "id=1",
    ]
    assert lines[3].split() == [
        "#2",
        "POST",
        "/mcp",
        "notifications/initialized",
        "202",
        "Accepted",
        "application/json",
        "—",
    ]
    assert lines[-1].split()[:3] == ["#7", "DELETE", "/mcp"]
    sse = repr(http_overview(sessions["sse", "legacy"]))
    assert "endpoint event, result id=1, result id=2, result id=3, result id=4" in sse


def test_show_http_shows_protocol_headers_only_and_cuts_long_lines(sessions):
    view = show_http(sessions["streamable-http", "legacy"], numbers=[1, 2], width=60)
    text = view.text()
    assert text.count("── HTTP exchange #") == 2
    assert "→ POST /mcp    [carries initialize id=1]" in text
    assert "← 200 OK    [carries result id=1]" in text
    assert "← 202 Accepted    [empty body]" in text
    assert "  accept: application/json, text/event-stream" in text
    assert "  mcp-protocol-version: 2025-11-25" in text
    assert "mcp-session-id: " in text
    for unstable in ("date:", "user-agent:", "host:", "content-length:"):
        assert unstable not in text
    assert "  │ event: message" in text
    assert "…  (+" in text
    assert max(len(line) for line in text.splitlines() if "│" in line) < 60 + 40
    html = view._repr_html_()
    assert "<details" in html and "mcp-session-id" in html and "&quot;jsonrpc&quot;" in html


def test_show_http_all_headers_leaves_out_the_unstable_ones(sessions):
    text = show_http(sessions["streamable-http", "auto"], numbers=[3], headers=None, width=None).text()
    assert "mcp-name: calculator_add" in text and "content-length:" in text
    assert "date:" not in text and "user-agent:" not in text and "host:" not in text
    assert "…" not in text
    assert "mcp-session-id" not in text  # sessionless era


def test_show_http_of_one_exchange_and_of_nothing():
    exchange = HttpExchange("POST", "/mcp", {"content-type": "application/json"}, "[]", 0.0, 500, {}, "oops")
    text = show_http(exchange).text()
    assert "→ POST /mcp    [carries batch: ]" in text
    assert "← 500 Internal Server Error    [no JSON-RPC]" in text
    assert show_http([], title="none").text() == "== none ==\n(no HTTP exchanges)"
    assert PROTOCOL_HEADERS[0] == "accept"


# --- stdio lines ---------------------------------------------------------------------------------------------------


def test_show_stdio_keeps_the_end_of_long_lines_visible():
    long_line = b'{"jsonrpc":"2.0","id":2,"result":{"tools":[' + b"x" * 200 + b"]}}\n"
    lines = [TappedLine("stdin", b'{"a":1}\n'), TappedLine("stderr", b"log\n"), TappedLine("stdout", long_line)]
    text = repr(show_stdio(lines, width=60))
    rows = text.splitlines()[2:]
    assert len(rows) == 2  # stderr left out by default
    assert rows[0].split() == ["#1", "stdin", "client", "→", "server", "8", "b'{\"a\":1}\\n'"]
    assert rows[1].endswith("xx]}}\\n'") and "…" in rows[1]
    assert len(rows[1].split("  ")[-1]) == 60
    assert "log" in repr(show_stdio(lines, streams=("stderr",)))


# --- two terminals -------------------------------------------------------------------------------------------------


def test_run_command_gives_a_plain_transcript():
    script = "import os; print('\\x1b[1mbold\\x1b[0m', os.environ.get('FORCE_COLOR')); raise SystemExit(4)"
    result = run_command(["python", "-c", script])
    assert result.output == "bold None\n"
    assert result.returncode == 4
    assert repr(result).startswith("$ python -c 'import os;")
    assert repr(result).endswith("bold None\n(exit code 4)")
    assert "FORCE_COLOR" not in plain_environment()


def test_terminal_server_serves_until_the_block_ends(run):
    with terminal_server("streamable-http") as terminal_a:
        assert terminal_a.banner.startswith("mcp-teach calculator: streamable-http on http://127.0.0.1:")
        assert terminal_a.url.endswith("/mcp")

        async def add() -> float:
            async with teaching_client(terminal_a.url) as client:
                return (await client.call_tool("calculator_add", {"a": 1, "b": 2})).data

        assert run(add) == 3.0
    with pytest.raises(RuntimeError, match="did not start"), terminal_server("carrier-pigeon"):
        pass


def test_fastmcp_call_against_a_terminal_server():
    with terminal_server("sse") as terminal_a:
        result = run_command(["fastmcp", "call", terminal_a.url, "calculator_add", "a=1", "b=2"])
    assert result.returncode == 0
    assert json.loads(result.output) == {"result": 3.0}
    assert repr(result).startswith(f"$ fastmcp call {terminal_a.url} calculator_add a=1 b=2\n")
