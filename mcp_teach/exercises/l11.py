"""Lesson 11's exercises (one agent over two LLM APIs): what each one expects, for ``check("11.k")``.

- 11.1: ``messages_tools(openai_tools)``, OpenAI tool definitions turned into Messages ones; tried on the
  calculator's and the knowledge server's tools (listed for real) against the package's ``to_anthropic_tools``;
- 11.2: ``by_hand_messages`` and ``by_hand``, one Messages round written by hand (the question, the model's
  ``tool_use`` turn, the ``tool_result`` in a ``user`` turn) and the reply to it; the check sends the same
  messages to the offline teaching model itself;
- 11.3: ``rate_limited_app`` and ``rate_limit_message``, a stand-in Chat Completions provider that answers HTTP
  429 with OpenAI's error body, and what the loop said about it; the check asks through the app itself.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.llm.anthropic_format import to_anthropic_tools
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import ask
from mcp_teach.llm.openai_tools import to_openai_tools
from mcp_teach.llm.provider import anthropic_client
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.servers.knowledge import build_knowledge_server

#: The question of 11.2.
BY_HAND_QUESTION = "What is 6 times 7?"


async def _mcp_tools() -> list[Any]:
    tools = []
    for server in (build_calculator_server(), build_knowledge_server()):
        async with teaching_client(server) as client:
            tools += await client.list_tools()
    return tools


@exercise("11.1", answers=("messages_tools",))
def check_messages_tools(c: Checker, messages_tools: Any) -> None:
    c.function(messages_tools, "messages_tools", hint="def messages_tools(openai_tools: list[dict]) -> list[dict]: ...")
    mcp_tools = run_sync(_mcp_tools())
    given = to_openai_tools(mcp_tools)
    found = messages_tools(json.loads(json.dumps(given)))  # a copy: changing the input in place proves nothing
    expected = to_anthropic_tools(mcp_tools)
    c.instance(found, list, "messages_tools(...)", hint="return a list, one definition per tool")
    c.equal(len(found), len(expected), "the number of definitions", hint="one Messages tool per OpenAI tool")
    for tool, want in zip(found, expected, strict=True):
        c.instance(tool, dict, "each definition", hint='{"name": ..., "description": ..., "input_schema": ...}')
        c.true("parameters" not in tool and "function" not in tool, f"the definition of {want['name']}",
               expected="no 'function' envelope and no 'parameters' key", found=sorted(tool),
               hint="Messages puts name, description and input_schema at the top of each tool")  # fmt: skip
        c.equal(tool, want, f"the definition of {want['name']}",
                hint="name and description as they are; function.parameters becomes input_schema")  # fmt: skip
    print(f"{len(found)} tools from two servers: the same name, description and schema, only the envelope changed")


def _dump(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", exclude_none=True) if dump else value


async def _resend(messages: list[Any]) -> dict[str, Any]:
    async with teaching_client(build_calculator_server()) as client:
        tools = to_anthropic_tools(await client.list_tools())
    async with anthropic_client(Settings()) as llm:
        reply = await llm.messages.create(model=MODEL_NAME, max_tokens=256, tools=tools, messages=messages)
    return _dump(reply)


@exercise("11.2", answers=("by_hand_messages", "by_hand"))
def check_by_hand(c: Checker, by_hand_messages: Any, by_hand: Any) -> None:
    messages = json.loads(json.dumps(_dump(by_hand_messages), default=_dump))
    c.instance(messages, list, "by_hand_messages", hint="the list of messages of the second request")
    c.equal(len(messages), 3, "len(by_hand_messages)", hint="the question, the model's turn, your result turn")
    question, turn, results = messages
    c.equal(question, {"role": "user", "content": BY_HAND_QUESTION}, "by_hand_messages[0]",
            hint=f"the question as a user message: {BY_HAND_QUESTION!r}")  # fmt: skip
    c.equal(turn.get("role"), "assistant", "by_hand_messages[1]['role']", hint="the model's reply goes back as-is")
    uses = [b for b in turn.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
    c.equal(len(uses), 1, "tool_use blocks in by_hand_messages[1]", hint="the block the first reply held")
    c.equal((uses[0].get("name"), uses[0].get("input")), ("calculator_multiply", {"a": 6, "b": 7}),
            "the tool_use block (name, input)", hint="copy it from the first reply's content")  # fmt: skip
    c.equal(results.get("role"), "user", "by_hand_messages[2]['role']",
            hint='Messages has no "tool" role: tool results travel in a user message')  # fmt: skip
    blocks = [b for b in results.get("content") or [] if isinstance(b, dict)]
    c.true(bool(blocks) and blocks[0].get("type") == "tool_result", "by_hand_messages[2]['content'][0]",
           expected='a block of type "tool_result"', found=blocks[:1],
           hint='{"type": "tool_result", "tool_use_id": ..., "content": ...}')  # fmt: skip
    c.equal(blocks[0].get("tool_use_id"), uses[0].get("id"), "the tool_result's tool_use_id",
            hint="the id of the tool_use block it answers")  # fmt: skip
    reply = _dump(by_hand)
    c.instance(reply, dict, "by_hand", hint="the reply of messages.create (a Message)")
    c.equal(reply.get("stop_reason"), "end_turn", "by_hand.stop_reason", hint="the reply to the tool result")
    text = " ".join(b.get("text", "") for b in reply.get("content", []) if b.get("type") == "text")
    c.contains(text, "42", "the text of by_hand", hint="the model answers from the tool's result")
    resent = run_sync(_resend(messages))
    c.equal(resent.get("stop_reason"), "end_turn", "the offline model's reply to your messages",
            hint="send them again: the model must answer, not call a tool")  # fmt: skip
    print(f"tool_use {uses[0]['id']} answered by a tool_result in a user turn; the model said: {text}")


async def _probe(app: Any) -> tuple[int, Any]:
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://stand-in.invalid") as http:
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
        response = await http.post("/v1/chat/completions", json=body)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text


async def _through(app: Any) -> str:
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app))
    llm = openai.AsyncOpenAI(base_url="http://stand-in.invalid/v1", api_key="x", http_client=http, max_retries=0)
    async with teaching_client(build_calculator_server()) as client:
        try:
            await ask("What is 1 + 2?", client, llm, model="gpt-4o-mini")
        except LLMError as error:
            return str(error)
    return "(no error: the loop got an answer)"


@exercise("11.3", answers=("rate_limited_app", "rate_limit_message"))
def check_rate_limited(c: Checker, rate_limited_app: Any, rate_limit_message: Any) -> None:
    c.function(
        rate_limited_app,
        "rate_limited_app",
        expected="an ASGI app (a Starlette app)",
        hint="Starlette(routes=[Route(path, endpoint, methods=[...])])",
    )
    status, body = run_sync(_probe(rate_limited_app))
    c.equal(status, 429, "the HTTP status of POST /v1/chat/completions",
            hint="the path the openai SDK posts to, and the status of a rate limit")  # fmt: skip
    error = body.get("error") if isinstance(body, dict) else None
    c.true(isinstance(error, dict) and isinstance(error.get("message"), str), "the response body",
           expected='OpenAI\'s error shape {"error": {"message": ..., ...}}', found=body,
           hint="OpenAI's errors have no outer 'type': only an 'error' object")  # fmt: skip
    c.equal(error.get("code"), "rate_limit_exceeded", "error.code", hint="the code the task names")
    c.instance(rate_limit_message, str, "rate_limit_message", hint="str(error) of the LLMError you caught")
    c.contains(rate_limit_message, "is rate-limiting this key (HTTP 429)", "rate_limit_message",
               hint="ask through your app with ask(...) and keep the LLMError's text")  # fmt: skip
    ours = run_sync(_through(rate_limited_app))
    c.contains(ours, "(HTTP 429)", "what the loop says when the check asks through your app",
               hint="every POST /v1/chat/completions must get the 429")  # fmt: skip
    print(f"HTTP 429 rate_limit_exceeded -> {rate_limit_message.split(' (HTTP')[0]} (HTTP 429).")
