"""What a capture holds: JSON-RPC messages in wire order, with their direction.

A :class:`Capture` is a list of :class:`WireMessage` objects plus the helpers a
lesson needs: pairing a response with its request and the sequence of methods.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp.shared.message import SessionMessage

from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.redact import redact_json

Direction = Literal["client->server", "server->client"]
Kind = Literal["request", "notification", "response", "error", "invalid"]

CLIENT_TO_SERVER: Direction = "client->server"
SERVER_TO_CLIENT: Direction = "server->client"


def wire_dict(message: SessionMessage) -> dict[str, Any]:
    """The message as the JSON object a transport writes (key order included)."""
    return message.message.model_dump(by_alias=True, mode="json", exclude_unset=True)


def json_or_none(text: str) -> Any:
    """``text`` as JSON, or None if it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def message_kind(message: dict[str, Any]) -> Kind:
    """Classify a JSON-RPC message the way the specification does (``invalid``: none of the four)."""
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "error" if "error" in message else "response" if "result" in message else "invalid"


class WireMessage:
    """One JSON-RPC message exactly as it crossed the wire.

    A live capture keeps the SDK's message object and turns it into the wire
    dict (credentials redacted) only when the lesson looks at it, so recording
    costs next to nothing on the hot path.
    """

    __slots__ = ("_message", "_source", "at", "direction")

    def __init__(
        self,
        direction: Direction,
        message: dict[str, Any] | None = None,
        at: float = 0.0,
        *,
        source: SessionMessage | None = None,
    ) -> None:
        if (message is None) == (source is None):
            raise ValueError("give either the message dict or the SessionMessage it came from")
        self.direction = direction
        #: ``time.monotonic()`` when the message crossed the transport.
        self.at = at
        self._message = message
        self._source = source

    @property
    def message(self) -> dict[str, Any]:
        """The JSON object on the wire (key order included), credentials redacted."""
        if self._message is None:
            self._message = redact_json(wire_dict(self._source))
            self._source = None
        return self._message

    @property
    def kind(self) -> Kind:
        return message_kind(self.message)

    @property
    def method(self) -> str | None:
        return self.message.get("method")

    @property
    def id(self) -> int | str | None:
        return self.message.get("id")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WireMessage):
            return NotImplemented
        return (self.direction, self.at, self.message) == (other.direction, other.at, other.message)

    def __repr__(self) -> str:
        return f"<WireMessage {self.direction} {self.method or self.kind} id={self.id!r}>"


@dataclass
class Capture:
    """The messages of one or more sessions, in the order they crossed the wire."""

    messages: list[WireMessage] = field(default_factory=list)
    #: HTTP exchanges under the messages (SSE and streamable HTTP only).
    http: list[HttpExchange] = field(default_factory=list)

    def record(self, direction: Direction, message: SessionMessage, at: float) -> None:
        """Append a message as it crosses the transport (converted lazily)."""
        self.messages.append(WireMessage(direction, at=at, source=message))

    def clear(self) -> None:
        """Forget everything recorded so far (the connection stays open)."""
        self.messages.clear()
        self.http.clear()

    def __iter__(self) -> Iterator[WireMessage]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def __getitem__(self, index: int) -> WireMessage:
        return self.messages[index]

    def methods(self) -> list[str]:
        """Method names in order; a response is named ``"<method> (result)"`` or ``"(error)"``."""
        return [self._method_name(wire) for wire in self.messages]

    def _method_name(self, wire: WireMessage) -> str:
        if wire.method is not None:
            return wire.method
        if wire.kind == "invalid":
            return "(invalid)"
        request = self.request_for(wire)
        return f"{request.method if request else '?'} ({'error' if wire.kind == 'error' else 'result'})"

    def requests(self, method: str | None = None) -> list[WireMessage]:
        """Requests (optionally only those of ``method``), in order."""
        return [w for w in self.messages if w.kind == "request" and method in (None, w.method)]

    def request_for(self, response: WireMessage) -> WireMessage | None:
        """The request a response answers: same id, opposite direction, sent before it."""
        earlier = reversed(self.messages[: self._index(response)])
        return next((w for w in earlier if w.kind == "request" and _answers(response, w)), None)

    def response_to(self, request: WireMessage) -> WireMessage | None:
        """The response (result or error) that answers ``request``, if it arrived."""
        later = self.messages[self._index(request) + 1 :]
        return next((w for w in later if w.kind in ("response", "error") and _answers(w, request)), None)

    def pairs(self) -> list[tuple[WireMessage, WireMessage | None]]:
        """Every request with its response (``None`` if none came back)."""
        return [(request, self.response_to(request)) for request in self.requests()]

    @classmethod
    def of(cls, messages: Iterable[WireMessage]) -> Capture:
        """A capture holding a selection of another capture's messages."""
        return cls(list(messages))

    def _index(self, wire: WireMessage) -> int:
        for index, candidate in enumerate(self.messages):
            if candidate is wire:
                return index
        raise ValueError("message is not part of this capture")


def _answers(response: WireMessage, request: WireMessage) -> bool:
    """Same id, opposite direction: what a response and the request it answers have in common."""
    return response.id == request.id and response.direction != request.direction


def as_capture(source: Capture | WireMessage | Iterable[WireMessage] | Any) -> Capture:
    """The capture behind what a lesson holds: a ``CaptureTransport`` (its ``.capture``), a capture, one message
    or a list of them; every view and check accepts all four."""
    capture = getattr(source, "capture", source)
    if isinstance(capture, Capture):
        return capture
    return Capture([capture]) if isinstance(capture, WireMessage) else Capture(list(capture))
