"""The questions the solved lessons ask the offline teaching model get the answers their stored outputs show.

The everyday phrasings (tests/teaching_corpus.py) must not change what a lesson prints: each question a lesson asks
the calculator is answered here through the real loop, word for word; the questions lessons ask other servers
(documents, named tools, GitHub, the capstone) stay outside arithmetic, so the rules that answer them still do.
A change here means a lesson's stored output changes: re-execute that lesson.
"""

from __future__ import annotations

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.llm.loop import ask
from mcp_teach.llm.provider import openai_client
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.llm.teaching_parse import lacking, parse_arithmetic
from mcp_teach.servers.calculator import build_calculator_server

#: question -> the answer (lessons 04, 06, 11, 12 and the tour ask the calculator).
CALCULATOR = {
    "What is 1 + 2?": "1 + 2 = 3.",
    "What is 2 + 2?": "2 + 2 = 4.",
    "What is 6 times 7?": "6 × 7 = 42.",
    "Add 1 and 1.": "1 + 1 = 2.",
    "Add 2 and 3.": "2 + 3 = 5.",
    "What is 1 + 2 and what is 3 * 4?": "1 + 2 = 3. 3 × 4 = 12.",
    "multiply 3 by 4, then subtract 5": "3 × 4 = 12, 12 − 5 = 7. The answer is 7.",
    "Multiply 12 by 7, then subtract 5.": "12 × 7 = 84, 84 − 5 = 79. The answer is 79.",
    "What is 17 mod 5?": (
        "None of my tools can do remainders, which 17 mod 5 needs. My tools: calculator_add, calculator_subtract, "
        "calculator_multiply, calculator_divide."
    ),
    "What is 7 divided by 0?": (
        "I could not compute 7 ÷ 0: the tool calculator_divide said: Cannot divide by zero: argument 'b' must not be 0."
    ),
}
#: Questions lessons 07, 10, 12, 13 and 14 ask other servers: no arithmetic in them, and nothing missing.
OTHERS = [
    "How does the stdio transport send messages?",
    "What does a resource template describe?",
    "What may appear on standard output?",
    "Use get_fact for octopus.",
    "Search the knowledge base: how many values does a completion result list at most?",
    "modelcontextprotocol/python-sdk",
    "octocat/no-such-repository",
    "step1",
    "Step 1: What is your name?",
]


async def _ask_all() -> dict[str, str]:
    async with openai_client(Settings()) as llm, teaching_client(build_calculator_server()) as client:
        return {question: (await ask(question, client, llm, model=MODEL_NAME)).answer for question in CALCULATOR}


def test_lesson_questions_to_the_calculator_keep_their_answers(run) -> None:
    assert run(_ask_all) == CALCULATOR


@pytest.mark.parametrize("question", OTHERS)
def test_lesson_questions_to_other_servers_stay_outside_arithmetic(question: str) -> None:
    assert parse_arithmetic(question) == []
    assert lacking(question) is None
