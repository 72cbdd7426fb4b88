"""mcp_teach.lessons.l09_server_requests: the form built from ``requestedSchema``, the scripted and the clicking
user, the openai sampler, the progress bar and the era table, against the real assistant server in both eras."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import ipywidgets as widgets

from mcp_teach.client import teaching_client
from mcp_teach.config import load_settings
from mcp_teach.lessons.l09_server_requests import (
    FormUser,
    Heard,
    ProgressBar,
    era_table,
    in_background,
    openai_sampler,
    said,
    schema_form,
    wire_features,
)
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.llm.teaching_docs import document_block
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


async def _convert(mode: str, user: FormUser) -> tuple[list[str], Any]:
    capture = CaptureTransport(build_assistant_server())
    async with teaching_client(capture, mode=mode, elicitation_handler=user) as client:
        texts = [said(await client.call_tool("convert_length", {"value": 2})) for _ in range(3)]
    return texts, capture.capture


def test_a_scripted_user_fills_the_form_and_its_answer_goes_on_the_wire(run, capsys) -> None:
    for mode in ("legacy", "auto"):
        user = FormUser(scripted=[("accept", {"unit": "cm"}), "decline", "cancel"])
        texts, capture = run(_convert, mode, user)
        assert texts == [
            "2 m = 200 cm",
            "Not converted: you declined to choose a unit.",
            "Not converted: the question was cancelled.",
        ]
        assert user.forms[0].fields["unit"].value == "cm"
        if mode == "legacy":
            answers = [capture.response_to(w).message["result"] for w in capture.requests("elicitation/create")]
        else:
            calls = [w.message["params"] for w in capture.requests("tools/call")]
            answers = [c["inputResponses"]["unit"] for c in calls if "inputResponses" in c]
        assert answers == [{"action": "accept", "content": {"unit": "cm"}}, {"action": "decline"}, {"action": "cancel"}]
    out = capsys.readouterr().out
    assert "scripted answer: pressed Accept, content {'unit': 'cm'}" in out and "pressed Decline" in out


def test_without_a_script_the_call_waits_for_a_click(run) -> None:
    async def scenario() -> str:
        user = FormUser(show=False)

        async def convert() -> str:
            async with teaching_client(build_assistant_server(), elicitation_handler=user) as client:
                return said(await client.call_tool("convert_length", {"value": 1}))

        job = in_background(convert())
        with anyio.fail_after(10):
            while not user.forms:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert not job.done()  # nobody has clicked yet
        user.forms[0].fields["unit"].value = "mm"
        user.forms[0].buttons["accept"].click()
        return await job

    assert run(scenario) == "1 m = 1000 mm"


def test_the_sampler_asks_the_teaching_model_through_the_openai_sdk(run) -> None:
    async def scenario() -> tuple[str, list[dict]]:
        settings = load_settings()
        record: list[dict] = []
        sampler = openai_sampler(openai_client(settings), model_name(settings), record=record)
        text = document_block("notes", "Progress reports how far a tool got. Nothing else matters here.")
        async with teaching_client(build_assistant_server(), mode="legacy", sampling_handler=sampler) as client:
            return said(await client.call_tool("summarize_text", {"text": text})), record

    summary, record = run(scenario)
    assert summary == "Summary by mcp-teach-offline: Summary of notes:\nProgress reports how far a tool got."
    assert record[0]["request"]["messages"][0] == {"role": "system", "content": "You write short, plain summaries."}
    assert record[0]["request"]["max_tokens"] == 80


def test_the_progress_bar_follows_the_notifications(run) -> None:
    async def scenario() -> ProgressBar:
        bar = ProgressBar()
        async with teaching_client(build_assistant_server(), progress_handler=bar) as client:
            await client.call_tool("count_slowly", {"n": 4, "delay": 0})
        return bar

    bar = run(scenario)
    assert (bar.bar.value, bar.bar.max) == (4, 4)
    assert bar.text(width=4).splitlines() == [
        "[#...] 1/4  step 1 of 4",
        "[##..] 2/4  step 2 of 4",
        "[###.] 3/4  step 3 of 4",
        "[####] 4/4  step 4 of 4",
    ]


def test_the_era_table_reads_the_captures(run) -> None:
    async def scenario() -> dict[str, Any]:
        captures = {}
        for mode in ("legacy", "auto"):
            captures[mode] = CaptureTransport(build_assistant_server())
            heard = Heard()
            async with teaching_client(captures[mode], mode=mode, log_handler=heard.log) as client:
                await client.call_tool("log_levels", {})
        return captures

    captures = run(scenario)
    assert wire_features(captures["legacy"]) == ["server notification notifications/message"]
    assert wire_features(captures["auto"]) == [
        "server notification notifications/message",
        "tools/call _meta logLevel debug",
    ]
    text = era_table({"logging": (captures["legacy"], captures["auto"])}).text()
    assert "deprecated; level per request" in text
