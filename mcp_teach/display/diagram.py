"""Sequence diagrams of captured sessions and tool-loop traces, drawn with matplotlib.

``draw_sequence(capture)`` draws one lifeline per actor (client and server; user,
client, LLM and server for a loop trace) and one arrow per message, in wire
order::

    draw_sequence(capture)                     # a Capture, a CaptureTransport or a list of WireMessage
    draw_sequence(result.trace, title="1 + 2")  # a tool-loop Trace (or the LoopResult itself)

Requests are solid arrows, responses dashed, notifications dotted with an open
head; an error (a JSON-RPC ``error`` or a result with ``isError: true``) is red.
Long sessions keep their first and last messages around a "… N more messages …"
band. The figure is a plain :class:`matplotlib.figure.Figure` (no pyplot state):
a notebook cell ending with it shows a PNG.

:func:`sequence_steps` is the model under the picture (and under
:mod:`mcp_teach.display.explorer`): every message with its number, sender, receiver,
kind, label and the request it answers.
"""

from __future__ import annotations

import bisect
import io
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties, findfont, get_font
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch
from matplotlib.textpath import TextToPath

from mcp_teach.display.show import ACTOR_COLOURS, COLOURS, is_error
from mcp_teach.llm.trace import ACTORS, Trace
from mcp_teach.wire.messages import CLIENT_TO_SERVER, Capture, WireMessage, as_capture, message_kind

Style = Literal["request", "response", "notification"]

#: Display names of the actors, in lifeline order.
ACTOR_NAMES = {"user": "user", "client": "client", "llm": "LLM", "server": "server"}
CAPTURE_ACTORS = ("client", "server")
LINESTYLES: dict[Style, str] = {"request": "-", "response": "--", "notification": ":"}
GREY = "#57606a"

# Layout, in inches (the axes' data coordinates are inches, y growing downwards).
ROW = 0.42
MARGIN = 0.9
FONT_SIZE = 9.0
LABEL_PAD = 0.12


@dataclass(frozen=True)
class Step:
    """One message of a capture or trace, as the diagram and the explorer present it."""

    #: 1-based position in the whole session (as ``show`` numbers it).
    number: int
    sender: str
    receiver: str
    #: ``request``, ``response``, ``notification``, ``error``, ``invalid`` (JSON-RPC) or a trace event kind
    #: (``question``, ``llm-request``, ``llm-response``, ``answer``).
    kind: str
    #: The arrow label, e.g. ``#3 tools/call id=2`` or ``#4 result of #3 tools/call``.
    label: str
    #: The JSON the message carried.
    payload: Any
    method: str | None = None
    id: Any = None
    #: The request this message answers, e.g. ``#3 tools/call`` (responses only).
    answers: str | None = None
    #: A JSON-RPC error or a result with ``isError: true``.
    is_error: bool = False

    @property
    def style(self) -> Style:
        """How the arrow is drawn: solid ``request`` (or question), dashed ``response`` (or answer), dotted
        ``notification``."""
        if self.kind == "notification":
            return "notification"
        return "request" if self.kind in ("request", "question", "llm-request") else "response"

    @property
    def colour(self) -> str:
        """Red for an error, else the sender's colour."""
        return COLOURS["error"] if self.is_error else ACTOR_COLOURS.get(self.sender, GREY)


def _jsonrpc_label(number: int, message: dict[str, Any], kind: str, answers: str | None) -> str:
    if kind == "request":
        return f"#{number} {message['method']} id={message.get('id')}"
    if kind == "notification":
        return f"#{number} {message['method']}"
    if kind == "invalid":
        return f"#{number} invalid message"
    of = f"of {answers}" if answers else f"(id={message.get('id')})"
    if kind == "error":
        return f"#{number} error {(message.get('error') or {}).get('code', '')} {of}"
    return f"#{number} result {of}" + (" (isError)" if is_error(message) else "")


def _jsonrpc_step(number: int, sender: str, receiver: str, message: dict[str, Any], pending: dict) -> Step:
    """A JSON-RPC message as a step; ``pending`` maps (sender, id) of earlier requests to ``#number method``."""
    kind = message_kind(message)
    answers = pending.get((receiver, message.get("id"))) if kind in ("response", "error") else None
    if kind == "request":
        pending[(sender, message.get("id"))] = f"#{number} {message['method']}"
    label = _jsonrpc_label(number, message, kind, answers)
    method, message_id = message.get("method"), message.get("id")
    return Step(number, sender, receiver, kind, label, message, method, message_id, answers, is_error(message))


def _trace_steps(trace: Trace) -> list[Step]:
    steps, pending = [], {}
    for number, event in enumerate(trace, start=1):
        if event.kind == "jsonrpc":
            steps.append(_jsonrpc_step(number, event.sender, event.receiver, event.payload, pending))
        else:
            quoted = f'"{event.label}"' if event.kind in ("question", "answer") else event.label
            steps.append(Step(number, event.sender, event.receiver, event.kind, f"#{number} {quoted}", event.payload))
    return steps


def _capture_steps(messages: Iterable[WireMessage]) -> list[Step]:
    steps, pending = [], {}
    for number, wire in enumerate(messages, start=1):
        sender, receiver = ("client", "server") if wire.direction == CLIENT_TO_SERVER else ("server", "client")
        steps.append(_jsonrpc_step(number, sender, receiver, wire.message, pending))
    return steps


def sequence_steps(source: Any) -> tuple[tuple[str, ...], list[Step]]:
    """The actors (lifeline order) and the steps of a capture, CaptureTransport, message list or loop trace."""
    trace = source if isinstance(source, Trace) else getattr(source, "trace", None)  # a Trace, or a LoopResult's
    if isinstance(trace, Trace):
        return ACTORS, _trace_steps(trace)
    if not isinstance(getattr(source, "capture", source), Capture | WireMessage | list | tuple):
        raise TypeError(f"cannot draw {type(source).__name__}: give a Capture, CaptureTransport, messages or a Trace")
    return CAPTURE_ACTORS, _capture_steps(as_capture(source))


# --- text that the font can draw ---------------------------------------------------------------------------------


@cache
def _font() -> Any:
    return get_font(findfont(FontProperties(size=FONT_SIZE)))


@cache
def _has_glyph(character: str) -> bool:
    return character.isspace() or _font().get_char_index(ord(character)) != 0


def drawable(text: str) -> str:
    """``text`` with every character the label font cannot draw replaced by ``?``.

    matplotlib's default font (DejaVu Sans) has no Chinese glyphs; drawing them
    prints a "Glyph ... missing from font" warning for every character, at the
    moment the figure is rendered — in a notebook that is after this module
    returns, on stderr, where nbval compares it. Replacing the characters keeps
    the picture and stderr clean; the explorer and ``show`` display the real text.
    """
    return "".join(c if _has_glyph(c) else "?" for c in text)


def _text_width(text: str, size: float = FONT_SIZE) -> float:
    """Width of ``text`` in inches at ``size`` points."""
    width, _, _ = TextToPath().get_text_width_height_descent(text, FontProperties(size=size), ismath=False)
    return width / 72


def fit(text: str, width: float, size: float = FONT_SIZE) -> str:
    """``text`` (made drawable, one line), shortened with "…" to at most ``width`` inches."""
    text = drawable(" ".join(text.split()))
    if _text_width(text, size) <= width:
        return text
    # The longest prefix that fits with the ellipsis: the widths of the prefixes grow with their length.
    fits = bisect.bisect_right(range(len(text)), width, key=lambda length: _text_width(text[:length] + "…", size))
    return text[: max(fits - 1, 0)].rstrip() + "…"


# --- the figure ----------------------------------------------------------------------------------------------------


class SequenceDiagram(Figure):
    """A :class:`~matplotlib.figure.Figure` that also renders itself as PNG in Jupyter without pyplot."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", facecolor="white")
        return buffer.getvalue()


def _rows(steps: list[Step], max_messages: int) -> list[Step | range]:
    """The steps to draw: all of them, or the first and last ones around the numbers left out (a ``range``)."""
    if max_messages < 2:
        raise ValueError("max_messages must be at least 2 (the first and the last message)")
    if len(steps) <= max_messages:
        return list(steps)
    head, tail = (max_messages + 1) // 2, max_messages // 2
    return [*steps[:head], range(steps[head].number, steps[-tail - 1].number + 1), *steps[-tail:]]


def _label_span(step: Step, xs: dict[str, float]) -> tuple[float, float]:
    """The gap next to the sender between two neighbouring lifelines: the label sits there, on no lifeline."""
    start, end = xs[step.sender], xs[step.receiver]
    if not (between := sorted(x for x in xs.values() if min(start, end) < x < max(start, end))):
        return min(start, end), max(start, end)
    return (start, between[0]) if start < end else (between[-1], start)


def _draw_step(axes: Any, step: Step, y: float, xs: dict[str, float]) -> None:
    head = "->" if step.style == "notification" else "-|>"  # a notification's head is open
    line = {"linestyle": LINESTYLES[step.style], "linewidth": 1.6, "color": step.colour, "zorder": 3}
    ends = (xs[step.sender], y), (xs[step.receiver], y)
    arrow = FancyArrowPatch(*ends, arrowstyle=head, mutation_scale=13, shrinkA=0, shrinkB=1.5, **line)
    axes.add_patch(arrow).set_gid(f"message-{step.number}")
    left, right = _label_span(step, xs)
    label = fit(step.label, right - left - 2 * LABEL_PAD)
    font = {"fontsize": FONT_SIZE, "fontweight": "bold" if step.is_error else "normal", "parse_math": False}
    axes.text((left + right) / 2, y - 0.05, label, ha="center", va="bottom", color=step.colour, zorder=4, **font)


def _draw_band(axes: Any, band: range, y: float, width: float) -> None:
    box = {"boxstyle": "square,pad=0.5", "facecolor": "#f6f8fa", "edgecolor": "#afb8c1", "linestyle": "--"}
    text = f"… {len(band)} more messages (#{band[0]}–#{band[-1]}) …"
    font = {"fontsize": FONT_SIZE, "color": GREY, "style": "italic"}
    axes.text(width / 2, y - 0.06, text, ha="center", va="center", bbox=box, zorder=6, **font)


def _draw_actor(axes: Any, actor: str, x: float, y: float) -> None:
    colour = ACTOR_COLOURS.get(actor, GREY)
    box = {"boxstyle": "round,pad=0.45", "facecolor": colour, "edgecolor": colour}
    font = {"fontsize": 11, "fontweight": "bold", "color": "white"}
    name = ACTOR_NAMES.get(actor, actor)
    axes.text(x, y, name, ha="center", va="center", bbox=box, zorder=7, gid=f"actor-{actor}", **font)


def _legend(axes: Any, is_trace: bool) -> None:
    labels = {"request": "request / question", "response": "response / answer"} if is_trace else {}
    handles = [
        Line2D([], [], color=GREY, linestyle=line, label=labels.get(style, style)) for style, line in LINESTYLES.items()
    ]
    handles.append(Line2D([], [], color=COLOURS["error"], linestyle="--", label="error (JSON-RPC error or isError)"))
    place = {"loc": "lower center", "bbox_to_anchor": (0.5, 0.0), "ncol": 4}
    axes.legend(handles=handles, frameon=False, fontsize=FONT_SIZE, handlelength=3, **place)


def draw_sequence(source: Any, *, title: str | None = None, max_messages: int = 24) -> Figure:
    """A sequence diagram: one lifeline per actor, one arrow per message from sender to receiver, in order.

    ``source`` is a ``Capture``, a ``CaptureTransport``, a list of ``WireMessage`` or a
    loop ``Trace`` (lifelines user · client · LLM · server). Arrows are labelled
    ``#3 tools/call id=2`` / ``#4 result of #3 tools/call``; a trace's LLM events
    carry their (shortened) label. At most ``max_messages`` arrows are drawn: a
    longer session keeps its first and last messages around a "… N more messages …"
    band. Characters the font lacks (Chinese with matplotlib's default font) are
    drawn as ``?`` (see :func:`drawable`).
    """
    actors, steps = sequence_steps(source)
    rows = _rows(steps, max_messages)
    width = 8.0 if len(actors) == 2 else 11.0
    top = (0.45 if title else 0.1) + 0.4  # title, then the actor boxes
    first_row = top + 0.5
    body = max(len(rows), 1) * ROW
    bottom_boxes = len(rows) > 12  # repeat the actors at the bottom of a tall diagram
    height = round(first_row + body + (0.55 if bottom_boxes else 0.05) + 0.4, 2)

    figure = SequenceDiagram(figsize=(width, height), dpi=100, facecolor="white")
    axes = figure.add_axes((0, 0, 1, 1), xlim=(0, width), ylim=(height, 0))
    axes.set_axis_off()

    xs = {actor: MARGIN + index * (width - 2 * MARGIN) / (len(actors) - 1) for index, actor in enumerate(actors)}
    end = first_row + body - ROW / 2 + (0.15 if bottom_boxes else 0.0)
    for actor, x in xs.items():
        _draw_actor(axes, actor, x, top)
        axes.add_line(Line2D([x, x], [top + 0.2, end], color="#d0d7de", linewidth=1.2, zorder=1))
        if bottom_boxes:
            _draw_actor(axes, actor, x, end + 0.15)
    if title:
        axes.text(width / 2, 0.3, drawable(title), ha="center", va="center", fontsize=12, fontweight="bold")
    for index, row in enumerate(rows):
        y = first_row + index * ROW
        if isinstance(row, range):
            _draw_band(axes, row, y, width)
        else:
            _draw_step(axes, row, y, xs)
    if not rows:
        axes.text(width / 2, first_row, "(no messages)", ha="center", va="center", fontsize=FONT_SIZE, color=GREY)
    _legend(axes, is_trace=len(actors) > 2)
    return figure
