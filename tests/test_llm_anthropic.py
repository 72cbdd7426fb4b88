"""The tool loop over Anthropic's Messages API, through the real ``anthropic`` SDK.

Against the offline teaching model (in process, and ``mcp-teach model serve`` on loopback) the answers are the
OpenAI side's, word for word. Against a loopback stand-in (Starlette on 127.0.0.1) that answers 401 and 529, the
errors name the fix and never the key. Provider choice follows ``LLM_PROVIDER`` and the course's detection rules.
"""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from support import HANG_TIMEOUT, serve_in_thread

from mcp_teach.client import teaching_client
from mcp_teach.config import ConfigError, Settings, load_settings
from mcp_teach.llm.anthropic_format import to_anthropic_tools, to_chat_request, to_message
from mcp_teach.llm.endpoint import create_app
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import ChatCompletions, LoopResult, Messages, ask
from mcp_teach.llm.provider import (
    OFFLINE_ANTHROPIC_BASE_URL,
    anthropic_base_url,
    anthropic_client,
    anthropic_model_name,
    llm_client,
    model_name,
    openai_client,
)
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
KEY = "sk-ant-stand-in-secret-0123456789abcdef"
OFFLINE = Settings()
QUESTIONS = [
    "What is 1 + 2?",
    "multiply 3 by 4, then subtract 5",
    "What is 1 + 2 and what is 3 * 4?",
    "divide 1 by 0",
    "计算 (2 + 3) * 4",
    "hello",
    "今天天气怎么样？",
]


async def _ask(llm: Any, model: str, question: str, **options: Any) -> LoopResult:
    capture = CaptureTransport(build_calculator_server())
    async with llm, teaching_client(capture) as client:
        return await ask(question, client, llm, model=model, **options)


# --- The offline teaching model over the Messages API ------------------------------------------------------------


@pytest.mark.parametrize("question", QUESTIONS)
def test_both_apis_give_the_same_answer(run, question: str) -> None:
    over_messages = run(_ask, anthropic_client(OFFLINE), anthropic_model_name(OFFLINE), question)
    over_chat = run(_ask, openai_client(OFFLINE), model_name(OFFLINE), question)
    assert over_messages.answer == over_chat.answer
    assert over_messages.rounds == over_chat.rounds and not over_messages.stopped_early


@pytest.mark.parametrize(("make", "api"), [(openai_client, ChatCompletions), (anthropic_client, Messages)])
def test_ask_speaks_the_format_of_the_client_unless_told(run, make: Any, api: type) -> None:
    async def both(question: str) -> tuple[LoopResult, LoopResult]:
        async with teaching_client(CaptureTransport(build_calculator_server())) as client:
            chosen = await ask(question, client, make(OFFLINE), model=MODEL_NAME)
            told = await ask(question, client, make(OFFLINE), model=MODEL_NAME, api=api())
        return chosen, told

    chosen, told = run(both, "multiply 3 by 4, then subtract 5")
    assert (chosen.answer, chosen.messages, chosen.rounds) == (told.answer, told.messages, told.rounds)
    requests = [[e.payload for e in r.trace.of_kind("llm-request")] for r in (chosen, told)]
    assert requests[0] == requests[1]
    assert chosen.trace.of_kind("llm-request")[0].label == f"{api.name} round 1"


def test_a_chain_in_messages_format(run) -> None:
    result = run(_ask, anthropic_client(OFFLINE), MODEL_NAME, "multiply 3 by 4, then subtract 5")
    assert result.answer == "3 × 4 = 12, 12 − 5 = 7. The answer is 7."

    def use(call_id: str, name: str, a: int, b: int) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": call_id, "name": name, "input": {"a": a, "b": b}}],
        }

    def result_of(call_id: str, text: str) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": False}
        return {"role": "user", "content": [block]}

    assert result.messages == [
        {"role": "user", "content": "multiply 3 by 4, then subtract 5"},
        use("toolu_1_0", "calculator_multiply", 3, 4),
        result_of("toolu_1_0", "12.0"),
        use("toolu_2_0", "calculator_subtract", 12, 5),
        result_of("toolu_2_0", "7.0"),
        {"role": "assistant", "content": [{"type": "text", "text": "3 × 4 = 12, 12 − 5 = 7. The answer is 7."}]},
    ]
    requests = [event.payload for event in result.trace.of_kind("llm-request")]
    assert [event.label for event in result.trace.of_kind("llm-request")] == [f"messages round {n}" for n in (1, 2, 3)]
    first = requests[0]
    assert set(first) == {"model", "max_tokens", "system", "messages", "tools", "tool_choice"}
    assert first["system"].startswith("You are the mcp-teach assistant.") and first["tool_choice"] == {"type": "auto"}
    assert [tool["name"] for tool in first["tools"]][:2] == ["calculator_add", "calculator_subtract"]
    assert set(first["tools"][0]) == {"name", "description", "input_schema"}
    responses = [event.payload for event in result.trace.of_kind("llm-response")]
    assert [r["stop_reason"] for r in responses] == ["tool_use", "tool_use", "end_turn"]
    assert all(r["type"] == "message" and r["role"] == "assistant" and r["id"].startswith("msg_") for r in responses)
    labels = [event.label for event in result.trace.of_kind("llm-response")]
    assert labels[0] == 'tool_use: calculator_multiply({"a": 3, "b": 4})'
    assert labels[-1].startswith("answer: 3 × 4 = 12")


def test_a_failing_tool_goes_back_as_an_error_result(run) -> None:
    result = run(_ask, anthropic_client(OFFLINE), MODEL_NAME, "divide 1 by 0")
    [block] = result.messages[2]["content"]
    assert block["type"] == "tool_result" and block["is_error"] is True
    assert block["content"].startswith("Error: Cannot divide by zero")
    assert result.answer.startswith("I could not compute 1 ÷ 0")


def test_max_rounds_stops_before_running_the_last_calls(run) -> None:
    chain = "multiply 3 by 4, then subtract 5"
    result = run(functools.partial(_ask, max_rounds=1), anthropic_client(OFFLINE), MODEL_NAME, chain)
    assert result.stopped_early and result.rounds == 1
    assert "the model still asked for calculator_multiply" in result.answer
    assert result.messages[-1]["role"] == "assistant"  # no tool_result: the call was not run


def test_replies_are_deterministic(run) -> None:
    first = run(_ask, anthropic_client(OFFLINE), MODEL_NAME, "What is 1 + 2?")
    second = run(_ask, anthropic_client(OFFLINE), MODEL_NAME, "What is 1 + 2?")
    payloads = [[e.payload for e in r.trace.of_kind("llm-response")] for r in (first, second)]
    assert payloads[0] == payloads[1]


def test_translation_both_ways() -> None:
    body = {
        "model": MODEL_NAME,
        "max_tokens": 100,
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What is 1 + 2?"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1_0", "name": "add",
                                               "input": {"a": 1, "b": 2}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1_0",
                                          "content": [{"type": "text", "text": "3"}]}]},
        ],
        "tools": [{"name": "add", "description": "Add", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "any"},
    }  # fmt: skip
    request = to_chat_request(body)
    assert request["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 1 + 2?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "toolu_1_0", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]},
        {"role": "tool", "tool_call_id": "toolu_1_0", "content": "3"},
    ]  # fmt: skip
    assert request["tool_choice"] == "required"
    assert request["tools"] == [
        {"type": "function", "function": {"name": "add", "description": "Add", "parameters": {"type": "object"}}}
    ]
    completion = {
        "model": MODEL_NAME,
        "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_2_0", "type": "function", "function": {"name": "add", "arguments": '{"a": 3, "b": 1}'}}]}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2},
    }  # fmt: skip
    message = to_message(completion, body)
    assert message["content"] == [{"type": "tool_use", "id": "toolu_2_0", "name": "add", "input": {"a": 3, "b": 1}}]
    assert (message["stop_reason"], message["usage"]) == ("tool_use", {"input_tokens": 7, "output_tokens": 2})


def test_mcp_tools_become_anthropic_definitions() -> None:
    tool = {"name": "add", "title": "Adder", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}}
    [definition] = to_anthropic_tools([tool])
    assert definition == {
        "name": "add",
        "description": "Adder",
        "input_schema": {"type": "object", "properties": {"a": {"type": "number"}}},
    }
    with pytest.raises(ValueError, match="duplicated: add"):
        to_anthropic_tools([tool, tool])


def test_the_endpoint_rejects_requests_as_anthropic_does(run) -> None:
    async def attempt(overrides: dict[str, Any]) -> anthropic.APIStatusError:
        async with anthropic_client(OFFLINE) as llm:
            request = {"model": MODEL_NAME, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
            with pytest.raises(anthropic.APIStatusError) as caught:
                await llm.messages.create(**{**request, **overrides})
        return caught.value

    wrong_model = run(attempt, {"model": "claude-sonnet-5-5"})
    assert isinstance(wrong_model, anthropic.NotFoundError)
    assert wrong_model.body["error"]["type"] == "not_found_error" and "ANTHROPIC_MODEL" in str(wrong_model)
    system_role = run(attempt, {"messages": [{"role": "system", "content": "hi"}]})
    assert isinstance(system_role, anthropic.BadRequestError) and "system" in str(system_role)
    result_in_assistant_turn = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"}]},
    ]
    misplaced = run(attempt, {"messages": result_in_assistant_turn})
    assert isinstance(misplaced, anthropic.BadRequestError)
    assert "messages.1.content.0: a tool_result block belongs in a user turn" in str(misplaced)


# --- mcp-teach model serve: both APIs on one loopback server ---------------------------------------------------


@pytest.fixture(scope="module")
def served(cli_server) -> Iterator[str]:
    server = cli_server([MCP_TEACH, "model", "serve", "--port", "0", "--api-key", KEY])
    yield server.url
    code, _, stderr = server.stop(signal.SIGTERM)
    assert code == 0, stderr
    assert f"ANTHROPIC_BASE_URL={server.url.removesuffix('/v1')} ANTHROPIC_MODEL={MODEL_NAME}" in stderr
    assert KEY not in stderr


def test_model_serve_answers_both_apis(run, served: str) -> None:
    root = served.removesuffix("/v1")
    over_messages = Settings(anthropic_base_url=root, anthropic_api_key=KEY, anthropic_model=MODEL_NAME)
    over_chat = Settings(openai_base_url=served, openai_api_key=KEY, openai_model=MODEL_NAME)
    assert over_messages.llm_provider == "anthropic" and over_chat.llm_provider == "openai"
    for question in ("multiply 3 by 4, then subtract 5", "hello"):
        llm, model = llm_client(over_messages, max_retries=0)
        assert isinstance(llm, anthropic.AsyncAnthropic) and str(llm.base_url) == root
        a = run(_ask, llm, model, question)
        b = run(_ask, openai_client(over_chat, max_retries=0), model_name(over_chat), question)
        assert a.answer == b.answer
    wrong = Settings(
        anthropic_base_url=root, anthropic_api_key="sk-ant-wrong-key-0000000000", anthropic_model=MODEL_NAME
    )
    with pytest.raises(LLMError) as caught:
        run(_ask, anthropic_client(wrong, max_retries=0), MODEL_NAME, "hello")
    assert "HTTP 401" in str(caught.value) and "ANTHROPIC_API_KEY" in str(caught.value)


# --- A loopback stand-in for a real provider: 401, 529 ---------------------------------------------------------

FAILURES: dict[str, tuple[int, str, str]] = {
    "401": (401, "authentication_error", "invalid x-api-key {key}"),
    "529": (529, "overloaded_error", "Overloaded ({key})"),
    "404": (404, "not_found_error", "model: stand-in-model (key {key})"),
    "500": (500, "api_error", "Internal server error ({key})"),
}


class StandIn:
    """An Anthropic-compatible provider; ``url(scenario)`` is the base URL of one behaviour."""

    def __init__(self) -> None:
        #: What each scenario received: (the key sent, JSON body), in order.
        self.received: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        self.root = ""
        self.app = Starlette(routes=[Route("/{scenario}/v1/messages", self._messages, methods=["POST"])])

    def url(self, scenario: str) -> str:
        return f"{self.root}/{scenario}"

    async def _messages(self, request: Request) -> JSONResponse:
        scenario, body = request.path_params["scenario"], await request.json()
        # Anthropic's API takes ``x-api-key``; this SDK sends the key as ``Authorization: Bearer`` (both work there).
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        self.received[scenario].append((key, body))
        status, kind, message = FAILURES[scenario]
        error = {"type": "error", "error": {"type": kind, "message": message.replace("{key}", key)}}
        return JSONResponse(error, status_code=status)


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StandIn]:
    provider = StandIn()
    with serve_in_thread(provider.app) as root:
        provider.root = root
        yield provider


def _fails(run, settings: Settings) -> str:
    with pytest.raises(LLMError) as caught:
        run(_ask, anthropic_client(settings, max_retries=0), settings.anthropic_model, "What is 1 + 2?")
    message = str(caught.value)
    assert KEY not in message and "Traceback" not in message
    return message


def test_a_rejected_key_names_the_variable(run, stand_in: StandIn) -> None:
    settings = Settings(anthropic_base_url=stand_in.url("401"), anthropic_api_key=KEY, anthropic_model="claude-x")
    message = _fails(run, settings)
    assert message == (
        f"The LLM at {stand_in.url('401')} rejected the API key (HTTP 401). Check ANTHROPIC_API_KEY in .env."
    )
    [(sent_key, body)] = stand_in.received["401"]
    assert sent_key == KEY and body["model"] == "claude-x" and body["max_tokens"] > 0
    assert body["tools"][0]["input_schema"]["type"] == "object"


def test_overloaded_says_it_is_not_your_fault(run, stand_in: StandIn) -> None:
    settings = Settings(anthropic_base_url=stand_in.url("529"), anthropic_api_key=KEY, anthropic_model="claude-x")
    message = _fails(run, settings)
    assert message.startswith(f"The LLM at {stand_in.url('529')} is overloaded (HTTP 529)")
    assert "Wait a minute and try again" in message and "ANTHROPIC_MODEL" in message


@pytest.mark.parametrize(("scenario", "expected"), [("404", "Check ANTHROPIC_MODEL."), ("500", "HTTP 500")])
def test_other_errors_name_the_fix_without_the_key(run, stand_in: StandIn, scenario: str, expected: str) -> None:
    settings = Settings(anthropic_base_url=stand_in.url(scenario), anthropic_api_key=KEY, anthropic_model="claude-x")
    assert expected in _fails(run, settings)


def test_an_unreachable_server_names_the_base_url(run) -> None:
    settings = Settings(anthropic_base_url="http://127.0.0.1:9", anthropic_model="claude-x")
    message = _fails(run, settings)
    assert message.startswith("Cannot reach the LLM at http://127.0.0.1:9") and "ANTHROPIC_BASE_URL" in message


# --- Which provider: LLM_PROVIDER and the course's detection -------------------------------------------------


def test_a_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(LLMError) as caught:
        anthropic_client(Settings(provider_choice="anthropic"))
    assert str(caught.value).startswith(
        "LLM_PROVIDER is anthropic, at https://api.anthropic.com but ANTHROPIC_API_KEY is empty."
    )
    assert "ANTHROPIC_API_KEY=sk-ant-" in str(caught.value) and "LLM_PROVIDER=offline" in str(caught.value)
    with pytest.raises(LLMError, match=r"ANTHROPIC_BASE_URL is https://llm.example.com but ANTHROPIC_API_KEY is empty"):
        anthropic_client(Settings(anthropic_base_url="https://llm.example.com"))
    local = anthropic_client(Settings(anthropic_base_url="http://127.0.0.1:8001"))  # a local server needs no key
    assert str(local.base_url) == "http://127.0.0.1:8001"


@pytest.mark.parametrize(
    ("environ", "provider"),
    [
        ({}, "offline"),
        ({"LLM_PROVIDER": "Anthropic"}, "anthropic"),
        ({"LLM_PROVIDER": "offline", "OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": KEY}, "offline"),
        ({"LLM_PROVIDER": "openai", "ANTHROPIC_API_KEY": KEY}, "openai"),
        ({"ANTHROPIC_API_KEY": KEY}, "anthropic"),
        ({"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": "sk-openai"}, "anthropic"),
        ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8001"}, "anthropic"),
        ({"ANTHROPIC_API_KEY": "sk-deepseek-123", "OPENAI_BASE_URL": "https://api.deepseek.com/v1"}, "openai"),
        ({"ANTHROPIC_API_KEY": "sk-proxy-123"}, "anthropic"),
        ({"ANTHROPIC_API_KEY": "sk-proxy-123", "ANTHROPIC_BASE_URL": "https://proxy.example.com"}, "anthropic"),
        ({"OPENAI_API_KEY": "sk-openai"}, "openai"),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, "openai"),
    ],
)
def test_detection_rules(tmp_path, environ: dict[str, str], provider: str) -> None:
    settings = load_settings(env_file=tmp_path / "missing.env", environ=environ)
    assert settings.llm_provider == provider
    described = settings.describe_llm()
    for secret in (KEY, "sk-openai", "sk-deepseek-123", "sk-proxy-123", "sk-x"):
        assert secret not in described and secret not in repr(settings)


def test_a_key_in_the_wrong_variable_is_used_where_openai_base_url_points(tmp_path) -> None:
    settings = load_settings(
        env_file=tmp_path / "missing.env",
        environ={"ANTHROPIC_API_KEY": "sk-deepseek-123", "OPENAI_BASE_URL": "https://api.deepseek.com/v1"},
    )
    llm, _ = llm_client(settings)
    assert isinstance(llm, type(openai_client(OFFLINE))) and llm.api_key == "sk-deepseek-123"
    assert str(llm.base_url) == "https://api.deepseek.com/v1/"


def test_settings_from_env_file_and_bad_values(tmp_path) -> None:
    path = tmp_path / ".env"
    path.write_text(
        "ANTHROPIC_API_KEY="
        + KEY
        + "\nANTHROPIC_BASE_URL=https://api.anthropic.com/\nANTHROPIC_MODEL=claude-sonnet-5-5\n"
    )
    settings = load_settings(env_file=path, environ={})
    assert (settings.anthropic_base_url, settings.anthropic_model) == ("https://api.anthropic.com", "claude-sonnet-5-5")
    assert settings.describe_llm() == (
        "Anthropic Messages API at https://api.anthropic.com, model claude-sonnet-5-5, API key set (hidden)"
    )
    assert (anthropic_base_url(settings), anthropic_model_name(settings)) == (
        "https://api.anthropic.com",
        "claude-sonnet-5-5",
    )
    assert anthropic_base_url(OFFLINE) == OFFLINE_ANTHROPIC_BASE_URL and anthropic_model_name(OFFLINE) == MODEL_NAME
    with pytest.raises(ConfigError, match="LLM_PROVIDER='claude' is not valid: expected one of offline, openai"):
        load_settings(env_file=path, environ={"LLM_PROVIDER": "claude"})
    with pytest.raises(ConfigError, match=r"ANTHROPIC_BASE_URL='api.anthropic.com' is not valid"):
        load_settings(env_file=path, environ={"ANTHROPIC_BASE_URL": "api.anthropic.com"})


def test_the_offline_app_checks_the_anthropic_key(run) -> None:
    import httpx2

    async def post(headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        transport = httpx2.ASGITransport(app=create_app(KEY))
        async with httpx2.AsyncClient(transport=transport, base_url="http://t.invalid") as http:
            body = {"model": MODEL_NAME, "max_tokens": 5, "messages": [{"role": "user", "content": "hello"}]}
            response = await http.post("/v1/messages", json=body, headers=headers)
        return response.status_code, response.json()

    status, body = run(post, {"x-api-key": "wrong"})
    assert status == 401 and body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key. Check ANTHROPIC_API_KEY."},
    }
    status, body = run(post, {"x-api-key": KEY})
    assert status == 200 and body["content"][0]["text"].startswith("Hello!") and json.dumps(body).count(KEY) == 0


def test_the_openai_path_does_not_import_anthropic():
    """Lessons that speak only OpenAI's API do not pay the 1.1 s of importing the anthropic SDK."""
    script = "import sys, mcp_teach.llm.loop, mcp_teach.llm.provider; print('anthropic' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_TIMEOUT, check=True
    )
    assert result.stdout.split() == ["False"]
