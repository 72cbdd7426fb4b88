"""mcp_teach.exercises.l07: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

The right answers are not retyped here: each test runs the code of the exercise's solution cell in
``notebooks/solutions/07_resources_prompts.ipynb`` (top-level ``await`` included), in a namespace holding what the
lesson defined before it, with the offline teaching model as ``llm``.
"""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with, passed

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.exercises import check
from mcp_teach.lessons.l03_errors import attempt, explain
from mcp_teach.lessons.l07_context import resource_message
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.llm.teaching_docs import document_block
from mcp_teach.servers import knowledge_base as kb
from mcp_teach.servers.knowledge import build_knowledge_server
from mcp_teach.wire.capture import CaptureTransport

EXERCISES = ("07.1", "07.2", "07.3", "07.4")
OFFLINE = Settings()


def lesson_names() -> dict[str, Any]:
    """What the lesson has defined by the time its exercises start (the names their solution cells use)."""
    return {
        "CaptureTransport": CaptureTransport,
        "attempt": attempt,
        "build_knowledge_server": build_knowledge_server,
        "explain": explain,
        "llm": openai_client(OFFLINE),
        "mcp_types": mcp_types,
        "model": model_name(OFFLINE),
        "resource_message": resource_message,
        "teaching_client": teaching_client,
    }


LESSON = SolvedLesson("07_resources_prompts.ipynb", lesson_names)
run_solution = LESSON.run_solution


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    assert LESSON.assert_answers_defined_nowhere_else() == list(EXERCISES)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_the_lesson_solution_passes(run, exercise_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(run_solution, exercise_id)
    check(exercise_id, namespace)
    passed(capsys, exercise_id)


def test_07_1_characters_are_not_bytes_and_the_id_must_be_the_completed_one() -> None:
    size = kb.load_documents()["resources-and-prompts"].size
    failed_with("07.1", {"completed_id": "resources-and-prompts", "document_size": size + 1}, "resources/list")
    failed_with("07.1", {"completed_id": "tools", "document_size": 935}, "completed_id", ".values[0]")
    failed_with("07.1", {"completed_id": "resources-and-prompts", "document_size": "1347"}, "document_size")


def test_07_2_one_code_for_both_eras_fails() -> None:
    failed_with("07.2", {"missing_codes": {"2026-07-28": -32602, "2025-11-25": -32602}}, "2025-11-25", "legacy")
    failed_with("07.2", {"missing_codes": {"2026-07-28": -32002, "2025-11-25": -32002}}, "2026-07-28")
    failed_with("07.2", {"missing_codes": {"modern": -32602, "legacy": -32002}}, "the keys of missing_codes")
    failed_with("07.2", {"missing_codes": [-32602, -32002]}, "a dict")


def test_07_3_wrong_roles_types_and_counts_fail() -> None:
    right = {"prompt_roles": ["user", "user"], "content_types": ["text", "resource"], "overview_count": 1}
    failed_with("07.3", {**right, "prompt_roles": ["user", "assistant"]}, "prompt_roles")
    failed_with("07.3", {**right, "content_types": ["text", "text"]}, "content_types", "embedded page")
    failed_with("07.3", {**right, "overview_count": 2}, "overview_count", "course_overview")


def test_07_4_the_page_must_be_in_the_conversation_and_cited() -> None:
    page = kb.load_documents()["tools"].text
    question = {"role": "user", "content": "What is a tool execution error?"}
    with_page = {"role": "user", "content": document_block("docs://tools", page)}
    answer = 'From "Tools" (docs://tools): A tool execution error ... `isError: true` ...'
    failed_with("07.4", {"tool_conversation": [question], "tool_answer": answer}, "the documents in tool_conversation")
    cut = {"role": "user", "content": document_block("docs://tools", page[:100])}
    failed_with("07.4", {"tool_conversation": [cut, question], "tool_answer": answer}, "the whole page")
    failed_with("07.4", {"tool_conversation": [question, with_page], "tool_answer": answer}, "the question")
    failed_with("07.4", {"tool_conversation": [with_page, question], "tool_answer": "No idea."}, "citing docs://tools")
    failed_with("07.4", {"tool_conversation": "hello", "tool_answer": answer}, "a list of chat messages")
