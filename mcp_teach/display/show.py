"""Show captured JSON-RPC messages in a notebook: highlighted HTML plus a plain-text twin.

``show(capture)`` returns an object Jupyter renders as HTML (colour by
direction, foldable messages, highlighted JSON) and whose plain text reads
well on GitHub and in nbval comparisons. A reader follows one or two messages
at a time, so every message is folded to one line unless the text discusses
it: ``expand`` names those, by number or method, and they print in full. Long
messages can be abbreviated further::

    show(capture, expand=["tools/list"], fold=["result.tools.*.inputSchema"], max_items=1)

The 2026-07-28 ``_meta`` envelope (``io.modelcontextprotocol/*`` keys) is the
same on every request of a session: it prints in full the first time a
lesson shows it and folded after that (``envelope=True`` shows it again).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator, Sequence
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
#: Widest folded line, in characters (a lesson's output stays under 120).
FOLDED_WIDTH = 116
ENVELOPE_PREFIX = "io.modelcontextprotocol/"
#: The 2026-07-28 ``_meta`` envelope: the per-request and per-response protocol fields (basic/index, ``_meta``),
#: the same on every message of a session. Other ``io.modelcontextprotocol/`` keys (a ``subscriptionId``) are shown.
ENVELOPE_KEYS = frozenset(
    ENVELOPE_PREFIX + name for name in ("protocolVersion", "clientInfo", "clientCapabilities", "logLevel", "serverInfo")
)
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
    Lists longer than ``max_items`` keep their first items and say how many more (a short list of plain
    values, such as ``required``, is kept whole: cut, it would say something else).
    """
    if _path and any(_matches(pattern, _path) for pattern in fold):
        return _summarise(value)
    if isinstance(value, dict):
        return {k: abbreviate(v, fold, max_items, f"{_path}.{k}" if _path else k) for k, v in value.items()}
    if isinstance(value, list):
        plain = all(not isinstance(item, dict | list) for item in value) and _inline(value)
        shown = value if max_items is None or plain else value[:max_items]
        items = [abbreviate(v, fold, max_items, f"{_path}.{i}" if _path else str(i)) for i, v in enumerate(shown)]
        if len(value) > len(shown):
            items.append(_placeholder(f"… {len(value) - len(shown)} more"))
        return items
    return value


def _matches(pattern: str, path: str) -> bool:
    parts, names = pattern.split("."), path.split(".")
    return len(parts) == len(names) and all(p in ("*", n) for p, n in zip(parts, names, strict=True))


#: A list or object whose JSON fits in this many characters stays on one line when a message is printed in full.
INLINE_WIDTH = 60
#: Consecutive members of an object whose values are plain values share a line up to this width.
PACKED_WIDTH = 100


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _inline(value: Any) -> bool:
    return not isinstance(value, dict | list) or not value or len(_compact(value)) <= INLINE_WIDTH


def _pretty(value: Any, indent: str) -> str:
    """JSON as a person would lay it out: indented, short parts on one line, plain members side by side."""
    if _inline(value):
        return _compact(value)
    inner = indent + "  "
    if isinstance(value, list):
        return "[\n" + ",\n".join(f"{inner}{_pretty(item, inner)}" for item in value) + f"\n{indent}]"
    lines: list[str] = []
    packable = False  # whether the last line holds only plain members
    for key, item in value.items():
        member = f"{_compact(key)}: {_pretty(item, inner)}"
        plain = not isinstance(item, dict | list)
        if plain and packable and len(lines[-1]) + 2 + len(member) <= PACKED_WIDTH:
            lines[-1] += f", {member}"
            continue
        lines.append(inner + member)
        packable = plain
    return "{\n" + ",\n".join(lines) + f"\n{indent}}}"


def pretty_json(value: Any) -> str:
    """Indented JSON as on a page, short parts on one line; placeholders from :func:`abbreviate` print bare."""
    return _FOLDED.sub(r"\1", _pretty(value, ""))


def _capture_headline(
    number: int, wire: WireMessage, request: WireMessage | None, answers: int | None
) -> tuple[str, str]:
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
    return f"#{number} {ARROWS[wire.direction]}  {text}", note


def is_error(message: Any) -> bool:
    """A JSON-RPC error response, or a result with ``isError: true``."""
    if not isinstance(message, dict):
        return False
    result = message.get("result")
    return "error" in message or (isinstance(result, dict) and result.get("isError") is True)


@dataclass(frozen=True)
class Entry:
    """One displayed item: a headline, a colour bar and a JSON body, printed in full or folded to one line."""

    headline: str
    colour: str
    body: Any
    note: str = ""
    expanded: bool = True

    @property
    def title(self) -> str:
        """The headline with what the method is for, as an expanded message is introduced."""
        return self.headline + (f" — {self.note}" if self.note else "")

    def folded_line(self) -> str:
        """The headline and as much of the message's content, as compact JSON, as fits one line (no envelope)."""
        content = self.body
        if isinstance(content, dict) and "jsonrpc" in content:
            content = next((content[key] for key in ("params", "result", "error") if key in content), None)
        content = _without_envelope(content)
        if content is None or content == {}:
            return self.headline
        line = f"{self.headline}  {json.dumps(content, ensure_ascii=False, separators=(',', ':'))}"
        return line if len(line) <= FOLDED_WIDTH else line[: FOLDED_WIDTH - 1] + "…"


def _without_envelope(content: Any) -> Any:
    """``content`` without the envelope's keys in its ``_meta`` (and without ``_meta`` if nothing else is left)."""
    meta = content.get("_meta") if isinstance(content, dict) else None
    if not isinstance(meta, dict):
        return content
    kept = {key: value for key, value in meta.items() if key not in ENVELOPE_KEYS}
    rest = {key: value for key, value in content.items() if key != "_meta"}
    return {**rest, "_meta": kept} if kept else rest


class _EnvelopeSeen:
    """The envelope's keys this kernel (one lesson) has shown in full, with the value shown."""

    values: ClassVar[dict[str, Any]] = {}


def _metas(message: Any) -> Iterator[tuple[str, dict, dict]]:
    """``(part, params or result, its _meta)`` for each of the message's two places an envelope can be."""
    for part in ("params", "result"):
        inner = message.get(part) if isinstance(message, dict) else None
        meta = inner.get("_meta") if isinstance(inner, dict) else None
        if isinstance(meta, dict):
            yield part, inner, meta


def fold_envelope(message: Any, keys: set[str] | None = None) -> Any:
    """Copy of ``message`` whose ``params._meta`` / ``result._meta`` envelope ``keys`` (default: all) are folded."""
    folded = dict(message) if isinstance(message, dict) else message
    for part, inner, meta in _metas(message):
        if not (hidden := [key for key in meta if key in ENVELOPE_KEYS and (keys is None or key in keys)]):
            continue
        kept = {key: value for key, value in meta.items() if key not in hidden}
        names = ", ".join(key.removeprefix(ENVELOPE_PREFIX) for key in hidden)
        kept[ENVELOPE_PREFIX + "…"] = _placeholder(f"(as shown before: {names})")
        folded[part] = {**inner, "_meta": kept}
    return folded


def _envelope(message: Any) -> dict[str, Any]:
    """The envelope's keys in the message's ``params._meta`` and ``result._meta``, with their values."""
    return {key: value for _, _, meta in _metas(message) for key, value in meta.items() if key in ENVELOPE_KEYS}


def _with_envelope_once(entries: list[Entry], envelope: bool) -> list[Entry]:
    """Fold each envelope key an expanded message repeats with the value shown before (none, with ``envelope``)."""
    kept = []
    for entry in entries:
        found = _envelope(entry.body) if entry.expanded else {}
        repeated = {key for key, value in found.items() if _EnvelopeSeen.values.get(key, found) == value}
        if repeated and not envelope:
            entry = Entry(entry.headline, entry.colour, fold_envelope(entry.body, repeated), entry.note, True)
        _EnvelopeSeen.values.update(found)
        kept.append(entry)
    return kept


def _choices(expand: bool | int | str | Iterable[int | str]) -> bool | tuple[int | str, ...]:
    """``expand`` as ``True``/``False`` or a tuple of numbers and names (one number or name alone is allowed)."""
    return expand if isinstance(expand, bool) else (expand,) if isinstance(expand, int | str) else tuple(expand)


def _expanded(choices: bool | tuple[int | str, ...], number: int, name: str | None) -> bool:
    if isinstance(choices, bool):
        return choices
    return any(choice == number if isinstance(choice, int) else choice == name for choice in choices)


def titled_text(title: str | None, blocks: list[str], empty: str) -> str:
    """A view's plain text: ``== title ==`` (if any), then its blocks, or ``empty`` when it has none."""
    heading = [f"== {title} =="] if title else []
    return "\n".join([*heading, *(blocks or [empty])])


def titled_html(css_class: str, title: str | None, parts: list[str], empty: str) -> str:
    """A view's HTML: a ``div`` holding the title in bold (if any), then its parts, or ``empty`` when it has none."""
    heading = f"<p><b>{html.escape(title)}</b></p>" if title else ""
    body = "".join(parts) or f"<p>{empty}</p>"
    return f'<div class="{css_class}" style="font-size: 13px">{heading}{body}</div>'


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
        """The plain-text form (what GitHub and nbval compare): folded messages one line each."""
        blocks = []
        for entry in self._entries:
            body = "\n".join("    " + line for line in self._body(entry).splitlines()) if entry.expanded else ""
            blocks.append(f"{entry.title}\n{body}" if entry.expanded else entry.folded_line())
        return titled_text(self._title, blocks, "(no messages)")

    def _repr_html_(self) -> str:
        formatter = HtmlFormatter(noclasses=True, nobackground=True, style=_JsonStyle)
        parts = []
        for entry in self._entries:
            code = highlight(self._body(entry), JsonLexer(), formatter)
            summary_line, note = (entry.title, "") if entry.expanded else (entry.folded_line(), entry.note)
            parts.append(
                f'<details{" open" if entry.expanded else ""} style="border-left: 4px solid {entry.colour}; '
                'margin: 6px 0; padding-left: 8px">'
                f'<summary style="cursor: pointer; font-family: monospace">{html.escape(summary_line)}</summary>'
                + (f"<p><i>{html.escape(note)}</i></p>" if note else "")
                + f"{code}</details>"
            )
        return titled_html("mcp-teach-capture", self._title, parts, "(no messages)")


def show(
    source: Any,
    *,
    expand: bool | int | str | Iterable[int | str] = (),
    methods: Sequence[str] | None = None,
    fold: Sequence[str] = (),
    max_items: int | None = None,
    title: str | None = None,
    envelope: bool = False,
) -> MessagesView:
    """Display captured messages: numbered, with direction, method, id and what each answers.

    ``source`` is a :class:`Capture`, a ``CaptureTransport``, one message or a
    list of them. ``methods`` keeps only those methods (and their responses).
    Each message is one line unless ``expand`` names it: ``True`` (all), or
    message numbers and methods (a method expands its requests and their responses).
    """
    capture = as_capture(source)
    choices = _choices(expand)
    rows = []
    for number, wire in enumerate(capture, start=1):
        request = capture.request_for(wire) if wire.method is None else None
        method = request.method if request else wire.method
        if methods is not None and method not in methods:
            continue
        answers = capture.messages.index(request) + 1 if request else None
        colour = COLOURS["error"] if is_error(wire.message) else COLOURS[wire.direction]
        headline, note = _capture_headline(number, wire, request, answers)
        rows.append(Entry(headline, colour, wire.message, note, _expanded(choices, number, method)))
    return MessagesView(_with_envelope_once(rows, envelope), fold, max_items, title)


def show_trace(
    trace: Trace,
    *,
    expand: bool | int | str | Iterable[int | str] = (),
    kinds: Sequence[str] | None = None,
    fold: Sequence[str] = (),
    max_items: int | None = None,
    title: str | None = None,
    envelope: bool = False,
) -> MessagesView:
    """Display a tool-loop trace: every event between user, client, LLM and server, in time order.

    ``kinds`` keeps only some events (``question``, ``llm-request``, ``llm-response``,
    ``jsonrpc``, ``answer``); numbers stay those of the whole trace. Each event is
    one line unless ``expand`` names it: ``True``, or event numbers and kinds.
    """
    choices = _choices(expand)
    entries = []
    for number, event in enumerate(trace, start=1):
        if kinds is not None and event.kind not in kinds:
            continue
        colour = COLOURS["error"] if is_error(event.payload) else ACTOR_COLOURS[event.sender]
        headline = f"#{number} {event.sender} → {event.receiver}  {event.label}"
        entries.append(Entry(headline, colour, event.payload, expanded=_expanded(choices, number, event.kind)))
    return MessagesView(_with_envelope_once(entries, envelope), fold, max_items, title)


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
        message_id = "" if wire.id is None else str(wire.id)
        rows.append((f"#{number}", ARROWS[wire.direction], wire.kind, wire.method or "", message_id, answers))
    return table(("#", "direction", "kind", "method", "id", "answers"), rows)
