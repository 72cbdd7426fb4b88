"""Bad input on every transport: each gets the right JSON-RPC error or tool error, and the next call still works.

One real server per transport (stdio subprocess; SSE and streamable HTTP on
127.0.0.1, the latter in both eras) serves every case in turn; after each bad
frame the same connection or session must answer a normal ``tools/call``.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass

import httpx2
import pytest
from raw_peers import PEERS, Peer, StdioPeer, http_server, open_peer

from mcp_teach.transports.frames import MAX_MESSAGE_BYTES
from mcp_teach.wire.raw_requests import raw_request

STDIO_SERVER = [sys.executable, "-m", "mcp_teach.serve", "--transport", "stdio"]


def encoded(message: object) -> bytes:
    return json.dumps(message).encode()


def tool_call(tool: str, arguments: object) -> Callable[[Peer], bytes]:
    return lambda peer: encoded(peer.request(1, "tools/call", {"name": tool, "arguments": arguments}))


def shaped(change: Callable[[dict], object]) -> Callable[[Peer], bytes]:
    """A good ``calculator_add`` request (id 1), changed by ``change``."""
    good = {"name": "calculator_add", "arguments": {"a": 1, "b": 2}}
    return lambda peer: encoded(change(peer.request(1, "tools/call", good)))


def raw(data: bytes) -> Callable[[Peer], bytes]:
    return lambda peer: data


def without(key: str) -> Callable[[dict], dict]:
    return lambda message: {k: v for k, v in message.items() if k != key}


@dataclass(frozen=True)
class Case:
    frame: Callable[[Peer], bytes]
    #: ``tool error``: a result with isError true; ``error``: a JSON-RPC error with ``code``.
    kind: str
    phrase: str
    code: int | None = None
    #: The id the reply must carry (null when the server could not read one).
    reply_id: int | None = 1
    #: The HTTP status when the frame is refused before it reaches the MCP session (HTTP transports).
    status: int | None = None
    #: No reply on stdio (a blank line; a notification, which JSON-RPC never answers); over HTTP the POST itself
    #: is refused with 400 and this error.
    silent_on_stdio: bool = False
    #: What the stdio server's log must say instead of replying.
    stdio_warning: str = ""


def tool_error(frame: Callable[[Peer], bytes], phrase: str) -> Case:
    return Case(frame, "tool error", phrase)


def refused(
    frame: Callable[[Peer], bytes],
    code: int,
    phrase: str,
    reply_id: int | None = None,
    *,
    status: int = 400,
    silent_on_stdio: bool = False,
    stdio_warning: str = "",
) -> Case:
    """A frame refused with a JSON-RPC error before it reaches the MCP session (over HTTP: with ``status``)."""
    return Case(frame, "error", phrase, code, reply_id, status, silent_on_stdio, stdio_warning)


CASES: dict[str, Case] = {
    "wrong argument type": tool_error(
        tool_call("calculator_add", {"a": "three", "b": 2}), "argument 'a': Input should be a valid number"
    ),
    "missing argument": tool_error(tool_call("calculator_add", {"a": 1}), "argument 'b' is missing"),
    "extra argument": tool_error(tool_call("calculator_add", {"a": 1, "b": 2, "c": 3}), "unexpected argument 'c'"),
    "number beyond float range": tool_error(
        tool_call("calculator_add", {"a": 10**400, "b": 1}), "argument 'a': Input should be a valid number"
    ),
    "integer literal over 4300 digits": refused(
        raw(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"a": ' + b"9" * 5000 + b"}}"),
        -32700,
        "Parse error",
    ),
    "result overflows": tool_error(
        tool_call("calculator_multiply", {"a": 1e308, "b": 10}), "is not a finite number (overflow)"
    ),
    "NaN operand": tool_error(tool_call("calculator_add", {"a": float("nan"), "b": 1}), "must be finite numbers"),
    "division by zero": tool_error(tool_call("calculator_divide", {"a": 1, "b": 0}), "Cannot divide by zero"),
    "2 MB string argument": tool_error(
        tool_call("calculator_add", {"a": "x" * 2_000_000, "b": 1}), "argument 'a': Input should be a valid number"
    ),
    # A protocol error, not a tool result (2025-11-25 and 2026-07-28 server/tools, Error Handling).
    "unknown tool": Case(tool_call("calculator_sqrt", {"a": 4}), "error", "Unknown tool: 'calculator_sqrt'", -32602),
    # 10 kB, not 2 MB: over streamable HTTP (2026-07-28) the name also travels in the Mcp-Name header
    "10 kB tool name": Case(tool_call("x" * 10_000, {"a": 1, "b": 2}), "error", "Unknown tool: 'xxx", -32602),
    "10 kB argument name": tool_error(
        tool_call("calculator_add", {"a": 1, "b": 2, "y" * 10_000: 0}), "unexpected argument 'yyy"
    ),
    "unknown method": Case(
        lambda peer: encoded(peer.request(1, "tools/frobnicate")), "error", "Method not found", -32601
    ),
    "tools/call without a name": Case(
        lambda peer: encoded(peer.request(1, "tools/call", {"arguments": {}})),
        "error",
        "Invalid params for tools/call: params.name is missing.",
        -32602,
    ),
    "invalid JSON": refused(raw(b'{"jsonrpc": "2.0", "id": 1, "method": '), -32700, "Parse error: not valid JSON"),
    "non-JSON bytes": refused(raw(b"\xff\xfe\x00binary"), -32700, "Parse error: the message is not UTF-8"),
    "deeply nested JSON": refused(raw(b"[" * 100_000 + b"]" * 100_000), -32700, "Parse error"),
    "request without jsonrpc": refused(shaped(without("jsonrpc")), -32600, '"jsonrpc" must be "2.0"', 1),
    "request with jsonrpc 1.0": refused(shaped(lambda m: {**m, "jsonrpc": "1.0"}), -32600, '(got "1.0")', 1),
    "request with id null": refused(shaped(lambda m: {**m, "id": None}), -32600, '"id" must be a string or an integer'),
    "request with id true": refused(shaped(lambda m: {**m, "id": True}), -32600, '"id" must be a string or an integer'),
    "request without method": refused(shaped(without("method")), -32600, 'needs a "method"', 1),
    "batch": refused(lambda peer: encoded([peer.request(1, "tools/list")]), -32600, "not batches"),
    "JSON that is a number": refused(raw(b"42"), -32600, "got a JSON number"),
    "oversized message": refused(
        tool_call("calculator_add", {"a": 1, "b": 2, "pad": "x" * MAX_MESSAGE_BYTES}),
        -32600,
        f"at most {MAX_MESSAGE_BYTES:,} bytes",
        status=413,
    ),
    "tools/call without id": refused(
        shaped(without("id")), -32600, 'needs an "id"', silent_on_stdio=True, stdio_warning="'tools/call'"
    ),
    "notification where a request is expected": refused(
        lambda peer: encoded(peer.request(None, "tools/list")),
        -32600,
        'needs an "id"',
        silent_on_stdio=True,
        stdio_warning="'tools/list'",
    ),
    "blank line or empty body": refused(raw(b""), -32700, "Parse error: not valid JSON", silent_on_stdio=True),
}


@pytest.fixture(scope="module", params=PEERS)
def live_peer(request, tmp_path_factory, clean_env):
    """``live_peer()``: the transport's one server, shared by all cases; a stdio server that died is replaced
    (so a crash fails its own case, not every case after it, and fails the teardown: exit code not 0)."""
    with contextlib.ExitStack() as stack:
        opened: list[Peer] = []

        def live() -> Peer:
            if not opened or (isinstance(opened[-1], StdioPeer) and opened[-1].process.poll() is not None):
                workdir = tmp_path_factory.mktemp(request.param)
                opened.append(stack.enter_context(open_peer(request.param, workdir=workdir, env=clean_env())))
            return opened[-1]

        yield live
        leftovers = opened[-1].pending()
        assert not leftovers, f"replies nobody asked for: {leftovers}"


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_answered_and_the_next_call_succeeds(live_peer, name):
    peer = live_peer()
    case = CASES[name]
    status = peer.send(case.frame(peer))
    if case.silent_on_stdio and peer.name == "stdio":
        # No reply: the next line on stdout must be the answer to the follow-up call (checked by peer.add).
        assert peer.add(f"after {name}") == 3.0
        assert case.stdio_warning in peer.log_file.read_text()
        return
    reply = peer.next_message()
    assert reply.get("jsonrpc") == "2.0"
    assert reply.get("id") == case.reply_id, reply
    if case.kind == "tool error":
        result = reply["result"]
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert case.phrase in text
        assert len(text) < 500, "a huge input is echoed back in the error message"
    else:
        assert "result" not in reply
        assert reply["error"]["code"] == case.code
        assert case.phrase in reply["error"]["message"]
        assert len(reply["error"]["message"]) < 500, "a huge input is echoed back in the error message"
        if case.status and peer.name != "stdio":
            assert status == case.status
    assert peer.add(f"after {name}") == 3.0


def test_stdin_closing_still_answers_every_request_read(json_line_peer):
    server = json_line_peer(STDIO_SERVER)
    ids = list(range(1, 21))
    for id in ids:
        server.send(raw_request(id, "tools/call", {"name": "calculator_multiply", "arguments": {"a": id, "b": 2}}))
    assert server.close_stdin() == 0
    replies = {reply["id"]: reply for reply in map(json.loads, server.stdout_lines)}
    assert sorted(replies) == ids
    assert all(replies[id]["result"]["structuredContent"] == {"result": id * 2.0} for id in ids)


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
def test_a_streamed_body_over_the_limit_is_refused_with_its_size(transport):
    """Without Content-Length the guard counts the chunks; the size in the message is exact."""
    chunk = b" " * 65536
    chunks = MAX_MESSAGE_BYTES // len(chunk) + 2
    with http_server(transport) as url, httpx2.Client(timeout=60) as client:
        target = url.replace("/sse", "/messages/?session_id=0") if transport == "sse" else url
        response = client.post(
            target,
            content=(chunk for _ in range(chunks)),
            headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
        )
    assert response.status_code == 413
    assert response.json()["error"]["message"].startswith(
        f"Invalid Request: the message is {chunks * len(chunk):,} bytes"
    )
