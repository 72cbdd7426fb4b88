"""mcp_teach.lessons.l11_two_apis: the recorder under both SDKs, the tables built from recordings, the served model
and the error texts of lesson 11."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.lessons.l11_two_apis import (
    LLMRecorder,
    api_table,
    loop_table,
    mcp_calls,
    recorded_client,
    results_table,
    stand_in_app,
    stand_in_client,
    start_model_server,
    try_llm,
)
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import LoopResult, ask_any
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

QUESTION = "multiply 3 by 4, then subtract 5"
KEY = "sk-served-test-key-0123456789abcdef"


async def _both() -> tuple[LLMRecorder, dict[str, LoopResult], CaptureTransport]:
    recorder = LLMRecorder()
    runs = {}
    for api in ("openai", "anthropic"):
        capture = CaptureTransport(build_calculator_server())  # the last one, the Messages run's, is returned
        async with teaching_client(capture) as client:
            runs[api] = await ask_any(QUESTION, client, recorded_client(api, recorder), model=MODEL_NAME)
    return recorder, runs, capture


@pytest.fixture(scope="module")
def both() -> tuple[LLMRecorder, dict[str, LoopResult], CaptureTransport]:
    from conftest import _run_async

    return _run_async(_both)


def test_the_recorder_keeps_every_exchange_of_both_apis(both) -> None:
    recorder, runs, _ = both
    chat, messages = recorder.of_api("chat completions"), recorder.of_api("messages")
    assert len(chat) == len(messages) == 3 == runs["openai"].rounds == runs["anthropic"].rounds
    assert {e.path for e in chat} == {"/v1/chat/completions"} and {e.path for e in messages} == {"/v1/messages"}
    assert all(e.status == 200 for e in recorder.exchanges)
    assert messages[0].request["max_tokens"] > 0 and "system" in messages[0].request
    assert messages[0].headers["anthropic-version"] and "anthropic-version" not in chat[0].headers
    assert messages[1].request["messages"][2]["content"][0]["type"] == "tool_result"
    assert chat[1].request["messages"][3]["role"] == "tool"


def test_no_key_is_recorded(both) -> None:
    recorder, _, _ = both
    for exchange in recorder.exchanges:
        assert "offline" not in json.dumps(exchange.headers), exchange.headers
        assert exchange.headers["authorization"] == "Bearer [REDACTED]"


def test_the_api_table_is_read_from_the_recordings(both) -> None:
    recorder, _, _ = both
    text = api_table(recorder.of_api("chat completions"), recorder.of_api("messages")).text()
    for fragment in (
        "POST /v1/chat/completions",
        "POST /v1/messages",
        'finish_reason: "tool_calls"',
        'stop_reason: "tool_use"',
        'stop_reason: "end_turn"',
        "name, description, input_schema",
        "type, function{name, description, parameters}",
        '{"role": "tool", "tool_call_id": "call_1_0", "content": "12.0"}',
        "input_tokens, output_tokens",
    ):
        assert fragment in text, fragment


def test_both_loops_are_the_same_on_the_mcp_side(both) -> None:
    _, runs, capture = both
    a, b = runs["openai"].trace, runs["anthropic"].trace
    expected = [("calculator_multiply", {"a": 3, "b": 4}), ("calculator_subtract", {"a": 12, "b": 5})]
    assert mcp_calls(a) == mcp_calls(b) == expected
    text = loop_table(a, b).text()
    assert "(!)" not in text and "tool_use: calculator_multiply" in text and "tool_calls: calculator_multiply" in text
    rows = results_table(capture.capture, capture.capture.requests("tools/call")).text()
    assert "calculator_multiply  False    12.0" in rows


def test_loop_table_refuses_traces_of_different_length(both) -> None:
    _, runs, _ = both
    short = runs["openai"].trace.events[:3]
    with pytest.raises(ValueError, match="differ in length"):
        loop_table(type(runs["openai"].trace)(short), runs["anthropic"].trace)


def test_recorded_client_knows_two_apis() -> None:
    with pytest.raises(ValueError, match="'openai' or 'anthropic'"):
        recorded_client("gemini", LLMRecorder())


def test_the_served_model_answers_both_apis_and_hides_its_key(run) -> None:
    server = start_model_server(api_key=KEY)
    try:
        assert KEY not in server.text() and "--api-key [REDACTED]" in server.text()
        assert server.url.endswith("/v1") and server.root == server.url.removesuffix("/v1")
        chat = Settings(openai_base_url=server.url, openai_api_key=KEY)
        messages = Settings(anthropic_base_url=server.root, anthropic_api_key=KEY)
        assert run(try_llm, chat) == run(try_llm, messages) == "6 × 7 = 42."
        wrong = run(try_llm, Settings(anthropic_base_url=server.root, anthropic_api_key="sk-ant-wrong-0000000000"))
        assert "HTTP 401" in wrong and "ANTHROPIC_API_KEY" in wrong
    finally:
        server.stop()
    assert not server.running and "(stopped)" in server.text()
    down = run(try_llm, Settings(openai_base_url=server.url, openai_api_key=KEY))
    assert down.startswith("LLMError: Cannot reach the LLM at") and "OPENAI_BASE_URL" in down


def test_try_llm_reports_a_missing_key_before_any_request(run) -> None:
    message = run(try_llm, Settings(provider_choice="anthropic"))
    assert message.startswith("LLMError: LLM_PROVIDER is anthropic") and "ANTHROPIC_API_KEY" in message


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [(529, "overloaded_error", r"overloaded \(HTTP 529"), (429, "rate_limit_error", "rate-limiting this key")],
)
def test_a_stand_in_provider_error_becomes_an_llm_error(run, status: int, kind: str, expected: str) -> None:
    async def ask() -> Any:
        async with teaching_client(build_calculator_server()) as client:
            return await ask_any(QUESTION, client, stand_in_client(stand_in_app(status, kind, "no")), model="claude-x")

    with pytest.raises(LLMError, match=expected):
        run(ask)
