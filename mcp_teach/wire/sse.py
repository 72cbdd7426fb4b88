"""Parse a recorded ``text/event-stream`` body: the server-sent events that SSE and streamable HTTP send."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: ``event`` (``message`` if the stream names none), its ``data`` and optional ``id``."""

    event: str
    data: str
    id: str | None = None


def sse_events(body: str) -> list[SseEvent]:
    """Parse a ``text/event-stream`` body: events end with a blank line; ``:`` lines are comments."""
    events = []
    for block in re.split(r"\r\n\r\n|\n\n|\r\r", body):
        fields: dict[str, list[str]] = {}
        for line in re.split(r"\r\n|\n|\r", block):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
        if "data" in fields:
            event = fields.get("event", ["message"])[-1]
            events.append(SseEvent(event, "\n".join(fields["data"]), fields.get("id", [None])[-1]))
    return events
