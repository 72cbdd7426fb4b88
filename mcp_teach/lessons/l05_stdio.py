"""The exact bytes on a stdio server's pipes (lesson 05), as recorded by :mod:`mcp_teach.wire.stdio_tap`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mcp_teach.display.show import table
from mcp_teach.wire.plain_text import PlainText
from mcp_teach.wire.stdio_tap import TappedLine


def _middle(text: str, width: int | None) -> str:
    """``text`` with its middle cut out if longer than ``width`` (start and end stay visible)."""
    if width is None or len(text) <= width:
        return text
    keep = width - 1
    head = keep * 2 // 3
    return f"{text[:head]}…{text[len(text) - (keep - head) :]}"


def show_stdio(
    lines: Iterable[TappedLine], *, streams: Sequence[str] = ("stdin", "stdout"), width: int | None = 90
) -> PlainText:
    """A table of tapped pipe lines: pipe, direction, size in bytes and the exact bytes (middle cut if long)."""
    rows = [
        (f"#{number}", line.stream, line.direction, str(len(line.data)), _middle(repr(line.data), width))
        for number, line in enumerate((line for line in lines if line.stream in streams), start=1)
    ]
    return table(("#", "pipe", "direction", "bytes", "exactly these bytes (Python bytes literal)"), rows)
