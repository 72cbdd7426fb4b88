"""Compare captures message by message (lesson 05): the proof that every transport carries the same JSON-RPC.

:func:`diff_captures` names every field that differs, or says the captures are identical.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_teach.display.show import COLOURS, table
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture
from mcp_teach.wire.plain_text import PlainText

ARROWS = {CLIENT_TO_SERVER: "client → server", SERVER_TO_CLIENT: "server → client"}


def _as_capture(source: Any) -> Capture:
    capture = getattr(source, "capture", source)  # a CaptureTransport compares as its capture
    if isinstance(capture, Capture):
        return capture
    return Capture(list(capture))


def differing_paths(a: Any, b: Any, path: str = "") -> list[str]:
    """Dotted paths where two JSON values differ (``""`` for the values themselves).

    A key present on one side only is a difference at that key; lists of
    different lengths differ as a whole.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in [*a, *(k for k in b if k not in a)]:
            child = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                found.append(child)
            else:
                found += differing_paths(a[key], b[key], child)
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        found = []
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found += differing_paths(x, y, f"{path}.{index}" if path else str(index))
        return found
    if type(a) is not type(b) or a != b:  # 3 and 3.0, or True and 1, are different JSON
        return [path]
    return []


@dataclass(frozen=True)
class DiffRow:
    """One position of the compared captures."""

    number: int
    direction: str
    label: str
    #: Per compared capture (all but the first): ``None`` if the message equals the first capture's, else the
    #: differing paths (``["direction"]``: it goes the other way; ``["(missing)"]``: that capture is shorter;
    #: ``["(extra: <message>)"]``: only that capture has a message here).
    differences: tuple[list[str] | None, ...]


class CaptureDiff(PlainText):
    """Captures compared position by position against the first one."""

    def __init__(self, names: Sequence[str], rows: list[DiffRow], max_paths: int = 4) -> None:
        self.names = tuple(names)
        self.rows = rows
        self._max_paths = max_paths

    @property
    def identical(self) -> bool:
        """True if every capture has the same messages, in the same order and directions, as the first."""
        return all(d is None for row in self.rows for d in row.differences)

    def differences(self) -> list[tuple[int, str, list[str]]]:
        """``(message number, capture name, differing paths)`` for every message that differs."""
        return [
            (row.number, name, paths)
            for row in self.rows
            for name, paths in zip(self.names[1:], row.differences, strict=True)
            if paths is not None
        ]

    def _cell(self, paths: list[str] | None) -> str:
        if paths is None:
            return "same"
        if paths == [""]:
            return "differs: whole message"
        if len(paths) == 1 and paths[0].startswith("("):
            return paths[0][1:-1]
        shown = ", ".join(paths[: self._max_paths])
        more = f", … (+{len(paths) - self._max_paths})" if len(paths) > self._max_paths else ""
        return f"differs: {shown}{more}"

    def verdict(self) -> str:
        """One sentence saying what the comparison found."""
        count = len(self.rows)
        if self.identical:
            captures = "both captures" if len(self.names) == 2 else f"all {len(self.names)} captures"
            return f"identical: all {count} messages are equal in {captures} (as JSON values)"
        differing = len({number for number, _, _ in self.differences()})
        return f"{differing} of {count} positions differ"

    def _table(self) -> PlainText:
        header = ["#", "direction", f"message ({self.names[0]})", *self.names[1:]]
        rows = [
            [f"#{row.number}", row.direction, row.label, *(self._cell(d) for d in row.differences)] for row in self.rows
        ]
        return table(header, rows)

    def text(self) -> str:
        return f"{self._table()!r}\n{self.verdict()}"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.identical else COLOURS["error"]
        return f"{self._table()._repr_html_()}<p style='color: {colour}'><b>{html.escape(self.verdict())}</b></p>"


def diff_captures(captures: Mapping[str, Any], *, max_paths: int = 4) -> CaptureDiff:
    """Compare captures message by message against the first one.

    ``captures`` maps a name to a ``Capture`` (or ``CaptureTransport``). Two
    messages are the same when they go the same direction and are equal JSON
    values (key order aside); otherwise the row names the fields that differ.
    """
    names = list(captures)
    if len(names) < 2:
        raise ValueError("give at least two captures to compare")
    lists = [_as_capture(captures[name]) for name in names]
    reference = lists[0]
    labels = [c.methods() for c in lists]
    rows = []
    for index in range(max(len(c) for c in lists)):
        base = reference[index] if index < len(reference) else None
        cells: list[list[str] | None] = []
        for number, other in enumerate(lists[1:], start=1):
            if index >= len(other):
                cells.append(["(missing)"])
            elif base is None:
                cells.append([f"(extra: {labels[number][index]})"])
            elif other[index].direction != base.direction:
                cells.append(["direction"])
            else:
                paths = differing_paths(base.message, other[index].message)
                cells.append(paths or None)
        if base is not None:
            direction, label = ARROWS[base.direction], labels[0][index]
        else:
            direction, label = "", "—"
        rows.append(DiffRow(index + 1, direction, label, tuple(cells)))
    return CaptureDiff(names, rows, max_paths)
