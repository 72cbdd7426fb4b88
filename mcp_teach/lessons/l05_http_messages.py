"""The JSON-RPC messages one recorded HTTP exchange carried (lesson 05): in its request, and back in its response."""

from __future__ import annotations

import json
from typing import Any

from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.sse import sse_events


def message_label(message: Any) -> str:
    """A message named short: ``tools/call id=3``, ``notifications/initialized``, ``result id=3``, ``error id=3``."""
    if isinstance(message, list):
        return "batch: " + ", ".join(message_label(m) for m in message)
    if not isinstance(message, dict):
        return "(not JSON-RPC)"
    if "method" in message:
        return f"{message['method']} id={message['id']}" if "id" in message else message["method"]
    kind = "error" if "error" in message else "result"
    return f"{kind} id={message.get('id')}"


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def sent_messages(exchange: HttpExchange) -> list[Any]:
    """The JSON-RPC message(s) in the request body (none for GET and DELETE)."""
    message = _json_or_none(exchange.request_body) if exchange.request_body else None
    return [] if message is None else [message]


def received_messages(exchange: HttpExchange) -> list[Any]:
    """The JSON-RPC messages in the response: a JSON body, or the ``message`` events of an event stream."""
    content_type = exchange.content_type or ""
    if content_type.startswith("text/event-stream"):
        return [m for e in sse_events(exchange.response_body) if e.event == "message" and (m := _json_or_none(e.data))]
    if content_type.startswith("application/json") and exchange.response_body:
        message = _json_or_none(exchange.response_body)
        return [] if message is None else [message]
    return []
