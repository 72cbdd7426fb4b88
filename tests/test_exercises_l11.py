"""mcp_teach.exercises.l11: the solved lesson's own answers pass, wrong ones fail with expected / found / hint."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.exercises import check
from mcp_teach.exercises.answers import run_sync
from mcp_teach.llm.anthropic_format import to_anthropic_tools
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import ChatCompletions, ask
from mcp_teach.llm.provider import anthropic_client
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server

EXERCISES = ("11.1", "11.2", "11.3")


async def _calculator_tools() -> list[Any]:
    async with teaching_client(build_calculator_server()) as client:
        return await client.list_tools()


def defined() -> dict[str, Any]:
    """What the lesson has defined when its exercises start (a fresh SDK client for each run's event loop)."""
    return {
        "ChatCompletions": ChatCompletions,
        "JSONResponse": JSONResponse,
        "LLMError": LLMError,
        "MODEL_NAME": MODEL_NAME,
        "QUESTION": "multiply 3 by 4, then subtract 5",
        "Route": Route,
        "Starlette": Starlette,
        "ask": ask,
        "build_calculator_server": build_calculator_server,
        "httpx2": httpx2,
        "mcp_tools": run_sync(_calculator_tools()),
        "messages_llm": anthropic_client(Settings()),
        "one_line": str,
        "teaching_client": teaching_client,
        "to_anthropic_tools": to_anthropic_tools,
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


@pytest.mark.wrong_answer("11.1")
def test_11_1_keeping_the_function_envelope_fails() -> None:
    failed_with("11.1", {"messages_tools": lambda tools: tools}, "no 'function' envelope")


@pytest.mark.wrong_answer("11.1")
def test_11_1_keeping_parameters_fails() -> None:
    def renamed_only(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(tool["function"]) for tool in tools]

    failed_with("11.1", {"messages_tools": renamed_only}, "parameters", "input_schema")


@pytest.mark.wrong_answer("11.1")
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


@pytest.mark.wrong_answer("11.2")
def test_11_2_a_tool_role_fails() -> None:
    failed_with("11.2", _by_hand({"role": "tool", "tool_call_id": "toolu_1_0", "content": "42.0"}), "user")


@pytest.mark.wrong_answer("11.2")
def test_11_2_a_wrong_tool_use_id_fails() -> None:
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1_0", "content": "42.0"}]}
    failed_with("11.2", _by_hand(result), "tool_use_id")


@pytest.mark.wrong_answer("11.2")
def test_11_2_a_reply_that_still_calls_a_tool_fails() -> None:
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "42.0"}]}
    failed_with("11.2", _by_hand(result, {"stop_reason": "tool_use", "content": [USE]}), "end_turn")


# --- 11.3 ---------------------------------------------------------------------------------------------------------

MESSAGE = "The LLM at http://stand-in.invalid/v1 is rate-limiting this key (HTTP 429). Wait a little and try again."


def _app(status: int, body: dict[str, Any], path: str = "/v1/chat/completions") -> Starlette:
    async def answer(request: Any) -> JSONResponse:
        return JSONResponse(body, status_code=status)

    return Starlette(routes=[Route(path, answer, methods=["POST"])])


RATE_LIMITED = {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}


def test_11_3_a_correct_app_passes(capsys: pytest.CaptureFixture[str]) -> None:
    check("11.3", {"rate_limited_app": _app(429, RATE_LIMITED), "rate_limit_message": MESSAGE})
    assert "✔ Exercise 11.3 passed" in capsys.readouterr().out


@pytest.mark.wrong_answer("11.3")
def test_11_3_an_overloaded_app_fails() -> None:
    failed_with("11.3", {"rate_limited_app": _app(529, RATE_LIMITED), "rate_limit_message": MESSAGE}, "429")


@pytest.mark.wrong_answer("11.3")
def test_11_3_anthropics_error_shape_fails() -> None:
    anthropic_shape = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    app = _app(429, anthropic_shape)
    failed_with("11.3", {"rate_limited_app": app, "rate_limit_message": MESSAGE}, 'no outer "type"', "Anthropic's")


@pytest.mark.wrong_answer("11.3")
def test_11_3_the_messages_path_fails() -> None:
    app = _app(429, RATE_LIMITED, "/v1/messages")
    failed_with("11.3", {"rate_limited_app": app, "rate_limit_message": MESSAGE}, "POST /v1/chat/completions")


@pytest.mark.wrong_answer("11.3")
def test_11_3_a_message_of_another_error_fails() -> None:
    failed_with("11.3", {"rate_limited_app": _app(429, RATE_LIMITED), "rate_limit_message": "overloaded"}, "rate-lim")


@pytest.mark.wrong_answer("11.1")
def test_11_1_a_description_made_up_for_a_tool_without_one_fails() -> None:
    def always_described(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"name": t["function"]["name"], "description": t["function"].get("description"),
             "input_schema": t["function"]["parameters"]}
            for t in tools
        ]  # fmt: skip

    failed_with("11.1", {"messages_tools": always_described}, "the definition of no_description")


@pytest.mark.wrong_answer("11.1")
def test_11_1_a_key_error_on_a_tool_without_description_is_feedback() -> None:
    def indexed(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"description": t["function"]["description"]} for t in tools]

    failed_with("11.1", {"messages_tools": indexed}, "it raised KeyError", "only where the OpenAI one has it")


USED = {"role": "assistant", "content": [USE]}


@pytest.mark.wrong_answer("11.2")
@pytest.mark.parametrize(
    ("result_turn", "fragments"),
    [
        (  # the repr of the whole CallToolResult
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1_0",
                                          "content": "CallToolResult(content=[TextContent(text='42.0')])"}]},
            ("the text of the tool_result's content", "result.content[0].text"),
        ),
        (  # a success reported as a failure
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "42.0",
                                          "is_error": True}]},
            ("is_error", "absent or false"),
        ),
        ({"role": "user", "content": "42.0"}, ("a list of blocks", "'42.0'")),
        (
            {"role": "user", "content": [{"type": "tool_result", "tool_call_id": "toolu_1_0", "content": "42.0"}]},
            ('the key is "tool_use_id"',),
        ),
        ({"role": "assistant", "content": [{"type": "tool_result"}]}, ("tool results travel in a user turn",)),
    ],
    ids=["repr", "is-error", "string-content", "tool-call-id", "assistant-role"],
)  # fmt: skip
def test_11_2_wrong_result_turns_fail_with_the_hint_that_fits(result_turn, fragments) -> None:
    failed_with("11.2", _by_hand(result_turn), *fragments)


def test_11_2_the_question_as_one_text_block_passes(capsys: pytest.CaptureFixture[str]) -> None:
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1_0",
                                           "content": [{"type": "text", "text": "42.0"}]}]}  # fmt: skip
    answers = _by_hand(result)
    answers["by_hand_messages"][0] = {"role": "user", "content": [{"type": "text", "text": "What is 6 times 7?"}]}
    check("11.2", answers)
    assert "✔ Exercise 11.2 passed" in capsys.readouterr().out


@pytest.mark.wrong_answer("11.3")
def test_11_3_an_app_that_never_answers_fails_in_time(monkeypatch) -> None:
    import asyncio

    from mcp_teach.exercises import l11

    async def forever(request: Any) -> JSONResponse:
        await asyncio.sleep(3600)
        return JSONResponse({})

    monkeypatch.setattr(l11, "PROVIDER_SECONDS", 0.5)
    app = Starlette(routes=[Route("/v1/chat/completions", forever, methods=["POST"])])
    failed_with("11.3", {"rate_limited_app": app, "rate_limit_message": MESSAGE}, "an answer within 0.5 s")


@pytest.mark.wrong_answer("11.3")
def test_11_3_a_typed_in_message_fails() -> None:
    typed = "is rate-limiting this key (HTTP 429)"
    failed_with("11.3", {"rate_limited_app": _app(429, RATE_LIMITED), "rate_limit_message": typed}, "The LLM at <url>")


@pytest.mark.wrong_answer("11.3")
def test_11_3_a_message_about_a_404_points_at_the_base_url() -> None:
    wrong = "Nothing at http://stand-in.invalid answers this API (HTTP 404): Not Found. Check OPENAI_BASE_URL"
    failed_with("11.3", {"rate_limited_app": _app(429, RATE_LIMITED), "rate_limit_message": wrong}, "end in /v1")


def hint_of(message: str) -> str:
    """The hint of a failed check's feedback: the part that must name the mistake and never hold the answer."""
    return message.split("Hint:", 1)[1]


def _converted(function: dict[str, Any]) -> dict[str, Any]:
    """One Messages tool made as the task says."""
    described = {"description": function["description"]} if "description" in function else {}
    return {"name": function["name"], **described, "input_schema": function["parameters"]}


def _renamed(function: dict[str, Any]) -> dict[str, Any]:
    """MCP's spelling of the schema's key."""
    tool = _converted(function)
    tool["inputSchema"] = tool.pop("input_schema")
    return tool


def _empty_description(function: dict[str, Any]) -> dict[str, Any]:
    return {**_converted(function), "description": function.get("description", "")}


def _each(convert: Any) -> Any:
    return lambda tools: [convert(tool["function"]) for tool in tools]


@pytest.mark.wrong_answer("11.1")
@pytest.mark.parametrize(
    ("messages_tools", "fragments"),
    [
        (_each(_renamed), ("the definition of calculator_add", "['inputSchema', 'input_schema'] differ")),
        (lambda tools: [_converted(tools[0]["function"])], ("the number of definitions", "found 1", "one Messages")),
        (_each(lambda f: {"type": "function", **_converted(f)}), ("definition of calculator_add", "['type'] differ")),
        (
            lambda tools: sorted(_each(_converted)(tools), key=lambda tool: tool["name"]),
            ("the definition of calculator_subtract", "in the same order"),
        ),
        (
            _each(_empty_description),
            ("the definition of no_description", "['description'] differ", "only where the OpenAI one has it"),
        ),
    ],
    ids=["inputSchema-spelling", "only-the-first-tool", "type-function-kept", "sorted-by-name", "empty-description"],
)  # fmt: skip
def test_11_1_wrong_conversions_fail_with_the_hint_that_fits(messages_tools: Any, fragments: tuple[str, ...]) -> None:
    failed_with("11.1", {"messages_tools": messages_tools}, *fragments)


RESULT = {"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "42.0"}


@pytest.mark.wrong_answer("11.2")
@pytest.mark.parametrize(
    ("answers", "fragments"),
    [
        (_by_hand({"role": "user", "content": [{**RESULT, "content": "42"}]}), ("found '42'", "content[0].text")),
        (_by_hand({"role": "user", "content": [{**RESULT, "content": 42.0}]}), ("found 42.0", "as a string or")),
        (
            {"by_hand_messages": [USED, {"role": "user", "content": [RESULT]}], "by_hand": REPLY},
            ("len(by_hand_messages)", "found 2", "the question, the model's turn"),
        ),
        (
            {"by_hand_messages": [QUESTION, {"role": "assistant", "content": [{**USE, "input": '{"a": 6, "b": 7}'}]},
                                  {"role": "user", "content": [RESULT]}], "by_hand": REPLY},
            ("the tool_use block (name, input)", "copy it from the first reply"),
        ),
        (_by_hand({"role": "user", "content": [RESULT]}, "6 × 7 = 42."), ("by_hand: expected a dict", "messages.")),
    ],
    ids=["the-number-typed-in", "a-float-not-text", "no-question", "input-as-json-text", "the-reply-as-text"],
)  # fmt: skip
def test_11_2_wrong_rounds_fail_with_the_hint_that_fits(answers: dict[str, Any], fragments: tuple[str, ...]) -> None:
    message = failed_with("11.2", answers, *fragments)
    assert "42.0" not in hint_of(message)


SECTION_6 = "The LLM at http://stand-in.invalid/v1 is overloaded (HTTP 529): the provider is busy, not only yours."


@pytest.mark.wrong_answer("11.3")
@pytest.mark.parametrize(
    ("answers", "fragments"),
    [
        (
            {"rate_limited_app": _app(429, {"error": {**RATE_LIMITED["error"], "code": "rate_limit_error"}}),
             "rate_limit_message": MESSAGE},
            ("error.code", "found 'rate_limit_error'", "the code the task names"),
        ),
        (
            {"rate_limited_app": _app(429, RATE_LIMITED, "/chat/completions"), "rate_limit_message": MESSAGE},
            ("found 404", "the path the openai SDK posts to"),
        ),
        (
            {"rate_limited_app": _app(429, RATE_LIMITED), "rate_limit_message": SECTION_6},
            ("(HTTP 529)", "ask through your app"),
        ),
        (
            {"rate_limited_app": _app(429, RATE_LIMITED), "rate_limit_message": f"LLMError({MESSAGE!r})"},
            ("found \"LLMError(", "keep str(error)"),
        ),
        (
            {"rate_limited_app": _app(429, "Too many requests"), "rate_limit_message": MESSAGE},
            ("the response body: expected a dict", "JSONResponse({\"error\""),
        ),
    ],
    ids=["anthropics-code", "no-v1-in-the-path", "section-6s-529-message", "the-repr", "a-text-body"],
)  # fmt: skip
def test_11_3_wrong_stand_ins_fail_with_the_hint_that_fits(answers: dict[str, Any], fragments: tuple[str, ...]) -> None:
    message = failed_with("11.3", answers, *fragments)
    assert "rate-limiting this key" not in hint_of(message) and "rate_limit_exceeded" not in hint_of(message)
