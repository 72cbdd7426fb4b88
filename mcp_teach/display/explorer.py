"""Step through a capture (or a tool-loop trace) one message at a time, with ipywidgets.

``explore(capture)`` shows Previous / Next buttons and a slider; for the selected
message a header (number, direction, kind, method, id, the request it answers),
a one-line note on what the message is for, and its JSON highlighted as
:func:`mcp_teach.display.show.show` does::

    explore(capture)        # a Capture, CaptureTransport, list of WireMessage, or a loop Trace

Where no widget frontend runs (nbval, GitHub, a terminal) the explorer displays a
static rendering instead: the one-row-per-message summary and the first message.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from mcp_teach.display.diagram import ACTOR_NAMES, Step, sequence_steps
from mcp_teach.display.glossary import ERROR_CODES, purpose
from mcp_teach.display.show import Entry, MessagesView, table
from mcp_teach.llm.trace import short

HINT = "Step through the messages with Previous / Next or the slider (needs a running kernel)."


def direction(step: Step) -> str:
    """``client → server``."""
    return f"{ACTOR_NAMES.get(step.sender, step.sender)} → {ACTOR_NAMES.get(step.receiver, step.receiver)}"


def _jsonrpc_note(step: Step) -> str:
    if step.kind == "error":
        error = step.payload.get("error") or {}
        code = error.get("code")
        return f"JSON-RPC error {code}: " + ERROR_CODES.get(code, error.get("message", "the request failed"))
    if step.kind == "response":
        if step.is_error:
            return "a tool error: the request itself worked, the tool failed (isError: true); the text says why"
        return f"the answer to {step.answers or 'a request'}: same id, exactly one response per request"
    if step.kind == "invalid":
        return "not a valid JSON-RPC message: neither request, notification nor response"
    if step.kind == "notification":
        return purpose(step.method) or "a notification: no id, so no response comes back"
    return purpose(step.method) or "a request: it has an id, so it expects exactly one response"


#: What each trace event is for (an ``llm-response`` also says whether it asks for tools: see :func:`note`).
EVENT_NOTES = {
    "question": "the user's question, plain text: no protocol involved",
    "llm-request": "the client sends the whole conversation and the tool definitions to the model (chat completions)",
    "answer": "the client shows the model's answer to the user",
}


def note(step: Step) -> str:
    """One line on what the message is for."""
    if step.kind == "llm-response":
        message = ((step.payload.get("choices") or [{}])[0]).get("message") or {}
        if message.get("tool_calls"):
            return "the model asks the client to run tools (tool_calls); it runs nothing itself"
        return "the model answers in text: the loop ends"
    return EVENT_NOTES.get(step.kind) or _jsonrpc_note(step)


def headline(step: Step) -> str:
    """``#4 · server → client · response · id=2 · answers #3 tools/call``."""
    message_id = None if step.id is None else f"id={step.id}"
    answers = None if step.answers is None else f"answers {step.answers}"
    parts = (f"#{step.number}", direction(step), step.kind, step.method, message_id, answers)
    return " · ".join(part for part in parts if part)


def summary_table(steps: Sequence[Step]) -> Any:
    """One row per message, like :func:`mcp_teach.display.show.summary` (trace events show their label)."""
    rows = []
    for step in steps:
        what = step.method or (
            "" if step.kind in ("response", "error") else short(" ".join(step.label.split()[1:]), 48)
        )
        message_id = "" if step.id is None else step.id
        rows.append([f"#{step.number}", direction(step), step.kind, what, message_id, step.answers or ""])
    return table(("#", "direction", "kind", "method", "id", "answers"), rows)


class Explorer(widgets.VBox):
    """Previous / Next buttons, a slider, a header and the selected message's JSON.

    ``index`` is the 0-based position of the selected message (the slider shows
    message numbers, 1-based). ``header.value`` and ``body.value`` are HTML.
    """

    def __init__(self, steps: list[Step], *, fold: Sequence[str] = (), max_items: int | None = None) -> None:
        super().__init__()
        self.steps = steps
        self._fold = tuple(fold)
        self._max_items = max_items
        self.previous_button = widgets.Button(description="Previous", icon="arrow-left", tooltip="previous message")
        self.next_button = widgets.Button(description="Next", icon="arrow-right", tooltip="next message")
        first, layout = min(1, len(steps)), widgets.Layout(width="360px")
        self.slider = widgets.IntSlider(first, min=first, max=len(steps), description="message #", layout=layout)
        self.header, self.body = widgets.HTML(), widgets.HTML()
        self.previous_button.on_click(lambda _button: self.previous())
        self.next_button.on_click(lambda _button: self.next())
        self.slider.observe(lambda _change: self._update(), names="value")
        self.children = [widgets.HBox([self.previous_button, self.slider, self.next_button]), self.header, self.body]
        self._update()

    @property
    def index(self) -> int:
        """0-based position of the message shown."""
        return max(self.slider.value - 1, 0)

    @index.setter
    def index(self, value: int) -> None:
        if self.steps:
            self.slider.value = min(max(value, 0), len(self.steps) - 1) + 1

    def next(self) -> None:
        """Show the next message (nothing happens at the last one)."""
        self.index += 1

    def previous(self) -> None:
        """Show the previous message (nothing happens at the first one)."""
        self.index -= 1

    def message_view(self, step: Step, title: str = "the message as JSON") -> MessagesView:
        """One message rendered as ``show`` renders it (HTML and plain text), under ``title``."""
        return MessagesView([Entry(title, step.colour, step.payload)], self._fold, self._max_items, None)

    def _header_html(self, step: Step) -> str:
        return (
            f'<div style="font-family: monospace; border-left: 4px solid {step.colour}; padding-left: 8px">'
            f"<b>{html.escape(headline(step))}</b><br><i>{html.escape(note(step))}</i></div>"
        )

    def _update(self) -> None:
        if not self.steps:
            self.header.value, self.body.value = "<i>(no messages)</i>", ""
            self.previous_button.disabled = self.next_button.disabled = self.slider.disabled = True
            return
        step = self.steps[self.index]
        self.header.value = self._header_html(step)
        self.body.value = self.message_view(step)._repr_html_()
        self.previous_button.disabled = self.index == 0
        self.next_button.disabled = self.index == len(self.steps) - 1

    # --- static rendering: what nbval, GitHub and terminals see ---------------------------------------------------

    def _title(self) -> str:
        count = len(self.steps)
        return f"Message explorer: {count} message" + ("" if count == 1 else "s")

    def _first_message(self) -> list[MessagesView]:
        """The first message under its headline and note (none for an empty capture)."""
        return [self.message_view(step, f"{headline(step)} — {note(step)}") for step in self.steps[:1]]

    def static_text(self) -> str:
        """Plain text: the summary of all messages and the first message."""
        first = [view.text() for view in self._first_message()]
        return "\n\n".join([self._title(), repr(summary_table(self.steps)), *first, HINT])

    def static_html(self) -> str:
        """HTML twin of :meth:`static_text` (shown where widgets cannot be)."""
        parts = [f"<p><b>{html.escape(self._title())}</b></p>", summary_table(self.steps)._repr_html_()]
        parts += [view._repr_html_() for view in self._first_message()]
        return "".join([*parts, f"<p><i>{html.escape(HINT)}</i></p>"])

    def __repr__(self) -> str:
        return self.static_text()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget view for a live frontend, plus stable ``text/plain`` and ``text/html`` fallbacks."""
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        return {**bundle, "text/plain": self.static_text(), "text/html": self.static_html()}


def explore(source: Any, *, fold: Sequence[str] = (), max_items: int | None = None) -> Explorer:
    """A widget that steps through ``source`` message by message.

    ``source`` is a ``Capture``, a ``CaptureTransport``, a list of ``WireMessage``
    or a loop ``Trace``. ``fold`` and ``max_items`` abbreviate the JSON as in
    :func:`mcp_teach.display.show.show`.
    """
    _actors, steps = sequence_steps(source)
    return Explorer(steps, fold=fold, max_items=max_items)
