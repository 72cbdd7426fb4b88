"""mcp_teach.lessons.l05_http_messages: the JSON-RPC of a recorded SSE session, found in its HTTP exchanges."""

from __future__ import annotations

import asyncio

import pytest
from l05_support import record_sessions

from mcp_teach.lessons.l05_http_messages import received_messages, sent_messages
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT
from mcp_teach.wire.sse import sse_events


@pytest.fixture(scope="module")
def sessions() -> dict[tuple[str, str], CaptureTransport]:
    return asyncio.run(record_sessions())


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
