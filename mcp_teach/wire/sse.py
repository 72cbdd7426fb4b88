"""Parse ``text/event-stream``: the server-sent events that SSE and streamable HTTP send."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: An event ends with a blank line (``\n\n``, ``\r\n\r\n`` or ``\r\r``).
EVENT_END = re.compile(r"\r\n\r\n|\n\n|\r\r")


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: ``event`` (``message`` if the stream names none), its ``data`` and optional ``id``."""

    event: str
    data: str
    id: str | None = None


def parse_event(block: str) -> SseEvent | None:
    """The event in one block of lines (``:`` lines are comments); None for a block without data."""
    fields: dict[str, list[str]] = {}
    for line in re.split(r"\r\n|\n|\r", block):
        if line and not line.startswith(":"):
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
    if "data" not in fields:
        return None
    return SseEvent(fields.get("event", ["message"])[-1], "\n".join(fields["data"]), fields.get("id", [None])[-1])


def sse_events(body: str) -> list[SseEvent]:
    """Parse a whole ``text/event-stream`` body: events end with a blank line."""
    return [event for block in EVENT_END.split(body) if (event := parse_event(block)) is not None]
