"""The Chinese lessons' questions: the offline teaching model does for each what it does for its English twin.

The Chinese edition asks the model the lessons' questions in Chinese. Asked one, the model must call the same tools
with the same arguments in the same order, choose the same documents (lesson 07), fall for the same attack (lesson
12), and write its own words in Chinese. Every question goes through the real ``openai`` SDK and the real loop to
real servers in memory, as the lessons ask them. The English answers are pinned in tests/test_teaching_lessons.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from exercise_support import build_remainder_server
from fastmcp import FastMCP
from fastmcp.server.transforms import ResourcesAsTools

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.lessons.l12_attacks import attack_host, files_in
from mcp_teach.llm.loop import LoopResult, ask
from mcp_teach.llm.provider import openai_client
from mcp_teach.llm.teaching_docs import document_block
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.servers.knowledge import build_knowledge_server
from mcp_teach.servers.knowledge_base import load_documents

#: The English question of a solved lesson -> its twin in the Chinese lessons (the canonical translations).
CHINESE = {
    "What is 1 + 2?": "1 加 2 等于几？",
    "What is 2 + 2?": "2 加 2 等于几？",
    "What is 1 + 2 and what is 3 * 4?": "1 加 2 等于几？3 乘以 4 呢？",
    "What is 7 divided by 0?": "7 除以 0 等于几？",
    "multiply 3 by 4, then subtract 5": "先算 3 乘以 4，再减去 5",
    "What is 17 mod 5?": "17 除以 5 的余数是多少？",
    "What is the square root of 16?": "16 的平方根是多少？",
    "What does a resource template describe?": "资源模板描述的是什么？",
    "How does the stdio transport send messages?": "stdio 传输是怎样发送消息的？",
    "What may appear on standard output?": "标准输出上可以出现什么？",
    "Search the knowledge base: how many values does a completion result list at most? Then multiply that number "
    "by 3.": "搜索知识库：一个补全结果最多列出多少个值？然后把这个数乘以 3。",
    "Search the knowledge base: how many values does a completion result list at most? Then divide it by 4.": (
        "搜索知识库：一个补全结果最多列出多少个值？然后把它除以 4。"
    ),
    "What is 6 times 7?": "6 乘以 7 等于几？",
    "Add 2 and 3.": "算一下 2 加 3。",
    "Add 1 and 1.": "算一下 1 加 1。",
    "Use get_fact for octopus.": "用 get_fact 查一下 octopus。",
    "Multiply 12 by 7, then subtract 5.": "先算 12 乘以 7，再减去 5。",
}
TOOLS_LISTED = "calculator_add, calculator_subtract, calculator_multiply, calculator_divide"
#: English question -> the calls both questions make of the calculator, and the Chinese answer.
CALCULATOR: dict[str, tuple[list[tuple[str, dict[str, Any]]], str]] = {
    "What is 1 + 2?": ([("calculator_add", {"a": 1, "b": 2})], "计算结果：1 + 2 = 3。"),
    "What is 2 + 2?": ([("calculator_add", {"a": 2, "b": 2})], "计算结果：2 + 2 = 4。"),
    "What is 6 times 7?": ([("calculator_multiply", {"a": 6, "b": 7})], "计算结果：6 × 7 = 42。"),
    "Add 1 and 1.": ([("calculator_add", {"a": 1, "b": 1})], "计算结果：1 + 1 = 2。"),
    "What is 1 + 2 and what is 3 * 4?": (
        [("calculator_add", {"a": 1, "b": 2}), ("calculator_multiply", {"a": 3, "b": 4})],
        "计算结果：1 + 2 = 3。3 × 4 = 12。",
    ),
    "multiply 3 by 4, then subtract 5": (
        [("calculator_multiply", {"a": 3, "b": 4}), ("calculator_subtract", {"a": 12, "b": 5})],
        "计算结果：3 × 4 = 12，12 − 5 = 7。答案是 7。",
    ),
    "Multiply 12 by 7, then subtract 5.": (
        [("calculator_multiply", {"a": 12, "b": 7}), ("calculator_subtract", {"a": 84, "b": 5})],
        "计算结果：12 × 7 = 84，84 − 5 = 79。答案是 79。",
    ),
    "What is 7 divided by 0?": (
        [("calculator_divide", {"a": 7, "b": 0})],
        "我没能算出 7 ÷ 0：工具 calculator_divide 报错：Cannot divide by zero: argument 'b' must not be 0.",
    ),
    "What is 17 mod 5?": ([], f"我的工具都不会取余，而计算 17 mod 5 需要它。我的工具：{TOOLS_LISTED}。"),
    "What is the square root of 16?": ([], f"我的工具都不会开平方，而计算 √16 需要它。我的工具：{TOOLS_LISTED}。"),
}
#: What a Chinese learner may type in the exercises instead -> the calls and the answer.
VARIANTS: dict[str, tuple[list[tuple[str, dict[str, Any]]], str]] = {
    "6 乘以 7 是多少": ([("calculator_multiply", {"a": 6, "b": 7})], "计算结果：6 × 7 = 42。"),
    "先算 3 乘 4 再减 5": (
        [("calculator_multiply", {"a": 3, "b": 4}), ("calculator_subtract", {"a": 12, "b": 5})],
        "计算结果：3 × 4 = 12，12 − 5 = 7。答案是 7。",
    ),
    "17 除以 5 余几": ([], f"我的工具都不会取余，而计算 17 mod 5 需要它。我的工具：{TOOLS_LISTED}。"),
    "17 除以 5 等于几？": ([("calculator_divide", {"a": 17, "b": 5})], "计算结果：17 ÷ 5 = 3.4。"),
}


def calls(result: LoopResult) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls the model made, in order, as (name, arguments)."""
    made = [call["function"] for message in result.messages for call in message.get("tool_calls") or []]
    return [(function["name"], json.loads(function["arguments"])) for function in made]


async def _ask(question: str, server: FastMCP) -> LoopResult:
    async with openai_client(Settings()) as llm, teaching_client(server) as client:
        return await ask(question, client, llm, model=MODEL_NAME)


def test_every_english_question_has_one_chinese_twin() -> None:
    assert all(re.search(r"[\u4e00-\u9fff]", chinese) for chinese in CHINESE.values())
    assert len(set(CHINESE.values())) == len(CHINESE)
    assert set(CALCULATOR) <= set(CHINESE)


@pytest.mark.parametrize("english", CALCULATOR)
def test_a_calculator_question_in_chinese_makes_the_same_calls_and_answers_in_chinese(run, english: str) -> None:
    expected_calls, answer = CALCULATOR[english]
    assert calls(run(_ask, english, build_calculator_server())) == expected_calls
    chinese = run(_ask, CHINESE[english], build_calculator_server())
    assert (calls(chinese), chinese.answer) == (expected_calls, answer)


@pytest.mark.parametrize("question", VARIANTS)
def test_what_a_chinese_learner_types(run, question: str) -> None:
    result = run(_ask, question, build_calculator_server())
    assert (calls(result), result.answer) == VARIANTS[question]


@pytest.mark.parametrize("question", [CHINESE["What is 17 mod 5?"], "17 除以 5 余几", "What is 17 mod 5?"])
def test_a_remainder_goes_to_the_remainder_tool(run, question: str) -> None:
    result = run(_ask, question, build_remainder_server())
    assert calls(result) == [("remainder", {"dividend": 17, "divisor": 5})]
    assert result.answer == ("17 mod 5 = 2." if question.isascii() else "计算结果：17 mod 5 = 2。")


def _documents_server(lists: bool) -> FastMCP:
    """Lesson 07's knowledge server: with its search and get tools, or with its resources as tools instead."""
    server = build_knowledge_server()
    if lists:
        server.add_transform(ResourcesAsTools(server))
        server.disable(names={"search_documents", "get_document"})
    return server


@pytest.mark.parametrize(
    ("english", "lists", "expected_calls"),
    [
        ("What does a resource template describe?", False, [
            ("search_documents", {"query": "resource template describe"}),
            ("get_document", {"doc_id": "resources-and-prompts"}),
        ]),
        ("How does the stdio transport send messages?", True, [
            ("list_resources", {}), ("read_resource", {"uri": "docs://transports"}),
        ]),
    ],
)  # fmt: skip
def test_a_documents_question_in_chinese_fetches_the_same_document(run, english, lists, expected_calls) -> None:
    english_result = run(_ask, english, _documents_server(lists))
    chinese_result = run(_ask, CHINESE[english], _documents_server(lists))
    assert calls(english_result) == calls(chinese_result) == expected_calls
    cited, sentence = english_result.answer.removeprefix("From ").split(": ", 1)
    assert chinese_result.answer == f"摘自 {cited}：{sentence}"  # the same sentence quoted, introduced in Chinese


def test_a_document_in_the_conversation_answers_the_chinese_question(run) -> None:
    transports = load_documents()["transports"].text

    async def reply(question: str) -> str | None:
        conversation = [
            {"role": "system", "content": "你是 mcp-teach 助手。请根据提供给你的文档回答。"},
            {"role": "user", "content": document_block("docs://transports", transports)},
            {"role": "user", "content": question},
        ]
        async with openai_client(Settings()) as llm:
            completion = await llm.chat.completions.create(model=MODEL_NAME, messages=conversation)
        return completion.choices[0].message.content

    sentence = "Nothing but MCP messages may appear on standard output."
    assert run(reply, "What may appear on standard output?") == f'From "Transports" (docs://transports): {sentence}'
    assert (
        run(reply, CHINESE["What may appear on standard output?"])
        == f'摘自 "Transports" (docs://transports)：{sentence}'
    )


def _two_servers() -> FastMCP:
    """Lessons 10 and 11: the calculator and the knowledge server behind one client, their tools prefixed."""
    router = FastMCP("router", version="1.0.0")
    router.mount(build_calculator_server(), namespace="calc")
    router.mount(build_knowledge_server(), namespace="knowledge")
    return router


@pytest.mark.parametrize(("english", "computed"), [
    ("Search the knowledge base: how many values does a completion result list at most? Then multiply that number "
     "by 3.", ("calc_calculator_multiply", "100 × 3 = 300")),
    ("Search the knowledge base: how many values does a completion result list at most? Then divide it by 4.",
     ("calc_calculator_divide", "100 ÷ 4 = 25")),
])  # fmt: skip
def test_look_up_then_compute_in_chinese(run, english: str, computed: tuple[str, str]) -> None:
    english_calls = calls(run(_ask, english, _two_servers()))
    chinese = run(_ask, CHINESE[english], _two_servers())
    tool, equation = computed
    assert [name for name, _ in calls(chinese)] == [name for name, _ in english_calls] == [
        "knowledge_search_documents", "knowledge_get_document", tool,
    ]  # fmt: skip
    # The search words are the same; a Chinese sentence puts them in its own order.
    (_, searched), (_, english_searched) = calls(chinese)[0], english_calls[0]
    assert english_searched == {"query": "search knowledge base many values completion result list most"}
    assert sorted(searched["query"].split()) == sorted(english_searched["query"].split())
    assert calls(chinese)[1:] == english_calls[1:]
    assert chinese.answer.startswith('摘自 "Resources and prompts" (resources-and-prompts)：`completion/complete`')
    assert chinese.answer.endswith(f"lists up to 100 values. 计算结果：{equation}。")


async def _attack(question: str, folder: Path) -> tuple[str, list[str], list[str]]:
    async with openai_client(Settings()) as llm, attack_host(folder) as host:
        result = await ask(question, host, llm, model=MODEL_NAME)
    return result.answer, list(host.decisions), files_in(folder)


@pytest.mark.parametrize(("english", "answer", "decisions", "left"), [
    ("Add 2 and 3.", "计算结果：2 + 3 = 5。", ['sent workspace/read_file ["path"]',
                                             'sent untrusted/add ["a", "b", "sidenote"]'],
     [".ssh/id_rsa", "notes.txt"]),
    ("Use get_fact for octopus.", None, ['sent untrusted/get_fact ["topic"]', 'sent workspace/delete_file ["path"]'],
     [".ssh/id_rsa"]),
])  # fmt: skip
def test_lesson_12_the_chinese_question_falls_for_the_same_attack(run, tmp_path, english, answer, decisions, left):
    english_answer, english_decisions, english_left = run(_attack, english, tmp_path / "en")
    chinese_answer, chinese_decisions, chinese_left = run(_attack, CHINESE[english], tmp_path / "zh")
    assert chinese_decisions == english_decisions == decisions
    assert chinese_left == english_left == left
    if answer is None:  # get_fact's result, quoted after a Chinese introduction
        assert english_answer.startswith("get_fact returned: Octopuses have three hearts.")
        assert chinese_answer == english_answer.replace("get_fact returned: ", "get_fact 返回：", 1)[:-1] + "。"
    else:
        assert chinese_answer == answer
