"""One timeline of a tool-calling loop: user, client, LLM and server, in the order things happened."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_teach.wire.messages import Capture, WireMessage
from mcp_teach.wire.plain_text import PlainText
from mcp_teach.wire.redact import redact_json

Actor = Literal["user", "client", "llm", "server"]
ACTORS: tuple[Actor, ...] = ("user", "client", "llm", "server")


@dataclass(frozen=True)
class TraceEvent:
    """One message between two actors."""

    at: float
    sender: Actor
    receiver: Actor
    #: ``question``, ``llm-request``, ``llm-response``, ``jsonrpc`` or ``answer``.
    kind: str
    label: str
    payload: Any

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "payload": redact_json(self.payload)}


def short(value: Any, limit: int = 60) -> str:
    """``value`` (text, or anything as JSON) on one line of at most ``limit`` characters: an event's label."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def jsonrpc_event(wire: WireMessage, capture: Capture) -> TraceEvent:
    """An MCP message as a trace event between client and server."""
    if wire.method is not None:
        label = f"{wire.method} id={wire.id}" if wire.kind == "request" else wire.method
    else:
        request = capture.request_for(wire)
        outcome = "error" if wire.kind == "error" else "result"
        is_error = wire.message.get("result", {}).get("isError") is True
        label = f"{outcome} of {request.method if request else '?'} id={wire.id}" + (" (isError)" if is_error else "")
    sender, receiver = ("client", "server") if wire.direction == "client->server" else ("server", "client")
    return TraceEvent(wire.at, sender, receiver, "jsonrpc", label, wire.message)


@dataclass(repr=False)
class Trace(PlainText):
    """The events of one question, in time order."""

    events: list[TraceEvent] = field(default_factory=list)

    def merge_capture(self, capture: Capture, start: int) -> None:
        """Add the MCP messages ``capture`` recorded from index ``start`` on, keeping time order."""
        self.events.extend(jsonrpc_event(wire, capture) for wire in capture.messages[start:])
        self.events.sort(key=lambda event: event.at)

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def of_kind(self, kind: str) -> list[TraceEvent]:
        return [event for event in self.events if event.kind == kind]

    def text(self) -> str:
        """The timeline, one line per event: ``#3 llm → client  tool_calls: calculator_add(...)``."""
        return "\n".join(
            f"#{number} {event.sender} → {event.receiver}  {event.label}"
            for number, event in enumerate(self.events, start=1)
        )
