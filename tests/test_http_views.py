"""mcp_teach.display.http_views: recorded exchanges shown in full and one row each."""

from __future__ import annotations

import asyncio

import pytest
from l05_support import record_sessions

from mcp_teach.display.http_views import PROTOCOL_HEADERS, show_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.http_recording import HttpExchange


@pytest.fixture(scope="module")
def sessions() -> dict[tuple[str, str], CaptureTransport]:
    return asyncio.run(record_sessions())


def test_show_http_finds_the_messages_of_an_sse_stream_and_its_posts(sessions):
    capture = sessions["sse", "legacy"]
    text = show_http(capture, numbers=[1, 2]).text()
    assert "→ GET /sse    [no body]" in text
    assert "← 200 OK    [carries result id=1, result id=2, result id=3, result id=4]" in text
    assert "  │ event: endpoint" in text
    assert "→ POST /messages/?session_id=" in text and "[carries initialize id=1]" in text
    assert "← 202 Accepted    [no JSON-RPC]" in text


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
