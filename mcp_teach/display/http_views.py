"""Recorded HTTP exchanges made readable (lessons 05, 12): :func:`show_http` shows the request line, the
protocol-relevant headers and the body, then the status, headers and body of the response, as plain text and HTML.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from mcp_teach.display.show import COLOURS, titled_html, titled_text
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture, json_or_none
from mcp_teach.wire.plain_text import PlainText
from mcp_teach.wire.sse import sse_events

#: Headers that carry MCP meaning; the rest (date, host, user-agent, content-length, ...) is HTTP plumbing.
PROTOCOL_HEADERS = (
    "accept", "content-type", "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id"
)  # fmt: skip
#: Headers that change from run to run or machine to machine; never shown even with ``headers=None``.
UNSTABLE_HEADERS = frozenset({"date", "host", "user-agent"})
#: How a body starts in HTML.
_PRE = "<pre style='margin: 4px 0 0 0; padding: 4px; background: #f6f8fa; white-space: pre-wrap'>"


def _message_label(message: Any) -> str:
    """A message named short: ``tools/call id=3``, ``notifications/initialized``, ``result id=3``, ``error id=3``."""
    if isinstance(message, list):
        return "batch: " + ", ".join(_message_label(m) for m in message)
    if not isinstance(message, dict):
        return "(not JSON-RPC)"
    if "method" in message:
        return f"{message['method']} id={message['id']}" if "id" in message else message["method"]
    return f"{'error' if 'error' in message else 'result'} id={message.get('id')}"


def _received_messages(exchange: HttpExchange) -> list[Any]:
    """The JSON-RPC messages in the response: a JSON body, or the ``message`` events of an event stream."""
    content_type = exchange.content_type or ""
    if content_type.startswith("text/event-stream"):
        return [m for e in sse_events(exchange.response_body) if e.event == "message" and (m := json_or_none(e.data))]
    message = json_or_none(exchange.response_body) if content_type.startswith("application/json") else None
    return [] if message is None else [message]


def _http_exchanges(source: Any) -> list[HttpExchange]:
    if isinstance(source, HttpExchange):
        return [source]
    capture = getattr(source, "capture", source)
    return list(capture.http) if isinstance(capture, Capture) else list(source)


def status_line(status: int | None) -> str:
    """``404 Not Found``; ``(no response)`` before one arrived."""
    if status is None:
        return "(no response)"
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _cut(line: str, width: int | None) -> str:
    """``line`` cut to ``width`` characters, saying how many were left out."""
    return line if width is None or len(line) <= width else f"{line[:width]}…  (+{len(line) - width} characters)"


def _select(headers: Mapping[str, str], wanted: Sequence[str] | None) -> list[tuple[str, str]]:
    if wanted is None:
        return [(k, v) for k, v in headers.items() if k not in UNSTABLE_HEADERS]
    return [(name, headers[name]) for name in wanted if name in headers]


@dataclass(frozen=True)
class _Part:
    """One half of an exchange: first line, headers, body lines."""

    first: str
    headers: list[tuple[str, str]]
    body: list[str]
    note: str


def _parts(exchange: HttpExchange, headers: Sequence[str] | None, width: int | None) -> tuple[_Part, _Part]:
    def part(first: str, found: Mapping[str, str], body: str, note: str) -> _Part:
        lines = [_cut(line, width) for line in re.split(r"\r\n|\n|\r", body.rstrip("\r\n"))] if body else []
        return _Part(first, _select(found, headers), lines, note)

    # The request body holds one JSON-RPC message or none (GET, DELETE); an empty body is no JSON either.
    sent = _message_label(message) if (message := json_or_none(exchange.request_body)) is not None else ""
    received = ", ".join(_message_label(m) for m in _received_messages(exchange))
    silent = "empty body" if not exchange.response_body else "no JSON-RPC"
    sent_note, received_note = f"carries {sent}" if sent else "no body", f"carries {received}" if received else silent
    request = part(f"{exchange.method} {exchange.target}", exchange.request_headers, exchange.request_body, sent_note)
    response = part(status_line(exchange.status), exchange.response_headers, exchange.response_body, received_note)
    return request, response


def exchange_lines(first: str, headers: Iterable[tuple[str, str]], body: list[str]) -> list[str]:
    """One half of an exchange as text: its first line, its headers indented, then its body behind ``│``."""
    lines = [first, *(f"  {name}: {value}" for name, value in headers)]
    return [*lines, "  │", *(f"  │ {line}" for line in body)] if body else lines


@dataclass(frozen=True, repr=False)
class HttpView(PlainText):
    """What :func:`show_http` returns: HTML in Jupyter, plain text elsewhere."""

    _exchanges: list[tuple[int, HttpExchange]]
    _headers: Sequence[str] | None
    _width: int | None
    _title: str | None

    def text(self) -> str:
        """The plain-text form (what GitHub and nbval compare)."""
        blocks = []
        for number, exchange in self._exchanges:
            request, response = _parts(exchange, self._headers, self._width)
            lines = [f"── HTTP exchange #{number} " + "─" * 40]
            for arrow, part in (("→", request), ("←", response)):
                lines += exchange_lines(f"{arrow} {part.first}    [{part.note}]", part.headers, part.body)
            blocks.append("\n".join(lines))
        return titled_text(self._title, blocks, "(no HTTP exchanges)")

    def _repr_html_(self) -> str:
        out = []
        for number, exchange in self._exchanges:
            request, response = _parts(exchange, self._headers, self._width)
            headline = f"#{number} {exchange.method} {exchange.target} → {status_line(exchange.status)}"
            out.append(
                f'<details open style="border-left: 4px solid #8c959f; margin: 6px 0; padding-left: 8px">'
                f'<summary style="cursor: pointer; font-family: monospace">{html.escape(headline)}</summary>'
            )
            for part, colour in ((request, COLOURS[CLIENT_TO_SERVER]), (response, COLOURS[SERVER_TO_CLIENT])):
                head = "".join(
                    f"<div><span style='color: #6e7781'>{html.escape(name)}:</span> {html.escape(value)}</div>"
                    for name, value in part.headers
                )
                text = html.escape("\n".join(part.body))
                body = f"{_PRE}{text}</pre>" if part.body else ""
                out.append(
                    f"<div style='border-left: 3px solid {colour}; padding-left: 6px; margin: 4px 0; "
                    f"font-family: monospace'><b>{html.escape(part.first)}</b> "
                    f"<span style='color: #6e7781'>[{html.escape(part.note)}]</span>{head}{body}</div>"
                )
            out.append("</details>")
        return titled_html("mcp-teach-http", self._title, out, "(no HTTP exchanges)")


def show_http(
    source: Any,
    *,
    numbers: Iterable[int] | None = None,
    headers: Sequence[str] | None = PROTOCOL_HEADERS,
    width: int | None = 100,
    title: str | None = None,
) -> HttpView:
    """Render recorded HTTP exchanges: ``→`` the request, ``←`` the response, each with headers and body.

    ``source`` is a ``Capture``/``CaptureTransport`` (its ``.http``), a list of
    exchanges or one exchange. ``numbers`` keeps only those exchanges (1-based,
    as numbered in the full list). ``headers`` are the headers shown, in that
    order (default: the MCP-relevant ones; ``None``: all but date, host and
    user-agent). Body lines longer than ``width`` are cut, saying by how much.
    """
    keep = None if numbers is None else set(numbers)
    exchanges = [(n, e) for n, e in enumerate(_http_exchanges(source), start=1) if keep is None or n in keep]
    return HttpView(exchanges, headers, width, title)
