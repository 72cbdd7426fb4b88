"""Lesson 09's form widgets: an ipywidgets form drawn from an elicitation's ``requestedSchema``.

The lesson writes its elicitation handler in a cell; drawing the form is plumbing it calls. Form-mode schemas are
flat objects of primitive properties (2025-11-25, client/elicitation), so one widget per property is enough: an
enum becomes a Dropdown, a boolean a Checkbox, numbers number boxes, anything else a Text. The three buttons give
the three answers, accept (with the widgets' values as ``content``), decline and cancel.

A kernel delivers a click only while no cell runs: a call that waits for one is started with
:func:`in_background` and awaited in a later cell.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
from fastmcp.client.elicitation import ElicitResult

#: The three answers a user can give to an elicitation (client/elicitation, "Response Actions").
ACTIONS = ("accept", "decline", "cancel")


def _field(name: str, schema: dict[str, Any], required: bool) -> widgets.Widget:
    """One input widget for one property: enum -> Dropdown, boolean -> Checkbox, number -> FloatText, ..."""
    label = (schema.get("title") or name) + (" *" if required else "")
    common = {"description": label, "tooltip": schema.get("description"), "style": {"description_width": "initial"}}
    if "enum" in schema or "oneOf" in schema:
        options = schema.get("enum") or [choice["const"] for choice in schema["oneOf"]]
        return widgets.Dropdown(options=options, value=schema.get("default", options[0]), **common)
    if schema.get("type") == "boolean":
        return widgets.Checkbox(value=bool(schema.get("default", False)), indent=False, **common)
    if schema.get("type") == "integer":
        return widgets.IntText(value=int(schema.get("default", 0)), **common)
    if schema.get("type") == "number":
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
    properties = requested_schema.get("properties", {})
    fields = {name: _field(name, prop, name in required) for name, prop in properties.items()}
    styles = {"accept": "success", "decline": "warning", "cancel": ""}
    buttons = {action: widgets.Button(description=action.title(), button_style=styles[action]) for action in ACTIONS}
    box = widgets.VBox([widgets.HTML(f"<b>{message}</b>"), *fields.values(), widgets.HBox(list(buttons.values()))])
    form = SchemaForm(message, requested_schema, fields, buttons, box)
    for action, button in buttons.items():
        button.on_click(lambda _button, action=action: form.press(action))
    return form


def in_background(coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task:
    """Run ``coroutine`` as a task of the kernel's loop, so the cell ends and button clicks can arrive."""
    return asyncio.ensure_future(coroutine)
