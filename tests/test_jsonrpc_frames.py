"""mcp_teach.transports.frames: every frame is either a JSON-RPC message or a rejection that says what to fix."""

from __future__ import annotations

import json

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_teach.transports.frames import (
    HOW_TO_SEND,
    Rejected,
    check_frame,
    is_misplaced_notification,
    read_frame,
    too_large,
)


def rejection(data: bytes, **options: int) -> tuple[types.RequestId | None, int, str]:
    checked = check_frame(data, **options)
    assert isinstance(checked, Rejected), checked
    return checked.reply.id, checked.reply.error.code, checked.reply.error.message


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, types.JSONRPCRequest),
        ({"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}}, types.JSONRPCRequest),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, types.JSONRPCNotification),
        ({"jsonrpc": "2.0", "id": 7, "result": {}}, types.JSONRPCResponse),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "no"}}, types.JSONRPCError),
    ],
)
def test_json_rpc_messages_pass(message, kind):
    assert type(check_frame(json.dumps(message).encode())) is kind


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            b"{not json",
            (None, -32700, "Parse error: not valid JSON (Expecting property name enclosed in double quotes"),
        ),
        (b"\xff\xfe{}", (None, -32700, "Parse error: the message is not UTF-8 text (byte 0xff at position 0)")),
        (b"[1, 2]", (None, -32600, "Invalid Request: got a JSON array (a batch)")),
        (b"42", (None, -32600, 'Invalid Request: got a JSON number; a JSON-RPC message is an object with "jsonrpc"')),
        (b'{"id": 3, "method": "ping"}', (3, -32600, 'Invalid Request: "jsonrpc" must be "2.0" (it is missing).')),
        (
            b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}',
            (3, -32600, 'Invalid Request: "jsonrpc" must be "2.0" (got "1.0")'),
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
            (None, -32600, 'Invalid Request: "id" must be a string or an integer (got number)'),
        ),
        (
            b'{"jsonrpc": "2.0", "id": null, "method": "ping"}',
            (None, -32600, 'Invalid Request: "id" must be a string or an integer (got null)'),
        ),
        (
            b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
            (None, -32600, '"id" must be a string or an integer (got boolean)'),
        ),
        (b'{"jsonrpc": "2.0", "id": 4}', (4, -32600, 'Invalid Request: a request needs a "method"')),
        (b'{"jsonrpc": "2.0", "id": 5, "method": 12}', (5, -32600, 'Invalid Request: "method" must be a string')),
        (
            b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": [1]}',
            (6, -32600, '"params" must be an object (got array)'),
        ),
    ],
)
def test_unreadable_frames_are_rejected_with_a_reason(data, expected):
    id, code, message = rejection(data)
    assert (id, code) == expected[:2]
    assert message.startswith(expected[2]) or expected[2] in message


def test_the_size_limit_is_checked_before_parsing():
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 100}}).encode()
    id, code, message = rejection(frame, limit=64)
    assert (id, code) == (None, -32600)
    assert (
        message
        == f"Invalid Request: the message is {len(frame):,} bytes; this server accepts at most 64 bytes per message."
    )
    assert too_large(5_000_000).reply.error.message.endswith("at most 4,194,304 bytes per message.")


def test_parse_errors_tell_how_to_send():
    assert check_frame(b"{").reply.error.message.endswith(
        "Send each JSON-RPC message as one UTF-8 JSON object (over stdio: one per line)."
    )


def test_json_that_python_cannot_read_is_a_parse_error_too():
    assert rejection(b"1" * 5000)[1:] == (-32700, "Parse error: a number has more than 4300 digits. " + HOW_TO_SEND)
    assert rejection(b"[" * 100_000)[1:] == (
        -32700,
        "Parse error: the JSON is nested too deeply to read. " + HOW_TO_SEND,
    )


def test_misplaced_notifications_are_requests_without_an_id():
    call = check_frame(b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "calculator_add"}}')
    initialized = check_frame(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert is_misplaced_notification(call)
    assert not is_misplaced_notification(initialized)
    assert not is_misplaced_notification(check_frame(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}'))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        JSON_VALUES.map(lambda value: {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"v": value}}),
        JSON_VALUES,
    ).map(lambda value: json.dumps(value).encode())
    | st.binary(max_size=40)
)
def test_the_fast_parser_reads_exactly_what_json_loads_reads(data):
    """``read_frame`` parses with pydantic-core first: it must accept and refuse the same frames as ``json.loads``."""
    try:
        expected = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        assert isinstance(read_frame(data), Rejected)
        return
    found = read_frame(data)
    if isinstance(found, Rejected):
        assert found.reply.error.code == types.INVALID_REQUEST  # valid JSON, not a JSON-RPC message
    else:
        assert json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)
