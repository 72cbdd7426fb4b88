"""Which LLM the loop talks to, and what happens when a real HTTP provider misbehaves.

The provider is a small OpenAI-compatible stand-in (Starlette, served by uvicorn on 127.0.0.1): scripted models
that send bad tool calls, and error responses the way providers send them. The loop talks to it through the
real ``openai`` SDK, exactly as it would talk to OpenAI or Ollama.
"""

from __future__ import annotations

import json
import socket
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from support import serve_in_thread

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import LoopResult, ask
from mcp_teach.llm.provider import OFFLINE_BASE_URL, base_url, model_name, openai_client
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

KEY = "sk-stand-in-secret-0123456789abcdef"
STAND_IN_MODEL = "stand-in-model"

#: Scripted models: the tool call sent first; once a tool message came back they answer with its content.
BAD_CALLS = {
    "not-json": ("calculator_add", "not json"),
    "not-an-object": ("calculator_add", "[1, 2]"),
    "unknown-tool": ("calculator_modulo", '{"a": 7, "b": 2}'),
    "wrong-type": ("calculator_add", '{"a": "one", "b": 2}'),
}

#: Error responses: status and body (JSON, or plain text for a string). ``{key}`` becomes the key the request
#: carried, as some proxies echo it: a message that leaks the key fails the test.
FAILURES: dict[str, tuple[int, Any]] = {
    "401": (401, {"error": {"message": "Incorrect API key provided: {key}.", "type": "invalid_request_error",
                            "param": None, "code": "invalid_api_key"}}),
    "403": (403, {"error": {"message": "Key {key} may not use this model.", "type": "permission_error",
                            "param": None, "code": None}}),
    "404": (404, {"error": {"message": "The model `stand-in-model` does not exist (key {key}).",
                            "type": "invalid_request_error", "param": "model", "code": "model_not_found"}}),
    "400-tools": (400, {"error": {"message": "registry.ollama.ai/library/stand-in-model does not support tools "
                                  "(key {key})", "type": "api_error", "param": None, "code": None}}),
    "400-tools-string": (400, {"error": "stand-in-model does not support tools (key {key})"}),
    "400-tools-text": (400, "stand-in-model does not support tools (key {key})"),
    "400-other": (400, {"error": {"message": "Bad temperature for key {key}.", "type": "invalid_request_error",
                                  "param": "temperature", "code": None}}),
    "404-path": (404, "Not Found"),
    "429": (429, {"error": {"message": "Rate limit reached for {key}.", "type": "requests", "param": None,
                            "code": "rate_limit_exceeded"}}),
    "429-quota": (429, {"error": {"message": "You exceeded your current quota ({key}).", "type": "insufficient_quota",
                                  "param": None, "code": "insufficient_quota"}}),
    "200-error": (200, {"error": {"message": "Rate limit reached for {key}.", "code": "rate_limit_exceeded"}}),
    "500": (500, {"error": {"message": "The server had an error ({key}).", "type": "server_error", "param": None,
                            "code": None}}),
    "503": (503, {"error": {"message": "Overloaded ({key}).", "type": "server_error", "param": None, "code": None}}),
}  # fmt: skip


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "created": 0,
        "model": STAND_IN_MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, **message},
                "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class StandIn:
    """An OpenAI-compatible provider; ``url(scenario)`` is the base URL of one behaviour."""

    def __init__(self) -> None:
        #: What each scenario received: (Authorization header, JSON body), in order.
        self.received: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        self.root = ""
        self.app = Starlette(routes=[Route("/{scenario}/v1/chat/completions", self._chat, methods=["POST"])])

    def url(self, scenario: str) -> str:
        return f"{self.root}/{scenario}/v1"

    async def _chat(self, request: Request) -> JSONResponse:
        scenario, body = request.path_params["scenario"], await request.json()
        authorization = request.headers.get("authorization", "")
        self.received[scenario].append((authorization, body))
        if scenario in FAILURES:
            status, error = FAILURES[scenario]
            key = authorization.removeprefix("Bearer ")
            if isinstance(error, str):
                return PlainTextResponse(error.replace("{key}", key), status_code=status)
            return JSONResponse(json.loads(json.dumps(error).replace("{key}", key)), status_code=status)
        last = body["messages"][-1]
        if last["role"] == "tool":
            return JSONResponse(_completion({"content": f"The tool said: {last['content']}"}))
        if scenario in BAD_CALLS:
            name, arguments = BAD_CALLS[scenario]
            call = {"id": "call_bad", "type": "function", "function": {"name": name, "arguments": arguments}}
            return JSONResponse(_completion({"tool_calls": [call]}))
        return JSONResponse(_completion({"content": "Hello from the stand-in."}))


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StandIn]:
    provider = StandIn()
    with serve_in_thread(provider.app) as root:
        provider.root = root
        yield provider


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def ask_calculator(settings: Settings, question: str = "What is 1 + 2?") -> tuple[LoopResult, CaptureTransport]:
    """One question through the loop: in-memory calculator, the LLM ``settings`` choose, no SDK retries."""
    capture = CaptureTransport(build_calculator_server())
    async with openai_client(settings, max_retries=0) as llm, teaching_client(capture) as client:
        result = await ask(question, client, llm, model=model_name(settings))
    return result, capture


# --- Choosing the backend ----------------------------------------------------------------------------------------


def test_without_settings_the_offline_model_is_used_in_process() -> None:
    settings = Settings()
    assert (base_url(settings), model_name(settings)) == (OFFLINE_BASE_URL, MODEL_NAME)
    assert str(openai_client(settings).base_url) == OFFLINE_BASE_URL + "/"


def test_a_configured_provider_is_used() -> None:
    settings = Settings(openai_base_url="https://llm.example.com/v1", openai_api_key=KEY, openai_model="big-model")
    client = openai_client(settings)
    assert (str(client.base_url), client.api_key, model_name(settings)) == (
        "https://llm.example.com/v1/",
        KEY,
        "big-model",
    )
    key_only = Settings(openai_api_key=KEY, openai_model="gpt-4o-mini")
    assert base_url(key_only) == "https://api.openai.com/v1" and model_name(key_only) == "gpt-4o-mini"


@pytest.mark.parametrize(
    "url", ["https://llm.example.com/v1", "http://10.0.0.5:11434/v1", "http://127.0.0.1.example/v1"]
)
def test_a_remote_provider_without_a_key_is_refused_before_any_request(url: str) -> None:
    with pytest.raises(LLMError) as raised:
        openai_client(Settings(openai_base_url=url))
    assert url in str(raised.value) and "OPENAI_API_KEY" in str(raised.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:1/v1", "http://127.8.9.10:1/v1", "http://localhost:1/v1",
                                 "http://[::1]:1/v1"])  # fmt: skip
def test_a_loopback_provider_needs_no_key(url: str) -> None:
    assert str(openai_client(Settings(openai_base_url=url)).base_url) == url + "/"


def test_a_loopback_provider_without_a_key_answers(run, stand_in: StandIn) -> None:
    result, _ = run(ask_calculator, Settings(openai_base_url=stand_in.url("keyless"), openai_model=STAND_IN_MODEL))
    assert result.answer == "Hello from the stand-in."
    [(authorization, request)] = stand_in.received["keyless"]
    assert request["model"] == STAND_IN_MODEL and authorization.startswith("Bearer ")


def test_the_key_goes_to_the_provider_and_the_trace_shows_what_it_received(run, stand_in: StandIn) -> None:
    settings = Settings(openai_base_url=stand_in.url("keyed"), openai_model=STAND_IN_MODEL, openai_api_key=KEY)
    result, _ = run(ask_calculator, settings)
    [(authorization, request)] = stand_in.received["keyed"]
    assert authorization == f"Bearer {KEY}"
    assert [event.payload for event in result.trace.of_kind("llm-request")] == [request]
    assert KEY not in json.dumps([event.to_json() for event in result.trace])


# --- Provider errors ---------------------------------------------------------------------------------------------

FIXES = {
    "401": ["HTTP 401", "OPENAI_API_KEY"],
    "403": ["HTTP 403", "Check your account"],
    "404": ["HTTP 404", "OPENAI_MODEL", STAND_IN_MODEL],
    "400-tools": ["HTTP 400", "does not support tools", "function calling"],
    "400-tools-string": ["HTTP 400", "does not support tools", "function calling"],
    "400-tools-text": ["HTTP 400", "does not support tools", "function calling"],
    "400-other": ["HTTP 400", "Bad temperature"],
    "404-path": ["HTTP 404", "Nothing at", "OPENAI_BASE_URL", "/v1", "Not Found."],
    "429": ["HTTP 429", "try again"],
    "429-quota": ["HTTP 429, insufficient_quota", "Waiting will not help", "billing"],
    "200-error": ["answered HTTP 200, but not with a chat.completions reply", "Rate limit reached for"],
    "500": ["HTTP 500", "try again later"],
    "503": ["HTTP 503", "try again later"],
}


@pytest.mark.parametrize("scenario", FIXES)
def test_provider_errors_name_the_fix_and_never_the_key(run, stand_in: StandIn, scenario: str) -> None:
    settings = Settings(openai_base_url=stand_in.url(scenario), openai_model=STAND_IN_MODEL, openai_api_key=KEY)
    with pytest.raises(LLMError) as raised:
        run(ask_calculator, settings)
    message = str(raised.value)
    assert stand_in.received[scenario], "the request reached the provider"
    assert all(fragment in message for fragment in FIXES[scenario]), message
    assert stand_in.url(scenario) in message
    assert KEY not in message and KEY[:12] not in message
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_an_unreachable_provider_names_the_base_url(run) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(LLMError) as raised:
        run(ask_calculator, Settings(openai_base_url=url, openai_api_key=KEY))
    message = str(raised.value)
    assert "OPENAI_BASE_URL" in message and url in message and "Cannot reach" in message
    assert KEY not in message


# --- A model that sends bad tool calls ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "fed_back"),
    [
        ("not-json", "Error: the arguments for calculator_add are not valid JSON"),
        ("not-an-object", "Error: the arguments for calculator_add must be a JSON object, not list."),
        ("unknown-tool", "Error: the MCP server answered with JSON-RPC error -32602: Unknown tool: 'calculator_mod"),
        ("wrong-type", "Error: "),
    ],
)
def test_bad_tool_calls_go_back_to_the_model_as_errors(run, stand_in: StandIn, scenario: str, fed_back: str) -> None:
    settings = Settings(openai_base_url=stand_in.url(scenario), openai_model=STAND_IN_MODEL, openai_api_key=KEY)
    result, capture = run(ask_calculator, settings)
    assert (result.rounds, result.stopped_early) == (2, False)
    tool_message = result.messages[2]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_bad"
    assert tool_message["content"].startswith(fed_back)
    assert result.answer == f"The tool said: {tool_message['content']}"
    [_, (_, second)] = stand_in.received[scenario]
    assert second["messages"][-1] == tool_message  # the provider really got the error back

    calls = capture.capture.requests("tools/call")
    if scenario.startswith("not-"):
        assert calls == []  # never reached the server
    else:
        [call] = calls
        response = capture.capture.response_to(call).message
        assert call.message["params"]["name"] == BAD_CALLS[scenario][0]
        if scenario == "unknown-tool":  # a protocol error (server/tools, Error Handling), fed back as text
            assert response["error"]["code"] == -32602 and response["error"]["message"] in tool_message["content"]
        else:
            assert response["result"]["isError"] is True
            assert tool_message["content"] == "Error: " + response["result"]["content"][0]["text"]


# --- One error map for both SDKs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("status", "kind", "says"),
    [
        (401, "AuthenticationError", "Check {SDK}_API_KEY in .env."),
        (404, "NotFoundError", "Check {SDK}_BASE_URL (an OpenAI-compatible one usually ends in /v1), then"),
        (429, "RateLimitError", "is rate-limiting this key (HTTP 429)"),
        (503, "InternalServerError", "failed with HTTP 503. This is the provider's side"),
    ],
)
def test_one_error_map_explains_both_sdks(sdk: str, status: int, kind: str, says: str) -> None:
    import importlib

    from mcp_teach.llm.errors import explain

    module = importlib.import_module(sdk)
    response = httpx2.Response(status, request=httpx2.Request("POST", "http://llm.invalid/v1/x"))
    error = getattr(module, kind)(f"no {KEY}", response=response, body={"error": {"message": f"bad key {KEY}"}})
    message = str(explain(error, "http://llm.invalid/v1", "some-model", KEY))
    assert says.replace("{SDK}", sdk.upper()) in message and KEY not in message


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_404_that_names_the_model_is_an_unknown_model(sdk: str) -> None:
    import importlib

    from mcp_teach.llm.errors import explain

    module = importlib.import_module(sdk)
    response = httpx2.Response(404, request=httpx2.Request("POST", "http://llm.invalid/v1/x"))
    error = module.NotFoundError("no", response=response, body={"error": {"message": "model: some-model"}})
    message = str(explain(error, "http://llm.invalid/v1", "some-model", KEY))
    expected = "Model 'some-model' was not found at http://llm.invalid/v1 (HTTP 404): model: some-model. Check"
    assert message == f"{expected} {sdk.upper()}_MODEL."
