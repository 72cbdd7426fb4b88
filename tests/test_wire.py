"""What a capture holds equals what crossed the stdio pipe, byte for byte; and the Capture/WireMessage helpers."""

from __future__ import annotations

import contextlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from fastmcp.client.transports import StdioTransport
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from mcp_teach.client import teaching_client
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import (
    CLIENT_TO_SERVER,
    SERVER_TO_CLIENT,
    Capture,
    WireMessage,
    message_kind,
    wire_dict,
)
from mcp_teach.wire.redact import REDACTED

#: Runs the calculator as its child and copies every byte in both directions to two files.
TEE_SCRIPT = textwrap.dedent(
    """
    import os, subprocess, sys, threading

    to_server_log, to_client_log = sys.argv[1], sys.argv[2]
    child = subprocess.Popen(
        [sys.executable, "-m", "mcp_teach.serve", "--transport", "stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
    )

    def client_to_server():
        with open(to_server_log, "wb") as log:
            while data := os.read(0, 65536):
                log.write(data)
                log.flush()
                child.stdin.write(data)
        child.stdin.close()

    threading.Thread(target=client_to_server, daemon=True).start()
    with open(to_client_log, "wb") as log:
        while data := os.read(child.stdout.fileno(), 65536):
            log.write(data)
            log.flush()
            view = memoryview(data)
            while view:
                view = view[os.write(1, view):]
    sys.exit(child.wait())
    """
)


def _ordered(value: Any) -> Any:
    """A comparable form that keeps key order (plain dict equality ignores it)."""
    if isinstance(value, dict):
        return [(key, _ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value


async def _tee_session(tmp_path: Path, mode: str) -> tuple[Capture, Path, Path]:
    script = tmp_path / "tee.py"
    script.write_text(TEE_SCRIPT)
    to_server, to_client = tmp_path / "to-server.jsonl", tmp_path / "to-client.jsonl"
    inner = StdioTransport(
        sys.executable, [str(script), str(to_server), str(to_client)], log_file=tmp_path / "server.log"
    )
    capture = CaptureTransport(inner)
    async with teaching_client(capture, mode=mode) as client:
        await client.list_tools()
        await client.call_tool("calculator_add", {"a": 0.1, "b": 0.2})
        await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
        with contextlib.suppress(MCPError):  # an unknown tool is a JSON-RPC error: it is on the wire too
            await client.call_tool("calculator_power", {"a": 2, "b": 8})
        await client.call_tool("calculator_multiply", {"a": "three", "b": 2}, raise_on_error=False)
    return capture.capture, to_server, to_client


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_capture_equals_the_bytes_on_the_stdio_pipe(run, tmp_path, mode):
    capture, to_server, to_client = run(_tee_session, tmp_path, mode)
    for path, direction in [(to_server, CLIENT_TO_SERVER), (to_client, SERVER_TO_CLIENT)]:
        raw = path.read_bytes()
        assert raw.endswith(b"\n")
        on_pipe = [json.loads(line) for line in raw.decode("utf-8").split("\n")[:-1]]
        captured = [wire.message for wire in capture if wire.direction == direction]
        assert len(on_pipe) == len(captured) > 3
        assert [_ordered(m) for m in captured] == [_ordered(m) for m in on_pipe]
        assert [json.dumps(m) for m in captured] == [json.dumps(m) for m in on_pipe]
    first = capture[0].method
    assert first == ("initialize" if mode == "legacy" else "server/discover")
    assert capture.methods()[-2:] == ["tools/call", "tools/call (result)"]


def test_wire_dict_matches_the_sdk_serialization():
    request = mcp_types.JSONRPCRequest(
        jsonrpc="2.0", id=7, method="tools/call", params={"name": "calculator_add", "arguments": {"a": 1, "b": 2}}
    )
    message = SessionMessage(request)
    as_dict = wire_dict(message)
    assert as_dict == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "calculator_add", "arguments": {"a": 1, "b": 2}},
    }
    assert list(as_dict) == ["jsonrpc", "id", "method", "params"]
    assert json.dumps(as_dict, separators=(",", ":")) == request.model_dump_json(by_alias=True, exclude_unset=True)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "request"),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "response"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}, "error"),
        ({"jsonrpc": "2.0", "id": 1}, "invalid"),
        ({"raw": "this is not json"}, "invalid"),
    ],
)
def test_message_kind(message, kind):
    assert message_kind(message) == kind
    assert WireMessage(CLIENT_TO_SERVER, message).kind == kind


def test_wire_message_needs_exactly_one_source():
    with pytest.raises(ValueError, match="either"):
        WireMessage(CLIENT_TO_SERVER)
    source = SessionMessage(mcp_types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"))
    with pytest.raises(ValueError, match="either"):
        WireMessage(CLIENT_TO_SERVER, {"jsonrpc": "2.0"}, source=source)


def test_live_messages_are_converted_and_redacted_when_read():
    secret = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX"
    source = SessionMessage(
        mcp_types.JSONRPCRequest(
            jsonrpc="2.0", id=3, method="tools/call", params={"name": "echo", "arguments": {"key": secret}}
        )
    )
    capture = Capture()
    capture.record(CLIENT_TO_SERVER, source, 12.5)
    wire = capture[0]
    assert (wire.direction, wire.at, wire.method, wire.id, wire.kind) == (
        CLIENT_TO_SERVER,
        12.5,
        "tools/call",
        3,
        "request",
    )
    assert wire.message["params"]["arguments"] == {"key": REDACTED}
    assert secret not in json.dumps(wire.message)
    assert wire.message is wire.message  # converted once
    assert repr(wire) == "<WireMessage client->server tools/call id=3>"


def _hand_made() -> Capture:
    def wire(direction, message, at):
        return WireMessage(direction, message, at)

    return Capture(
        [
            wire(CLIENT_TO_SERVER, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 1.0),
            wire(CLIENT_TO_SERVER, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}, 2.0),
            wire(SERVER_TO_CLIENT, {"jsonrpc": "2.0", "id": 7, "method": "ping"}, 2.5),
            wire(SERVER_TO_CLIENT, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad"}}, 3.0),
            wire(SERVER_TO_CLIENT, {"jsonrpc": "2.0", "id": 99, "result": {}}, 4.0),
            wire(CLIENT_TO_SERVER, {"jsonrpc": "2.0", "id": 7, "result": {}}, 5.0),
            wire(SERVER_TO_CLIENT, {"jsonrpc": "2.0", "id": 1}, 6.0),
        ]
    )


def test_methods_name_results_errors_and_orphans():
    assert _hand_made().methods() == [
        "tools/list",
        "tools/call",
        "ping",
        "tools/call (error)",
        "? (result)",
        "ping (result)",
        "(invalid)",
    ]


def test_pairing_handles_errors_missing_responses_and_server_requests():
    capture = _hand_made()
    tools_list, tools_call, ping, error, orphan, pong, invalid = capture.messages
    assert capture.pairs() == [(tools_list, None), (tools_call, error), (ping, pong)]
    assert capture.response_to(tools_call) is error
    assert capture.request_for(error) is tools_call
    assert capture.request_for(orphan) is None
    assert capture.request_for(pong) is ping  # a server->client request is answered client->server
    assert capture.requests("tools/call") == [tools_call]
    assert capture.requests() == [tools_list, tools_call, ping]
    assert capture.response_to(tools_list) is None  # an invalid message with the same id answers nothing
    assert invalid.kind == "invalid"


def test_a_foreign_message_is_rejected():
    capture = _hand_made()
    stranger = WireMessage(CLIENT_TO_SERVER, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 1.0)
    assert stranger == capture[0]  # equal, but not the same object
    with pytest.raises(ValueError, match="not part of this capture"):
        capture.response_to(stranger)


def test_selection():
    capture = _hand_made()
    errors = Capture.of(w for w in capture if w.kind == "error")
    assert [w.id for w in errors] == [2]
    assert errors.messages == [w for w in capture if w.kind == "error"]


def test_equality_compares_direction_time_and_message():
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert WireMessage(CLIENT_TO_SERVER, message, 1.0) == WireMessage(CLIENT_TO_SERVER, dict(message), 1.0)
    assert WireMessage(CLIENT_TO_SERVER, message, 1.0) != WireMessage(SERVER_TO_CLIENT, message, 1.0)
    assert WireMessage(CLIENT_TO_SERVER, message, 1.0) != WireMessage(CLIENT_TO_SERVER, message, 2.0)
    assert WireMessage(CLIENT_TO_SERVER, message, 1.0) != message
