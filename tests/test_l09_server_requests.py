"""mcp_teach.lessons.l09_server_requests: the form drawn from ``requestedSchema``, answered by its buttons, as an
elicitation handler against the real assistant server in both eras (the lesson's own handlers run under nbval)."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import ipywidgets as widgets
from support import HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l09_server_requests import in_background, schema_form
from mcp_teach.servers.assistant import build_assistant_server
from mcp_teach.wire.capture import CaptureTransport

SCHEMA = {
    "type": "object",
    "properties": {
        "unit": {"type": "string", "title": "Unit", "enum": ["m", "km"]},
        "sure": {"type": "boolean", "default": True},
        "count": {"type": "integer"},
        "ratio": {"type": "number", "default": 0.5},
        "note": {"type": "string", "description": "free text"},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
    },
    "required": ["unit"],
}


def text(result: Any) -> str:
    return result.content[0].text if result.content else ""


def test_schema_form_makes_one_widget_per_property_and_buttons_answer(run) -> None:
    async def scenario() -> Any:
        form = schema_form(SCHEMA, "Pick")
        kinds = {name: type(box) for name, box in form.fields.items()}
        assert kinds == {
            "unit": widgets.Dropdown,
            "sure": widgets.Checkbox,
            "count": widgets.IntText,
            "ratio": widgets.FloatText,
            "note": widgets.Text,
            "size": widgets.Dropdown,
        }
        assert form.fields["unit"].description == "Unit *" and form.fields["sure"].value is True
        assert form.fields["size"].options == ("s", "l")
        form.fill({"unit": "km", "note": "hi"})
        form.buttons["accept"].click()  # the real button's on_click
        return form, await form.answer

    form, answer = run(scenario)
    assert answer.action == "accept"
    assert answer.content == {"unit": "km", "sure": True, "count": 0, "ratio": 0.5, "note": "hi", "size": "s"}
    assert all(button.disabled for button in form.buttons.values())


class Pressing:
    """An elicitation handler that presses the form's buttons as ``script`` says, keeping the forms."""

    def __init__(self, script: list[Any] | None = None) -> None:
        self.script, self.forms = script, []

    async def __call__(self, message: str, response_type: Any, params: Any, context: Any) -> Any:
        form = schema_form(params.requested_schema, message)
        self.forms.append(form)
        if self.script is not None:
            step = self.script.pop(0)
            action, content = (step, {}) if isinstance(step, str) else step
            form.fill(content)
            form.buttons[action].click()
        return await form.answer


def test_the_buttons_answers_go_on_the_wire_in_both_eras(run) -> None:
    async def convert(mode: str, user: Pressing) -> tuple[list[str], Any]:
        capture = CaptureTransport(build_assistant_server())
        async with teaching_client(capture, mode=mode, elicitation_handler=user) as client:
            texts = [text(await client.call_tool("convert_length", {"value": 2})) for _ in range(3)]
        return texts, capture.capture

    for mode in ("legacy", "auto"):
        user = Pressing([("accept", {"unit": "cm"}), "decline", "cancel"])
        texts, capture = run(convert, mode, user)
        assert texts == [
            "2 m = 200 cm",
            "Not converted: you declined to choose a unit.",
            "Not converted: the question was cancelled.",
        ]
        if mode == "legacy":
            answers = [capture.response_to(w).message["result"] for w in capture.requests("elicitation/create")]
        else:
            calls = [w.message["params"] for w in capture.requests("tools/call")]
            answers = [c["inputResponses"]["unit"] for c in calls if "inputResponses" in c]
        assert answers == [{"action": "accept", "content": {"unit": "cm"}}, {"action": "decline"}, {"action": "cancel"}]


def test_without_a_script_the_call_waits_for_a_click(run) -> None:
    async def scenario() -> str:
        user = Pressing()

        async def convert() -> str:
            async with teaching_client(build_assistant_server(), elicitation_handler=user) as client:
                return text(await client.call_tool("convert_length", {"value": 1}))

        job = in_background(convert())
        with anyio.fail_after(HANG_TIMEOUT):
            while not user.forms:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert not job.done()  # nobody has clicked yet
        user.forms[0].fields["unit"].value = "mm"
        user.forms[0].buttons["accept"].click()
        return await job

    assert run(scenario) == "1 m = 1000 mm"
