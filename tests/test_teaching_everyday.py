"""The offline teaching model answers everyday questions with the calculator's tools, over both APIs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.llm.loop import LoopResult, ask
from mcp_teach.llm.provider import anthropic_client, openai_client
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

OFFLINE = Settings()

#: question -> (tool calls in order, the answer)
ANSWERS: dict[str, tuple[list[tuple[str, dict[str, Any]]], str]] = {
    "half of 9": ([("calculator_divide", {"a": 9, "b": 2})], "9 ÷ 2 = 4.5."),
    "a third of 12": ([("calculator_divide", {"a": 12, "b": 3})], "12 ÷ 3 = 4."),
    "如果我有12个苹果，分给4个人，每人几个？": ([("calculator_divide", {"a": 12, "b": 4})], "计算结果：12 ÷ 4 = 3。"),
    "3 items at 4 each": ([("calculator_multiply", {"a": 3, "b": 4})], "3 × 4 = 12."),
    "3 pizzas at 12 dollars each": ([("calculator_multiply", {"a": 3, "b": 12})], "3 × 12 = 36."),
    "12 apples shared among 4 people": ([("calculator_divide", {"a": 12, "b": 4})], "12 ÷ 4 = 3."),
    "double 7": ([("calculator_multiply", {"a": 7, "b": 2})], "7 × 2 = 14."),
    "A pizza costs 12 dollars; how much do 3 pizzas cost?": (
        [("calculator_multiply", {"a": 12, "b": 3})],
        "12 × 3 = 36.",
    ),
    "20 percent of 50": (
        [("calculator_multiply", {"a": 20, "b": 50}), ("calculator_divide", {"a": 1000, "b": 100})],
        "20 × 50 = 1000, 1000 ÷ 100 = 10. The answer is 10.",
    ),
    "5 dollars per hour for 8 hours": ([("calculator_multiply", {"a": 5, "b": 8})], "5 × 8 = 40."),
    "I buy 7 tickets at 12 euros each and pay with 100 euros. How much change do I get?": (
        [("calculator_multiply", {"a": 7, "b": 12}), ("calculator_subtract", {"a": 100, "b": 84})],
        "7 × 12 = 84, 100 − 84 = 16. The answer is 16.",
    ),
}


async def _ask(llm: Any, question: str) -> LoopResult:
    async with llm, teaching_client(CaptureTransport(build_calculator_server())) as client:
        return await ask(question, client, llm, model=MODEL_NAME)


def _calls(result: LoopResult) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for message in result.messages:
        for call in message.get("tool_calls") or []:  # chat completions
            calls.append((call["function"]["name"], json.loads(call["function"]["arguments"])))
        if isinstance(message.get("content"), list):  # Messages
            calls += [(b["name"], b["input"]) for b in message["content"] if b["type"] == "tool_use"]
    return calls


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize(("question", "expected"), ANSWERS.items(), ids=list(ANSWERS))
def test_everyday_questions_are_answered_with_tools(run, api: str, question: str, expected: tuple) -> None:
    llm = openai_client(OFFLINE) if api == "openai" else anthropic_client(OFFLINE)
    result = run(_ask, llm, question)
    calls, answer = expected
    assert _calls(result) == calls
    assert result.answer == answer


def test_a_question_it_cannot_read_gets_examples_instead_of_a_refusal(run) -> None:
    result = run(_ask, openai_client(OFFLINE), "How many legs do 3 spiders have?")
    assert result.answer.startswith('I could not read a calculation in "How many legs do 3 spiders have?"')
    assert '"3 items at 2 each"' in result.answer
    old = run(_ask, openai_client(OFFLINE), "I have 3 apples and 4 pears")
    assert old.answer.startswith("I can only help with what my tools do: ")
