"""Lesson 09's client side: a form built from ``requestedSchema``, a sampler, a progress bar, a recorder.

When a server asks the client something (elicitation, sampling, roots) or tells it something while a call runs
(progress, log messages, list changes), fastmcp's ``Client`` hands it to a *handler* the application passes in.
This module holds the handlers the lesson uses, so that its cells stay a few lines each:

- :func:`schema_form` turns an elicitation's ``requestedSchema`` (flat properties of primitive types,
  client/elicitation) into a real ipywidgets form with Accept / Decline / Cancel buttons; :class:`FormUser` is
  the elicitation handler that shows it and returns what the buttons chose.
- **No human in the loop.** Under nbval, the browser test's Run All, or the grader nobody clicks, so a
  :class:`FormUser` built with ``scripted=[...]`` fills the same widgets itself and presses the button its script
  names (and prints what it did); the answer still comes from the widgets. ``FormUser()`` without a script waits
  for a real click, which a kernel can only deliver while no cell runs: start that call in the background with
  :func:`in_background` and ``await`` the job in a later cell (the lesson's ``INTERACTIVE`` switch).
- :func:`openai_sampler` answers ``sampling/createMessage`` with the real ``openai`` SDK (the offline teaching
  model by default, lesson 04); :class:`ProgressBar` is a progress handler driving an ``IntProgress`` and a
  text bar; :class:`Heard` records log messages and notifications.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
import mcp_types
from fastmcp.client.elicitation import ElicitResult
from IPython.display import display

from mcp_teach.display.show import table

#: The three answers a user can give to an elicitation (client/elicitation, "Response Actions").
ACTIONS = ("accept", "decline", "cancel")


def _field(name: str, schema: dict[str, Any], required: bool) -> widgets.Widget:
    """One input widget for one property: enum -> Dropdown, boolean -> Checkbox, number -> FloatText, ..."""
    label = (schema.get("title") or name) + (" *" if required else "")
    common = {
        "description": label,
        "tooltip": schema.get("description"),
        "style": {"description_width": "initial"},
    }
    kind = schema.get("type")
    if "enum" in schema or "oneOf" in schema:
        options = schema.get("enum") or [choice["const"] for choice in schema["oneOf"]]
        return widgets.Dropdown(options=options, value=schema.get("default", options[0]), **common)
    if kind == "boolean":
        return widgets.Checkbox(value=bool(schema.get("default", False)), indent=False, **common)
    if kind == "integer":
        return widgets.IntText(value=int(schema.get("default", 0)), **common)
    if kind == "number":
        return widgets.FloatText(value=float(schema.get("default", 0)), **common)
    return widgets.Text(value=str(schema.get("default", "")), **common)


@dataclass
class SchemaForm:
    """An elicitation form: one widget per property, three buttons, and the answer they produce."""

    message: str
    schema: dict[str, Any]
    fields: dict[str, widgets.Widget]
    buttons: dict[str, widgets.Button]
    widget: widgets.Widget
    answer: asyncio.Future = field(default_factory=lambda: asyncio.get_event_loop().create_future())

    def content(self) -> dict[str, Any]:
        """What the widgets hold now, as the ``content`` of an accepted answer."""
        return {name: box.value for name, box in self.fields.items()}

    def fill(self, content: dict[str, Any]) -> None:
        """Type ``content`` into the widgets (what a scripted answer does instead of a person)."""
        for name, value in content.items():
            self.fields[name].value = value

    def press(self, action: str) -> ElicitResult:
        """What a button does: build the ``ElicitResult`` (content only for accept) and resolve :attr:`answer`."""
        result = ElicitResult(action=action, content=self.content() if action == "accept" else None)
        for button in self.buttons.values():
            button.disabled = True
        if not self.answer.done():
            self.answer.set_result(result)
        return result


def schema_form(requested_schema: dict[str, Any], message: str = "") -> SchemaForm:
    """A real ipywidgets form for an elicitation's ``requestedSchema``, with Accept / Decline / Cancel."""
    required = set(requested_schema.get("required", []))
    fields = {
        name: _field(name, prop, name in required) for name, prop in requested_schema.get("properties", {}).items()
    }
    styles = {"accept": "success", "decline": "warning", "cancel": ""}
    buttons = {action: widgets.Button(description=action.title(), button_style=styles[action]) for action in ACTIONS}
    box = widgets.VBox([widgets.HTML(f"<b>{message}</b>"), *fields.values(), widgets.HBox(list(buttons.values()))])
    form = SchemaForm(message, requested_schema, fields, buttons, box)
    for action, button in buttons.items():
        button.on_click(lambda _button, action=action: form.press(action))
    return form


class FormUser:
    """An elicitation handler that shows a :func:`schema_form` and answers with what its buttons chose.

    ``scripted``: answers to give without a person, in order, each ``("accept", {...content})``, ``"decline"`` or
    ``"cancel"``: the handler fills the widgets and presses the button itself and prints what it sent. Without a
    script it waits for a click (only possible while no cell is running: see :func:`in_background`).
    """

    def __init__(self, scripted: list[Any] | None = None, *, show: bool = True) -> None:
        self.scripted = None if scripted is None else list(scripted)
        self.show = show
        self.forms: list[SchemaForm] = []
        self.sent: list[ElicitResult] = []

    async def __call__(self, message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        form = schema_form(params.requested_schema, message)
        self.forms.append(form)
        if self.show:
            display(form.widget)
        if self.scripted is not None:
            step = self.scripted.pop(0)
            action, content = (step, None) if isinstance(step, str) else step
            if content:
                form.fill(content)
            result = form.press(action)
            if self.show:
                print(f"scripted answer: pressed {action.title()}" + (f", content {result.content}" if content else ""))
        result = await form.answer
        self.sent.append(result)
        return result


def said(result: Any) -> str:
    """The text a tool result carries (the assistant's tools announce no output schema, so ``.data`` is None).

    ``result`` is what ``call_tool`` returned, or a captured result as a dict.
    """
    if isinstance(result, dict):
        return result["content"][0]["text"] if result.get("content") else ""
    return result.content[0].text if result.content else ""


def in_background(coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task:
    """Run ``coroutine`` as a task of the kernel's loop, so the cell ends and button clicks can arrive."""
    return asyncio.ensure_future(coroutine)


def _openai_messages(messages: list[mcp_types.SamplingMessage], system_prompt: str | None) -> list[dict[str, str]]:
    chat = [{"role": "system", "content": system_prompt}] if system_prompt else []
    for message in messages:
        content = message.content
        text = content.text if isinstance(content, mcp_types.TextContent) else f"[{content.type} content]"
        chat.append({"role": message.role, "content": text})
    return chat


def openai_sampler(llm: Any, model: str, *, record: list[dict[str, Any]] | None = None) -> Any:
    """A sampling handler: the server's messages go to ``llm.chat.completions.create`` (the real SDK), the
    reply goes back as a ``CreateMessageResult`` naming the model. ``record`` gets each (request, reply)."""

    async def sample(messages: list[mcp_types.SamplingMessage], params: Any, context: Any) -> Any:
        request = {
            "model": model,
            "messages": _openai_messages(messages, params.system_prompt),
            "max_tokens": params.max_tokens,
        }
        reply = await llm.chat.completions.create(**request)
        if record is not None:
            record.append({"request": request, "reply": reply.model_dump(exclude_none=True)})
        text = reply.choices[0].message.content or ""
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text=text),
            model=reply.model,
            stop_reason="endTurn",
        )

    return sample


class ProgressBar:
    """A progress handler: each ``notifications/progress`` moves an ``IntProgress`` and adds a line of text."""

    def __init__(self, description: str = "progress") -> None:
        self.bar = widgets.IntProgress(value=0, min=0, max=1, description=description)
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))
        self.bar.max = int(total or max(progress, 1))
        self.bar.value = int(progress)

    def text(self, width: int = 20) -> str:
        """The notifications as text bars, one per notification (what the widget showed, step by step)."""
        lines = []
        for progress, total, message in self.seen:
            filled = round(width * progress / total) if total else 0
            lines.append(f"[{'#' * filled}{'.' * (width - filled)}] {progress:g}/{total:g}  {message or ''}")
        return "\n".join(lines)


@dataclass
class Heard:
    """What a client was told: log messages (level, text) and the methods of the notifications it received."""

    logs: list[tuple[str, str]] = field(default_factory=list)
    notifications: list[str] = field(default_factory=list)

    async def log(self, message: Any) -> None:
        data = message.data
        self.logs.append((message.level, data.get("msg", data) if isinstance(data, dict) else data))

    async def message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ServerNotification):
            self.notifications.append(message.method)


#: Messages every connection sends, left out of :func:`wire_features` (they are lessons 01–03's).
_ROUTINE = {"initialize", "notifications/initialized", "server/discover", "tools/list", "tools/call"}
#: The ``_meta`` key of the 2026-07-28 per-request log level (server/utilities/logging).
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
#: What 2026-07-28 says of each feature (deprecated.mdx, SEP-2577, and the pages cited in the lesson).
STATUS_2026 = {
    "elicitation": "changed: MRTR",
    "sampling": "deprecated (MRTR meanwhile)",
    "roots": "deprecated (MRTR meanwhile)",
    "progress": "unchanged",
    "cancellation": "HTTP: close the stream",
    "logging": "deprecated; level per request",
    "list changes": "changed: subscriptions/listen",
}


def wire_features(capture: Any) -> list[str]:
    """What a capture shows beyond the routine messages: who sent which method, and any ``input_required``."""
    capture = getattr(capture, "capture", capture)
    seen: list[str] = []
    levels: set[str] = set()
    for wire in capture:
        message = wire.message
        who = "server" if wire.direction.startswith("server") else "client"
        if wire.method and wire.method not in _ROUTINE:
            kind = "request" if "id" in message else "notification"
            seen.append(f"{who} {kind} {wire.method}")
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            methods = ", ".join(sorted({r["method"] for r in result.get("inputRequests", {}).values()}))
            seen.append(f"input_required ({methods})")
        params = message.get("params") if isinstance(message, dict) else None
        if wire.method == "tools/call" and isinstance(params, dict):
            if "inputResponses" in params:
                seen.append("client retries tools/call + inputResponses")
            if LOG_LEVEL_KEY in params.get("_meta", {}):
                levels.add(params["_meta"][LOG_LEVEL_KEY])
    if levels and any("notifications/message" in item for item in seen):
        seen.append(f"tools/call _meta logLevel {', '.join(sorted(levels))}")
    return list(dict.fromkeys(seen))


def era_table(pairs: dict[str, tuple[Any, Any]]) -> Any:
    """A table: for each feature, what its 2025-11-25 and 2026-07-28 captures show, and its 2026-07-28 status."""
    rows = [
        [feature, "; ".join(wire_features(legacy)), "; ".join(wire_features(modern)), STATUS_2026.get(feature, "")]
        for feature, (legacy, modern) in pairs.items()
    ]
    return table(["feature", "2025-11-25 wire", "2026-07-28 wire", "in 2026-07-28"], rows)
