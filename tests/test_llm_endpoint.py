"""The teaching model's OpenAI-compatible endpoint over real HTTP: validation, API key, /v1/models, SDK types."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletion
from support import HANG_TIMEOUT, serve_in_thread

from mcp_teach.llm.endpoint import create_app
from mcp_teach.llm.teaching_model import MODEL_NAME

KEY = "sk-endpoint-test-0123456789abcdef"
USER = {"role": "user", "content": "What is 1 + 2?"}
ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "calculator_add",
        "description": "Add two numbers (a + b).",
        "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
    },
}


@pytest.fixture(scope="module")
def open_url() -> Iterator[str]:
    """``create_app()`` (any key accepted) served on loopback."""
    with serve_in_thread(create_app()) as url:
        yield url


@pytest.fixture(scope="module")
def keyed_url() -> Iterator[str]:
    """``create_app(api_key=KEY)`` served on loopback."""
    with serve_in_thread(create_app(api_key=KEY)) as url:
        yield url


@pytest.fixture
def http(open_url: str) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=open_url, timeout=HANG_TIMEOUT) as client:
        yield client


def sdk(url: str, key: str = "anything") -> openai.OpenAI:
    """The real SDK, validating responses strictly, without retries."""
    return openai.OpenAI(
        base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=HANG_TIMEOUT, _strict_response_validation=True
    )


def body(**fields: Any) -> dict[str, Any]:
    """A valid request body with ``fields`` replaced (``None`` removes a field)."""
    request = {"model": MODEL_NAME, "messages": [USER], "tools": [ADD_TOOL], **fields}
    return {key: value for key, value in request.items() if value is not None}


# --- Validation --------------------------------------------------------------------------------------------------

TOOL_REPLY = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "calculator_add", "arguments": '{"a": 1, "b": 2}'}}
    ],
}

REJECTED = {
    "array body": ([USER], 400, None, "must be a JSON object"),
    "missing model": (body(model=None), 400, "model", "'model' is required"),
    "empty model": (body(model=""), 400, "model", "'model' is required"),
    "model not a string": (body(model=7), 400, "model", "'model' is required"),
    "missing messages": (body(messages=None), 400, "messages", "non-empty array"),
    "empty messages": (body(messages=[]), 400, "messages", "non-empty array"),
    "messages not an array": (body(messages=USER), 400, "messages", "non-empty array"),
    "message not an object": (body(messages=["hi"]), 400, "messages[0]", "needs a 'role'"),
    "no role": (body(messages=[{"content": "hi"}]), 400, "messages[0]", "needs a 'role'"),
    "unknown role": (body(messages=[USER, {"role": "robot", "content": "x"}]), 400, "messages[1]", "needs a 'role'"),
    "role not a string": (body(messages=[{"role": ["user"], "content": "hi"}]), 400, "messages[0]", "needs a 'role'"),
    "tool message without tool_call_id": (
        body(messages=[USER, TOOL_REPLY, {"role": "tool", "content": "3.0"}]),
        400,
        "messages[2]",
        "no 'tool_call_id'",
    ),
    "tools not an array": (body(tools=ADD_TOOL), 400, "tools", "'tools' must be an array"),
    "tool not an object": (body(tools=["calculator_add"]), 400, "tools", "tools[0] must be"),
    "tool type not function": (body(tools=[{**ADD_TOOL, "type": "code"}]), 400, "tools", "tools[0] must be"),
    "tool without function": (body(tools=[{"type": "function"}]), 400, "tools", "tools[0] must be"),
    "function without name": (
        body(tools=[ADD_TOOL, {"type": "function", "function": {"description": "x"}}]),
        400,
        "tools",
        "tools[1] must be",
    ),
    "empty function name": (
        body(tools=[{"type": "function", "function": {"name": ""}}]),
        400,
        "tools",
        "tools[0] must be",
    ),
    "function name not a string": (
        body(tools=[{"type": "function", "function": {"name": ["calculator_add"]}}]),
        400,
        "tools",
        "tools[0] must be",
    ),
    "stream": (body(stream=True), 400, "stream", "does not stream"),
}


@pytest.mark.parametrize(("request_body", "status", "param", "fragment"), REJECTED.values(), ids=REJECTED.keys())
def test_bad_requests_get_openai_style_errors(
    http: httpx2.Client, request_body: Any, status: int, param: str | None, fragment: str
) -> None:
    response = http.post("/v1/chat/completions", json=request_body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert fragment in error["message"]


def test_a_body_that_is_not_json(http: httpx2.Client) -> None:
    response = http.post("/v1/chat/completions", content=b"not json", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "The request body is not valid JSON."


def test_an_unknown_model_is_404_with_the_fix(http: httpx2.Client, open_url: str) -> None:
    response = http.post("/v1/chat/completions", json=body(model="gpt-4o"))
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "model_not_found"
    assert "'gpt-4o'" in error["message"] and f"OPENAI_MODEL={MODEL_NAME}" in error["message"]
    assert "OPENAI_BASE_URL" in error["message"]
    with pytest.raises(openai.NotFoundError) as raised:
        sdk(open_url).chat.completions.create(model="gpt-4o", messages=[USER])
    assert raised.value.status_code == 404 and raised.value.code == "model_not_found"


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0]"),
        ({"stream": True}, "stream"),
    ],
    ids=["empty messages", "bad role", "stream"],
)
def test_the_sdk_raises_bad_request_for_rejected_bodies(open_url: str, fields: dict[str, Any], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        sdk(open_url).chat.completions.create(**body(**fields))
    assert (raised.value.status_code, raised.value.param) == (400, param)


# --- API key -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"authorization": "Bearer wrong-key"}, 401),
        ({"authorization": KEY}, 401),
        ({"authorization": f"Bearer {KEY}"}, 200),
    ],
    ids=["no key", "wrong key", "no Bearer", "right key"],
)
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/models"])
def test_an_api_key_is_required_when_set(keyed_url: str, path: str, headers: dict[str, str], status: int) -> None:
    with httpx2.Client(base_url=keyed_url, timeout=HANG_TIMEOUT) as client:
        if path == "/v1/models":
            response = client.get(path, headers=headers)
        else:
            response = client.post(path, json=body(), headers=headers)
    assert response.status_code == status
    if status == 401:
        error = response.json()["error"]
        assert error["code"] == "invalid_api_key" and "OPENAI_API_KEY" in error["message"]
        assert KEY not in response.text


def test_the_sdk_with_a_wrong_and_the_right_key(keyed_url: str) -> None:
    with pytest.raises(openai.AuthenticationError):
        sdk(keyed_url, "wrong-key").chat.completions.create(**body())
    completion = sdk(keyed_url, KEY).chat.completions.create(**body())
    assert completion.choices[0].finish_reason == "tool_calls"


# --- What comes back ---------------------------------------------------------------------------------------------


def test_models_lists_the_teaching_model(http: httpx2.Client, open_url: str) -> None:
    listing = http.get("/v1/models").json()
    assert listing["object"] == "list"
    assert [model["id"] for model in listing["data"]] == [MODEL_NAME]
    assert [model.id for model in sdk(open_url).models.list()] == [MODEL_NAME]


def test_a_tool_round_trip_validates_as_chat_completions(http: httpx2.Client, open_url: str) -> None:
    """Raw JSON and the strict SDK agree: first a tool call, then (with its result) the answer."""
    first = http.post("/v1/chat/completions", json=body())
    assert first.status_code == 200 and first.headers["content-type"] == "application/json"
    completion = ChatCompletion.model_validate(first.json(), strict=True)
    call = completion.choices[0].message.tool_calls[0]
    assert (call.function.name, call.function.arguments) == ("calculator_add", '{"a": 1, "b": 2}')
    assert completion.model == MODEL_NAME and completion.usage.total_tokens > 0

    messages = [USER, completion.choices[0].message.model_dump(exclude_none=True)]
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "3.0"})
    final = sdk(open_url).chat.completions.create(model=MODEL_NAME, messages=messages, tools=[ADD_TOOL])
    assert final.choices[0].finish_reason == "stop"
    assert final.choices[0].message.content == "1 + 2 = 3."
    assert final.choices[0].message.tool_calls is None


def test_unknown_paths_and_methods(http: httpx2.Client) -> None:
    assert http.get("/v1/chat/completions").status_code == 405
    assert http.post("/v1/completions", json=body()).status_code == 404
