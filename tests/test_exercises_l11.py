"""mcp_teach.exercises.l11: the solved lesson's own answers pass, wrong ones fail with expected / found / hint."""

from __future__ import annotations

from typing import Any

import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with

from mcp_teach.client import teaching_client
from mcp_teach.exercises import check
from mcp_teach.exercises.answers import run_sync
from mcp_teach.lessons.l11_two_apis import LLMRecorder, recorded_client, stand_in_app, stand_in_client
from mcp_teach.llm.anthropic_format import to_anthropic_tools
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import ask_any
from mcp_teach.llm.openai_tools import to_openai_tools
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server

EXERCISES = ("11.1", "11.2", "11.3")


async def _calculator_tools() -> list[Any]:
    async with teaching_client(build_calculator_server()) as client:
        return await client.list_tools()


def defined() -> dict[str, Any]:
    """What the lesson has defined when its exercises start (a fresh SDK client for each run's event loop)."""
    return {
        "LLMError": LLMError,
        "MODEL_NAME": MODEL_NAME,
        "QUESTION": "multiply 3 by 4, then subtract 5",
        "ask_any": ask_any,
        "build_calculator_server": build_calculator_server,
        "mcp_tools": run_sync(_calculator_tools()),
        "messages_llm": recorded_client("anthropic", LLMRecorder()),
        "stand_in_app": stand_in_app,
        "stand_in_client": stand_in_client,
        "teaching_client": teaching_client,
        "to_anthropic_tools": to_anthropic_tools,
        "to_openai_tools": to_openai_tools,
    }


LESSON = SolvedLesson("11_two_llm_apis.ipynb", defined)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    assert LESSON.assert_answers_defined_nowhere_else() == list(EXERCISES)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_the_lesson_solution_passes(exercise_id: str, run, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(LESSON.run_solution, exercise_id)
    check(exercise_id, namespace)
    assert f"✔ Exercise {exercise_id} passed" in capsys.readouterr().out


# --- 11.1 ---------------------------------------------------------------------------------------------------------


def test_11_1_keeping_the_function_envelope_fails() -> None:
    failed_with("11.1", {"messages_tools": lambda tools: tools}, "no 'function' envelope")


def test_11_1_keeping_parameters_fails() -> None:
    def renamed_only(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(tool["function"]) for tool in tools]

    failed_with("11.1", {"messages_tools": renamed_only}, "parameters", "input_schema")


def test_11_1_not_a_function_fails() -> None:
    failed_with("11.1", {"messages_tools": []}, "a function")


# --- 11.2 ---------------------------------------------------------------------------------------------------------

QUESTION = {"role": "user", "content": "What is 6 times 7?"}
USE = {"type": "tool_use", "id": "toolu_1_0", "name": "calculator_multiply", "input": {"a": 6, "b": 7}}
REPLY = {"stop_reason": "end_turn", "content": [{"type": "text", "text": "6 × 7 = 42."}]}


def _by_hand(result_turn: dict[str, Any], reply: dict[str, Any] = REPLY) -> dict[str, Any]:
    return {"by_hand_messages": [QUESTION, {"role": "assistant", "content": [USE]}, result_turn], "by_hand": reply}


def test_11_2_a_correct_round_written_as_dicts_passes(capsys: pytest.CaptureFixture[str]) -> None:
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "42.0"}]}
    check("11.2", _by_hand(result))
    assert "✔ Exercise 11.2 passed" in capsys.readouterr().out


def test_11_2_a_tool_role_fails() -> None:
    failed_with("11.2", _by_hand({"role": "tool", "tool_call_id": "toolu_1_0", "content": "42.0"}), "user")


def test_11_2_a_wrong_tool_use_id_fails() -> None:
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1_0", "content": "42.0"}]}
    failed_with("11.2", _by_hand(result), "tool_use_id")


def test_11_2_a_reply_that_still_calls_a_tool_fails() -> None:
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "42.0"}]}
    failed_with("11.2", _by_hand(result, {"stop_reason": "tool_use", "content": [USE]}), "end_turn")


# --- 11.3 ---------------------------------------------------------------------------------------------------------

MESSAGE = "The LLM at http://stand-in.invalid is rate-limiting this key (HTTP 429). Wait a little and try again."


def test_11_3_an_overloaded_app_fails() -> None:
    app = stand_in_app(529, "overloaded_error", "Overloaded")
    failed_with("11.3", {"rate_limited_app": app, "rate_limit_message": MESSAGE}, "429")


def test_11_3_the_wrong_error_type_fails() -> None:
    app = stand_in_app(429, "overloaded_error", "slow down")
    failed_with("11.3", {"rate_limited_app": app, "rate_limit_message": MESSAGE}, "rate_limit_error")


def test_11_3_a_message_of_another_error_fails() -> None:
    app = stand_in_app(429, "rate_limit_error", "slow down")
    failed_with("11.3", {"rate_limited_app": app, "rate_limit_message": "overloaded"}, "rate-limiting")
