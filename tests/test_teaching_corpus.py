"""The offline teaching model answers a corpus of everyday questions (tests/teaching_corpus.py) through the real loop.

Every question goes through :func:`mcp_teach.llm.loop.ask`: the model behind the real ``openai`` SDK, the course
calculator in memory, one connection for the whole corpus. A case passes only if the tool calls are exactly the
expected ones, in order (a dropped step fails), and the answer is the expected number in the question's language,
or says what is missing without a number of its own.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any

import pytest
from teaching_corpus import CASES, FAILS, HELLO, TOOLS, Case

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.course.terminal import run_chat
from mcp_teach.llm import teaching_text
from mcp_teach.llm.loop import ask
from mcp_teach.llm.provider import openai_client
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
CHINESE = re.compile(r"[\u4e00-\u9fff]")
#: How each kind of answer without a number begins, in English and Chinese.
OPENINGS = {
    TOOLS: ("I can only help with what my tools do: ", "我只能做我的工具能做的事："),
    HELLO: ("Hello! ", "你好！"),
    FAILS: ("I could not compute ", "我没能算出 "),
}


async def _ask_all() -> dict[str, tuple[list[tuple[str, dict[str, Any]]], str]]:
    answers = {}
    async with openai_client(Settings()) as llm, teaching_client(build_calculator_server()) as client:
        for case in CASES:
            result = await ask(case.question, client, llm, model=MODEL_NAME)
            calls = [
                (call["function"]["name"], json.loads(call["function"]["arguments"]))
                for message in result.messages
                for call in message.get("tool_calls") or []
            ]
            answers[case.question] = (calls, result.answer)
    return answers


@pytest.fixture(scope="module")
def answers(run) -> dict[str, tuple[list[tuple[str, dict[str, Any]]], str]]:
    return run(_ask_all)


def test_the_corpus_is_large_and_half_of_it_chinese() -> None:
    languages = Counter(case.language for case in CASES)
    assert len(CASES) >= 150 and len({case.question for case in CASES}) == len(CASES)
    assert abs(languages["en"] - languages["zh"]) <= len(CASES) // 10
    assert all(case.language == ("zh" if CHINESE.search(case.question) else "en") for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[f"{case.kind}:{case.question}" for case in CASES])
def test_each_question_gets_its_calls_and_answer(answers, case: Case) -> None:
    calls, answer = answers[case.question]
    assert calls == case.calls, answer
    assert bool(CHINESE.search(answer)) == (case.language == "zh"), answer
    chinese = case.language == "zh"
    if isinstance(case.answer, int | float):
        *_, last = NUMBER.findall(answer)
        assert math.isclose(float(last), case.answer), answer
    elif case.answer.startswith("lacks:"):
        what = teaching_text.LACKING[case.answer.removeprefix("lacks:")][chinese]
        assert answer == teaching_text.say("lacks", chinese, what=what)
        assert set(NUMBER.findall(answer)) <= set(NUMBER.findall(case.question)), answer  # no number made up
    else:
        assert answer.startswith(OPENINGS[case.answer][chinese]), answer


#: One question of each kind, as typed into ``mcp-teach chat``: (question, the answer printed).
CHAT = [
    ("A ticket costs 12 euros. How much do 7 tickets cost?", "12 × 7 = 84."),
    (
        "I buy 7 tickets at 12 euros each and pay with 100 euros. How much change do I get?",
        "7 × 12 = 84, 100 − 84 = 16. The answer is 16.",
    ),
    ("What is 12 times 7, minus 5?", "12 × 7 = 84, 84 − 5 = 79. The answer is 79."),
    ("double 7", "7 × 2 = 14."),
    ("What is the average of 4, 8 and 12?", "4 + 8 = 12, 12 + 12 = 24, 24 ÷ 3 = 8. The answer is 8."),
    ("50的百分之20是多少？", "计算结果：20 × 50 = 1000，1000 ÷ 100 = 10。答案是 10。"),
    ("我有50元，花了18元，还剩多少钱？", "计算结果：50 − 18 = 32。"),
    ("How much do 7 tickets cost?", teaching_text.say("lacks", False, what=teaching_text.LACKING["price"][False])),
]


def test_mcp_teach_chat_answers_each_kind(run) -> None:
    typed = iter([question for question, _ in CHAT] + ["exit"])
    printed: list[str] = []
    run(run_chat, Settings(), "in-memory", lambda prompt: next(typed), printed.append)
    answers = [line.removeprefix("assistant> ") for line in printed if line.startswith("assistant> ")]
    assert answers == [answer for _, answer in CHAT]
