"""Compare JSON values and whole captures field by field: which paths differ, and what each side sent.

Two uses in the course: showing that the same session is the same JSON-RPC on every transport (nothing differs),
and showing what one server sends that another does not (fastmcp against a low-level ``Server``)::

    diff = diff_captures({"fastmcp": fast, "low-level": low})   # message by message against the first
    diff                 # one row per message: same, or the fields that differ
    diff.fields()        # every differing field with both values, tools.3.title grouped as tools.*.title

Paths are dotted (``result.tools.0.inputSchema``); a key on one side only is a difference at that key, lists of
different lengths differ as a whole, and ``3`` and ``3.0`` (or ``1`` and ``true``) are different JSON.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_teach.display.show import ARROWS, COLOURS, table
from mcp_teach.llm.trace import short
from mcp_teach.wire.messages import as_capture
from mcp_teach.wire.plain_text import PlainText


class _Missing:
    """The value on the side that has no such field (shown as ``—``)."""

    def __repr__(self) -> str:
        return "—"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Difference:
    """One leaf where two JSON values differ: its path and the value on each side (:data:`MISSING`: not there)."""

    path: str
    first: Any
    other: Any


def json_differences(a: Any, b: Any, path: str = "") -> list[Difference]:
    """Every leaf where ``a`` and ``b`` differ, in ``a``'s key order then ``b``'s extra keys (``""``: the values)."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):  # compared item by item, keyed by index
        a, b = dict(enumerate(a)), dict(enumerate(b))
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in [*a, *(k for k in b if k not in a)]:
            child = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                found.append(Difference(child, a.get(key, MISSING), b.get(key, MISSING)))
            else:
                found += json_differences(a[key], b[key], child)
        return found
    return [Difference(path, a, b)] if type(a) is not type(b) or a != b else []


def grouped(path: str) -> str:
    """``result.tools.3.title`` -> ``result.tools.*.title``: the same field of every list item is one finding."""
    return re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", path)


def _message_numbers(numbers: list[int]) -> str:
    """``#1, #2, #3 (+2)``: the first three message numbers, and how many more there are."""
    return ", ".join(f"#{n}" for n in numbers[:3]) + (f" (+{len(numbers) - 3})" if len(numbers) > 3 else "")


def _shown(value: Any, width: int) -> str:
    return short("—" if value is MISSING else json.dumps(value, ensure_ascii=False), width)


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
    #: Per compared capture: the differing fields with both values (empty where the messages are not comparable).
    fields: tuple[list[Difference], ...] = ()


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

    def fields(self, name: str | None = None, *, width: int = 22) -> PlainText:
        """A table of the differing fields with both values (cut to ``width``): a field of every tool is one row
        (``×4``), and a field that differs the same way in several messages is one row naming them all. Where
        every field is inside ``result``, the paths start below it."""
        index = self.names.index(name or self.names[1]) - 1
        found = [(row, difference) for row in self.rows if row.fields for difference in row.fields[index]]
        prefix = "result." if found and all(d.path.startswith("result.") for _, d in found) else ""
        in_message: dict[tuple[int, str, bool, bool], list[Difference]] = {}
        for row, difference in found:
            path = grouped(difference.path.removeprefix(prefix))
            key = (row.number, path, difference.first is MISSING, difference.other is MISSING)
            in_message.setdefault(key, []).append(difference)
        merged: dict[tuple[str, str, str], list[int]] = {}
        for (number, path, _, _), found in in_message.items():
            shown = (f"{path} (×{len(found)})" if len(found) > 1 else path, found[0].first, found[0].other)
            merged.setdefault((shown[0], _shown(shown[1], width), _shown(shown[2], width)), []).append(number)
        rows = [[_message_numbers(numbers), *shown] for shown, numbers in merged.items()]
        return table(["messages", "field of result" if prefix else "field", self.names[0], name or self.names[1]], rows)

    def _cell(self, paths: list[str] | None) -> str:
        if paths is None:
            return "same"
        if paths == [""]:
            return "differs: whole message"
        if len(paths) == 1 and paths[0].startswith("("):
            return paths[0][1:-1]
        if self._max_paths == 0:
            return f"differs in {len(paths)} field" + ("" if len(paths) == 1 else "s")
        shown = ", ".join(paths[: self._max_paths])
        more = f", … (+{len(paths) - self._max_paths})" if len(paths) > self._max_paths else ""
        return f"differs: {shown}{more}"

    def verdict(self) -> str:
        """One sentence saying what the comparison found."""
        count = len(self.rows)
        if self.identical:
            captures = "both captures" if len(self.names) == 2 else f"all {len(self.names)} captures"
            return f"identical: all {count} messages are equal in {captures} (as JSON values)"
        return f"{len({number for number, _, _ in self.differences()})} of {count} positions differ"

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
        body = self._table()._repr_html_()  # type: ignore[attr-defined]
        return f"{body}<p style='color: {colour}'><b>{html.escape(self.verdict())}</b></p>"


def diff_captures(captures: Mapping[str, Any], *, max_paths: int = 4) -> CaptureDiff:
    """Compare captures message by message against the first one.

    ``captures`` maps a name to a ``Capture`` (or ``CaptureTransport``). Two messages are the same when they go
    the same direction and are equal JSON values (key order aside); otherwise the row names the fields that differ.
    ``max_paths`` is how many paths a row of the table names before ``… (+N)`` (``0``: only how many differ).
    """
    names = list(captures)
    if len(names) < 2:
        raise ValueError("give at least two captures to compare")
    lists = [as_capture(captures[name]) for name in names]
    labels = [c.methods() for c in lists]
    rows = []
    for index in range(max(len(c) for c in lists)):
        base = lists[0][index] if index < len(lists[0]) else None  # the first capture's message, if it has one
        cells: list[list[str] | None] = []
        fields: list[list[Difference]] = []
        for number, other in enumerate(lists[1:], start=1):
            found: list[Difference] = []
            if index >= len(other):
                cells.append(["(missing)"])
            elif base is None:
                cells.append([f"(extra: {labels[number][index]})"])
            elif other[index].direction != base.direction:
                cells.append(["direction"])
            else:
                found = json_differences(base.message, other[index].message)
                cells.append([d.path for d in found] or None)
            fields.append(found)
        direction, label = (ARROWS[base.direction], labels[0][index]) if base is not None else ("", "—")
        rows.append(DiffRow(index + 1, direction, label, tuple(cells), tuple(fields)))
    return CaptureDiff(names, rows, max_paths)
