"""Show captured JSON-RPC messages in a notebook: highlighted HTML plus a plain-text twin.

``show(capture)`` returns an object Jupyter renders as HTML (colour by
direction, foldable messages, highlighted JSON) and whose plain text reads
well on GitHub and in nbval comparisons. Long messages can be abbreviated::

    show(capture, methods=["tools/list"], fold=["result.tools.*.inputSchema"], max_items=1)
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JsonLexer
from pygments.styles.default import DefaultStyle
from pygments.token import Error

from mcp_teach.display.glossary import purpose
from mcp_teach.llm.trace import Trace
from mcp_teach.wire.messages import CLIENT_TO_SERVER, WireMessage, as_capture
from mcp_teach.wire.plain_text import PlainText

ARROWS = {CLIENT_TO_SERVER: "client → server", "server->client": "server → client"}
COLOURS = {CLIENT_TO_SERVER: "#1f6feb", "server->client": "#1a7f37", "error": "#cf222e"}
ACTOR_COLOURS = {"user": "#8250df", "client": "#1f6feb", "llm": "#bc4c00", "server": "#1a7f37"}
_FOLD = "\u2063fold\u2063"  # marks a placeholder string that prints without quotes
_FOLDED = re.compile(r'"\u2063fold\u2063(.*?)"')


def _placeholder(text: str) -> str:
    return f"{_FOLD}{text}"


class _JsonStyle(DefaultStyle):
    """Pygments' default colours, minus the red box it draws round what is not JSON: our ``{… 3 keys}``."""

    styles: ClassVar = {**DefaultStyle.styles, Error: ""}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _summarise(value: Any) -> str:
    if isinstance(value, dict):
        return _placeholder(f"{{… {_count(len(value), 'key')}}}")
    if isinstance(value, list):
        return _placeholder(f"[… {_count(len(value), 'item')}]")
    return _placeholder("…")


def abbreviate(value: Any, fold: Sequence[str] = (), max_items: int | None = None, _path: str = "") -> Any:
    """Copy of ``value`` with folded paths and long lists cut short.

    ``fold`` holds dotted paths (``*`` matches any key or list index), e.g.
    ``"result.tools.*.inputSchema"``; a folded value prints as ``{… 3 keys}``.
    Lists longer than ``max_items`` keep their first items and say how many more.
    """
    if _path and any(_matches(pattern, _path) for pattern in fold):
        return _summarise(value)
    if isinstance(value, dict):
        return {k: abbreviate(v, fold, max_items, f"{_path}.{k}" if _path else k) for k, v in value.items()}
    if isinstance(value, list):
        shown = value if max_items is None else value[:max_items]
        items = [abbreviate(v, fold, max_items, f"{_path}.{i}" if _path else str(i)) for i, v in enumerate(shown)]
        if len(value) > len(shown):
            items.append(_placeholder(f"… {len(value) - len(shown)} more"))
        return items
    return value


def _matches(pattern: str, path: str) -> bool:
    parts, names = pattern.split("."), path.split(".")
    return len(parts) == len(names) and all(p in ("*", n) for p, n in zip(parts, names, strict=True))


def pretty_json(value: Any) -> str:
    """Indented JSON as on a page; placeholders from :func:`abbreviate` print bare."""
    return _FOLDED.sub(r"\1", json.dumps(value, indent=2, ensure_ascii=False))


def _capture_headline(number: int, wire: WireMessage, request: WireMessage | None, answers: int | None) -> str:
    if wire.method is not None:
        kind = f"{wire.kind} id={wire.id}" if wire.kind == "request" else "notification"
        text, note = f"{wire.method}  ({kind})", purpose(wire.method)
    elif wire.kind == "invalid":
        text, note = "not a JSON-RPC message", ""
    elif wire.id is None:
        text, note = f"{wire.kind} with id null", "the server could not tell which request it answers"
    else:
        outcome = "error" if wire.kind == "error" else "result"
        of = f"#{answers} " if answers is not None else ""
        text, note = f"{outcome} of {of}{request.method if request else '?'}  (response id={wire.id})", ""
    return f"#{number} {ARROWS[wire.direction]}  {text}" + (f" — {note}" if note else "")


def is_error(message: Any) -> bool:
    """A JSON-RPC error response, or a result with ``isError: true``."""
    if not isinstance(message, dict):
        return False
    result = message.get("result")
    return "error" in message or (isinstance(result, dict) and result.get("isError") is True)


@dataclass(frozen=True)
class Entry:
    """One displayed item: a headline, a colour bar and a JSON body."""

    headline: str
    colour: str
    body: Any


class MessagesView(PlainText):
    """What :func:`show` and :func:`show_trace` return: HTML in Jupyter, plain text elsewhere."""

    def __init__(self, entries: list[Entry], fold: Sequence[str], max_items: int | None, title: str | None) -> None:
        self._entries = entries
        self._fold = tuple(fold)
        self._max_items = max_items
        self._title = title

    def _body(self, entry: Entry) -> str:
        return pretty_json(abbreviate(entry.body, self._fold, self._max_items))

    def text(self) -> str:
        """The plain-text form (what GitHub and nbval compare)."""
        blocks = [f"== {self._title} ==" if self._title else None]
        for entry in self._entries:
            body = "\n".join("    " + line for line in self._body(entry).splitlines())
            blocks.append(f"{entry.headline}\n{body}")
        if not self._entries:
            blocks.append("(no messages)")
        return "\n".join(block for block in blocks if block is not None)

    def _repr_html_(self) -> str:
        formatter = HtmlFormatter(noclasses=True, nobackground=True, style=_JsonStyle)
        parts = ['<div class="mcp-teach-capture" style="font-size: 13px">']
        if self._title:
            parts.append(f"<p><b>{html.escape(self._title)}</b></p>")
        for entry in self._entries:
            code = highlight(self._body(entry), JsonLexer(), formatter)
            parts.append(
                f'<details open style="border-left: 4px solid {entry.colour}; margin: 6px 0; padding-left: 8px">'
                f'<summary style="cursor: pointer; font-family: monospace">{html.escape(entry.headline)}</summary>'
                f"{code}</details>"
            )
        if not self._entries:
            parts.append("<p>(no messages)</p>")
        parts.append("</div>")
        return "".join(parts)


def show(
    source: Any,
    *,
    methods: Sequence[str] | None = None,
    fold: Sequence[str] = (),
    max_items: int | None = None,
    title: str | None = None,
) -> MessagesView:
    """Display captured messages: numbered, with direction, method, id and what each answers.

    ``source`` is a :class:`Capture`, a ``CaptureTransport``, one message or a
    list of them. ``methods`` keeps only those methods (and their responses).
    """
    capture = as_capture(source)
    rows = []
    for number, wire in enumerate(capture, start=1):
        request = capture.request_for(wire) if wire.method is None else None
        method = request.method if request else wire.method
        if methods is not None and method not in methods:
            continue
        answers = capture.messages.index(request) + 1 if request else None
        colour = COLOURS["error"] if is_error(wire.message) else COLOURS[wire.direction]
        rows.append(Entry(_capture_headline(number, wire, request, answers), colour, wire.message))
    return MessagesView(rows, fold, max_items, title)


def show_trace(
    trace: Trace,
    *,
    kinds: Sequence[str] | None = None,
    fold: Sequence[str] = (),
    max_items: int | None = None,
    title: str | None = None,
) -> MessagesView:
    """Display a tool-loop trace: every event between user, client, LLM and server, in time order.

    ``kinds`` keeps only some events (``question``, ``llm-request``, ``llm-response``,
    ``jsonrpc``, ``answer``); numbers stay those of the whole trace.
    """
    entries = []
    for number, event in enumerate(trace, start=1):
        if kinds is not None and event.kind not in kinds:
            continue
        colour = COLOURS["error"] if is_error(event.payload) else ACTOR_COLOURS[event.sender]
        entries.append(Entry(f"#{number} {event.sender} → {event.receiver}  {event.label}", colour, event.payload))
    return MessagesView(entries, fold, max_items, title)


@dataclass(frozen=True, repr=False)
class _Table(PlainText):
    header: tuple[str, ...]
    rows: list[tuple[str, ...]]

    def text(self) -> str:
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in [self.header, *self.rows]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align: left'>{html.escape(h)}</th>" for h in self.header)
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align: left'>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in self.rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> _Table:
    """A small table that renders as HTML in Jupyter and as aligned text elsewhere."""
    return _Table(tuple(header), [tuple(str(cell) for cell in row) for row in rows])


def summary(source: Any) -> _Table:
    """One row per message: number, direction, kind, method, id, and which request it answers."""
    capture = as_capture(source)
    rows = []
    for number, wire in enumerate(capture, start=1):
        request = capture.request_for(wire) if wire.method is None else None
        answers = f"#{capture.messages.index(request) + 1} {request.method}" if request else ""
        rows.append((f"#{number}", ARROWS[wire.direction], wire.kind, wire.method or "", _text(wire.id), answers))
    return table(("#", "direction", "kind", "method", "id", "answers"), rows)


def _text(value: Any) -> str:
    return "" if value is None else str(value)
