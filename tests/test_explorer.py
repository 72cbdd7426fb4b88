"""The message explorer on a real capture and a real tool-loop trace, driven like a student would."""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.display.explorer import Explorer, explore
from mcp_teach.display.show import summary
from mcp_teach.llm.loop import LoopResult, ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture, WireMessage


async def _legacy() -> CaptureTransport:
    capture = CaptureTransport(build_calculator_server())
    async with teaching_client(capture, mode="legacy") as client:
        await client.list_tools()
        await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
    return capture


async def _ask(question: str) -> LoopResult:
    settings = Settings()
    async with teaching_client(CaptureTransport(build_calculator_server())) as client:
        return await ask(question, client, openai_client(settings), model=model_name(settings), since=0)


@pytest.fixture(scope="module")
def legacy(run) -> CaptureTransport:
    """Handshake, tools/list and 1 / 0: 7 messages."""
    return run(_legacy)


def test_it_is_a_widget_with_buttons_slider_header_and_body(legacy):
    explorer = explore(legacy)
    assert isinstance(explorer, Explorer) and isinstance(explorer, widgets.VBox)
    assert (explorer.slider.min, explorer.slider.max, explorer.slider.value) == (1, len(legacy.capture), 1)
    assert explorer.index == 0
    assert "#1 · client → server · request · initialize · id=1" in explorer.header.value
    assert "client proposes a protocol version" in explorer.header.value
    assert "protocolVersion" in explorer.body.value and "<details" in explorer.body.value


def test_next_shows_the_next_message_and_what_it_answers(legacy):
    explorer = explore(legacy)
    header, body = explorer.header.value, explorer.body.value
    explorer.next_button.click()
    assert explorer.index == 1 and explorer.slider.value == 2
    assert explorer.header.value != header and explorer.body.value != body
    assert "#2 · server → client · response · id=1 · answers #1 initialize" in explorer.header.value
    assert "serverInfo" in explorer.body.value
    explorer.next_button.click()
    assert "#3 · client → server · notification · notifications/initialized" in explorer.header.value
    explorer.previous_button.click()
    assert explorer.index == 1


def test_the_slider_selects_a_message(legacy):
    explorer = explore(legacy)
    explorer.slider.value = 7
    assert explorer.index == 6
    assert "answers #6 tools/call" in explorer.header.value
    assert "isError: true" in explorer.header.value  # the note on a tool error
    assert "#cf222e" in explorer.header.value  # red, as in show()
    assert "Cannot divide by zero" in explorer.body.value


def test_the_buttons_are_disabled_at_the_ends(legacy):
    explorer = explore(legacy)
    assert explorer.previous_button.disabled and not explorer.next_button.disabled
    explorer.previous_button.click()  # nothing happens before the first message
    assert explorer.index == 0
    for _ in range(len(legacy.capture) + 2):
        explorer.next()
    assert explorer.index == len(legacy.capture) - 1
    assert explorer.next_button.disabled and not explorer.previous_button.disabled


def test_the_static_fallback_shows_the_summary_and_the_first_message(legacy):
    explorer = explore(legacy)
    explorer.next()  # what was clicked does not change the stored output
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # the live widget in JupyterLab
    text = bundle["text/plain"]
    assert text.startswith("Message explorer: 7 messages\n\n")
    assert repr(summary(legacy)) in text
    assert "#1 · client → server · request · initialize · id=1 — client proposes" in text
    assert '"clientInfo": {' in text
    assert "<table>" in bundle["text/html"] and "initialize" in bundle["text/html"]
    again = explore(legacy)._repr_mimebundle_()
    assert (again["text/plain"], again["text/html"]) == (text, bundle["text/html"])
    assert repr(explorer) == text


def test_a_json_rpc_error_explains_its_code():
    capture = Capture(
        [
            WireMessage("client->server", {"jsonrpc": "2.0", "id": 1, "method": "nope/nothing"}),
            WireMessage("server->client", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
        ]
    )
    explorer = explore(capture)
    assert "a request: it has an id" in explorer.header.value  # no glossary entry: the generic note
    explorer.next()
    assert "error · id=1 · answers #1 nope/nothing" in explorer.header.value
    assert "JSON-RPC error -32601: Method not found" in explorer.header.value


def test_a_trace_is_explored_event_by_event(run):
    result = run(_ask, "What is 1 + 2?")
    explorer = explore(result.trace, fold=["tools"])
    assert explorer.slider.max == len(result.trace)
    explorer.index = 2
    assert "#3 · user → client · question" in explorer.header.value
    explorer.index = 6
    assert "#7 · LLM → client · llm-response" in explorer.header.value
    assert "asks the client to run tools" in explorer.header.value
    assert "user → client" in explorer.static_text()


def test_an_empty_capture():
    explorer = explore(Capture())
    assert explorer.previous_button.disabled and explorer.next_button.disabled
    assert "(no messages)" in explorer.header.value
    assert explorer.static_text().startswith("Message explorer: 0 messages")
