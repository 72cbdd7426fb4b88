"""Open what ``mcp-teach tap`` recorded as a :class:`~mcp_teach.wire.messages.Capture`.

A recording is a log of events (a line arrived, a response started, an event streamed in); a
notebook wants what a ``CaptureTransport`` gives: the JSON-RPC messages in wire order and, for HTTP,
the exchanges. :func:`load_tap` rebuilds both, so ``show``, the diagrams and the explorer work on a
real host's session as on the course's own; :func:`mcp_teach.wire.har.to_har` exports it as HAR 1.2 for a
browser's devtools.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_teach.wire.host_tap_writer import FORMAT_VERSION
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture, Direction, WireMessage, json_or_none
from mcp_teach.wire.sse import SseEvent


class TappedExchange(HttpExchange):
    """An :class:`HttpExchange` as the HTTP tap saw it, plus what HAR wants: URL, versions, reason, wall time."""

    def __init__(self, request: dict[str, Any]) -> None:
        super().__init__(
            request["method"], request["target"], request["headers"], request["body"], started_at=request["at"]
        )
        #: The upstream URL the request went to (credentials redacted).
        self.url: str = request["url"]
        self.http_version: str = request["http_version"]
        #: Wall clock when the request arrived, ISO 8601.
        self.started_time: str = request["time"]
        self.reason = ""
        self.response_http_version = "HTTP/1.1"
        #: Seconds since the tap started when the response's headers arrived.
        self.responded_at: float | None = None
        self.events: list[SseEvent] = []
        self.error: str | None = None

    def respond(self, record: dict[str, Any]) -> None:
        self.status = record["status"]
        self.response_headers = record["headers"]
        self.reason = record["reason"]
        self.response_http_version = record["http_version"]
        self.responded_at = record["at"]


@dataclass
class TapCapture(Capture):
    """A :class:`Capture` loaded from a tap recording, with what only the tap knows."""

    #: The recording's first record: ``transport`` ("stdio" or "http"), ``time``, ``command`` or ``upstream``.
    header: dict[str, Any] = field(default_factory=dict)
    #: Lines that were not JSON (``raw`` records): direction, ``at`` and the exact text.
    raw: list[dict[str, Any]] = field(default_factory=list)
    #: What the server wrote on stderr (stdio), line by line.
    log: list[str] = field(default_factory=list)
    #: The server's exit code (stdio), if the tap saw it exit.
    exit_code: int | None = None

    @property
    def transport(self) -> str:
        return self.header.get("transport", "stdio")


def _messages(direction: Direction, value: Any, at: float) -> list[WireMessage]:
    """A message, or each message of a JSON-RPC batch."""
    items = value if isinstance(value, list) else [value]
    return [WireMessage(direction, item, at) for item in items if isinstance(item, dict)]


class _Loader:
    """Replays the records of one recording into a :class:`TapCapture`."""

    def __init__(self) -> None:
        self.capture = TapCapture()
        self.exchanges: dict[int, TappedExchange] = {}

    def add(self, record: dict[str, Any]) -> None:
        kind, at = record["type"], record.get("at", 0.0)
        if kind == "tap":
            if record.get("version") != FORMAT_VERSION:
                raise ValueError(f"not a version {FORMAT_VERSION} tap recording: {record.get('version')!r}")
            if not self.capture.header:  # a file appended to by several runs keeps the first header
                self.capture.header = record
        elif kind == "jsonrpc":
            self.capture.messages.extend(_messages(record["direction"], record["message"], at))
        elif kind == "raw":
            self.capture.raw.append(record)
        elif kind == "stderr":
            self.capture.log.append(record["text"])
        elif kind == "exit":
            self.capture.exit_code = record["code"]
        elif kind == "http-request":
            self._request(record)
        elif kind in ("http-response", "http-body", "sse-event", "http-end"):
            self._response(kind, record, self.exchanges[record["exchange"]])

    def _request(self, record: dict[str, Any]) -> None:
        exchange = TappedExchange(record)
        self.exchanges[record["exchange"]] = exchange
        self.capture.http.append(exchange)
        if record["body"]:
            self.capture.messages.extend(_messages(CLIENT_TO_SERVER, json_or_none(record["body"]), record["at"]))

    def _response(self, kind: str, record: dict[str, Any], exchange: TappedExchange) -> None:
        if kind == "http-response":
            exchange.respond(record)
        elif kind == "http-body":
            exchange._response_body = record["body"]
            if (exchange.content_type or "").startswith("application/json") and record["body"]:
                self.capture.messages.extend(_messages(SERVER_TO_CLIENT, json_or_none(record["body"]), record["at"]))
        elif kind == "sse-event":
            exchange._response_body += record["raw"]
            exchange.events.append(SseEvent(record["event"], record["data"], record["id"]))
            if record["event"] == "message" and record["data"]:
                self.capture.messages.extend(_messages(SERVER_TO_CLIENT, json_or_none(record["data"]), record["at"]))
        else:
            exchange.ended_at, exchange.error = record["at"], record["error"]


def load_tap(path: str | Path) -> TapCapture:
    """The messages (and HTTP exchanges) a tap recorded in ``path``, as a :class:`Capture`.

    ``at`` is seconds since the tap started. A recording cut off mid-line (the tap was killed) loads up to there.
    """
    loader = _Loader()
    for line in Path(path).read_text(encoding="utf-8").split("\n"):
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError:
                break  # the last line, cut off
            loader.add(record)
    return loader.capture
