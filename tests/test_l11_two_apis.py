"""Lesson 11's plumbing: SDK clients whose HTTP is recorded (``on_exchange``), and the served model's process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.lessons.l11_two_apis import start_model_server
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import LoopResult, ask
from mcp_teach.llm.provider import anthropic_client, llm_client, openai_client
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.http_recording import HttpExchange

QUESTION = "multiply 3 by 4, then subtract 5"
KEY = "sk-served-test-key-0123456789abcdef"


async def _both() -> tuple[list[HttpExchange], dict[str, LoopResult]]:
    exchanges: list[HttpExchange] = []
    runs = {}
    for name, make in (("openai", openai_client), ("anthropic", anthropic_client)):
        async with teaching_client(CaptureTransport(build_calculator_server())) as client:
            llm = make(Settings(), on_exchange=exchanges.append)
            runs[name] = await ask(QUESTION, client, llm, model=MODEL_NAME)
    return exchanges, runs


@pytest.fixture(scope="module")
def both(run) -> tuple[list[HttpExchange], dict[str, LoopResult]]:
    return run(_both)


def test_on_exchange_records_every_request_of_both_sdks(both) -> None:
    exchanges, runs = both
    assert [e.target for e in exchanges] == ["/v1/chat/completions"] * 3 + ["/v1/messages"] * 3
    assert all(e.status == 200 and e.ended_at is not None for e in exchanges)
    chat, messages = [json.loads(e.request_body) for e in exchanges[1:5:3]]
    assert chat["messages"][-1] == {"role": "tool", "tool_call_id": "call_1_0", "content": "12.0"}
    assert messages["messages"][-1]["content"][0]["type"] == "tool_result" and messages["max_tokens"] > 0
    assert (
        "anthropic-version" in exchanges[3].request_headers and "anthropic-version" not in exchanges[0].request_headers
    )
    answers = [json.loads(e.response_body) for e in (exchanges[2], exchanges[5])]
    assert answers[0]["choices"][0]["finish_reason"] == "stop" and answers[1]["stop_reason"] == "end_turn"
    assert runs["openai"].answer == runs["anthropic"].answer


def test_no_key_is_recorded(both) -> None:
    exchanges, _ = both
    for exchange in exchanges:
        assert exchange.request_headers["authorization"] == "Bearer [REDACTED]"


async def _try_llm(settings: Settings) -> str:
    try:
        llm, model = llm_client(settings, max_retries=0)
        async with teaching_client(build_calculator_server()) as client:
            return (await ask("What is 6 times 7?", client, llm, model=model)).answer
    except LLMError as error:
        return f"LLMError: {error}"


def test_the_served_model_answers_both_apis_and_hides_its_key(run) -> None:
    server = start_model_server(api_key=KEY)
    try:
        assert KEY not in server.text() and "--api-key [REDACTED]" in server.text()
        assert max(len(line) for line in server.text().splitlines()) <= 120
        assert server.url.endswith("/v1") and server.root == server.url.removesuffix("/v1")
        chat = Settings(openai_base_url=server.url, openai_api_key=KEY)
        messages = Settings(anthropic_base_url=server.root, anthropic_api_key=KEY)
        assert run(_try_llm, chat) == run(_try_llm, messages) == "6 × 7 = 42."
        wrong = run(_try_llm, Settings(anthropic_base_url=server.root, anthropic_api_key="sk-ant-wrong-0000000000"))
        assert "HTTP 401" in wrong and "ANTHROPIC_API_KEY" in wrong
    finally:
        server.stop()
    assert not server.running and "(stopped)" in server.text()
    down: Any = run(_try_llm, Settings(openai_base_url=server.url, openai_api_key=KEY))
    assert down.startswith("LLMError: Cannot reach the LLM at") and "OPENAI_BASE_URL" in down
