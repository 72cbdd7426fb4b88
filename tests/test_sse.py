"""mcp_teach.wire.sse: fields, comments and every line ending of an event stream."""

from __future__ import annotations

from mcp_teach.wire.sse import SseEvent, sse_events


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
