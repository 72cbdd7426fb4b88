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
from mcp_teach.exercises.answers import CheckTimedOut, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import said, say
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
#: A tool with no description, as each API writes it: the Messages one has no "description" key either.
UNDESCRIBED = {
    "openai": {"type": "function", "function": {"name": "no_description", "parameters": {"type": "object"}}},
    "messages": {"name": "no_description", "input_schema": {"type": "object"}},
}
#: What the loop's error says of a 429, and what to check when it says 404 instead.
RATE_LIMITED = "is rate-limiting this key (HTTP 429)"
BASE_URL_HINT = "your client's base_url must end in /v1, so the SDK posts to /v1/chat/completions"
#: How long the check waits for the student's stand-in provider before it says it got no answer.
PROVIDER_SECONDS = 10.0


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
    given = [*to_openai_tools(mcp_tools), UNDESCRIBED["openai"]]
    found = c.runs(messages_tools, json.loads(json.dumps(given)),  # a copy: changing the input in place proves nothing
                   what="messages_tools(...) on the servers' tools and one without a description",
                   expected="a list of Messages tools",
                   hint='a tool may have no "description": give one only where the OpenAI one has it')  # fmt: skip
    expected = [*to_anthropic_tools(mcp_tools), UNDESCRIBED["messages"]]
    c.instance(found, list, "messages_tools(...)", hint="return a list, one definition per tool")
    c.equal(len(found), len(expected), "the number of definitions", hint="one Messages tool per OpenAI tool")
    for tool, want in zip(found, expected, strict=True):
        c.instance(tool, dict, "each definition", hint='{"name": ..., "description": ..., "input_schema": ...}')
        c.true("parameters" not in tool and "function" not in tool, f"the definition of {want['name']}",
               expected="no 'function' envelope and no 'parameters' key", found=sorted(tool),
               hint="Messages puts name, description and input_schema at the top of each tool")  # fmt: skip
        odd = sorted(set(tool) ^ set(want))  # a key missing or extra: say which
        c.equal(tool, want, f"the definition of {want['name']}",
                hint="one definition per OpenAI tool, in the same order" if tool.get("name") != want["name"] else
                f"the keys {odd} differ: a description only where the OpenAI one has it, parameters as input_schema"
                if odd else "name and description as they are; function.parameters becomes input_schema")  # fmt: skip
    say(f"{len(found)} tools (two servers' and one without a description): the same name, description and schema, "
        "only the envelope changed")  # fmt: skip


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
    asked = said(BY_HAND_QUESTION)  # in the lesson's language
    if question.get("content") == [{"type": "text", "text": asked}]:  # the same question, as one block
        question = {**question, "content": asked}
    c.equal(question, {"role": "user", "content": asked}, "by_hand_messages[0]",
            hint=f"the question as a user message: {asked!r}")  # fmt: skip
    c.equal(turn.get("role"), "assistant", "by_hand_messages[1]['role']", hint="the model's reply goes back as-is")
    uses = [b for b in turn.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
    c.equal(len(uses), 1, "tool_use blocks in by_hand_messages[1]", hint="the block the first reply held")
    c.equal((uses[0].get("name"), uses[0].get("input")), ("calculator_multiply", {"a": 6, "b": 7}),
            "the tool_use block (name, input)", hint="copy it from the first reply's content")  # fmt: skip
    c.equal(results.get("role"), "user", "by_hand_messages[2]['role']",
            hint="tool results travel in a user turn (Messages has no \"tool\" role)")  # fmt: skip
    content = results.get("content")
    c.true(isinstance(content, list), "by_hand_messages[2]['content']", expected="a list of blocks", found=content,
           hint='content is a list: [{"type": "tool_result", "tool_use_id": ..., "content": ...}]')  # fmt: skip
    blocks = [b for b in content if isinstance(b, dict)]
    c.true(bool(blocks) and blocks[0].get("type") == "tool_result", "by_hand_messages[2]['content'][0]",
           expected='a block of type "tool_result"', found=content[:1],
           hint='{"type": "tool_result", "tool_use_id": ..., "content": ...}')  # fmt: skip
    c.equal(blocks[0].get("tool_use_id"), uses[0].get("id"), "the tool_result's tool_use_id",
            hint='the key is "tool_use_id" (Chat Completions says tool_call_id): the tool_use block\'s id')  # fmt: skip
    mcp_text = run_sync(_tool_text(uses[0]["name"], uses[0]["input"]))
    c.equal(_text_of(blocks[0].get("content")), mcp_text, "the text of the tool_result's content",
            hint="the text of the MCP result, result.content[0].text: as a string or as a text block")  # fmt: skip
    c.true(not blocks[0].get("is_error"), "the tool_result's is_error", expected="absent or false: the call worked",
           found=blocks[0].get("is_error"), hint="is_error only when the MCP result had isError: true")  # fmt: skip
    reply = _dump(by_hand)
    c.instance(reply, dict, "by_hand", hint="the reply of messages.create (a Message)")
    c.equal(reply.get("stop_reason"), "end_turn", "by_hand.stop_reason", hint="the reply to the tool result")
    text = " ".join(b.get("text", "") for b in reply.get("content", []) if b.get("type") == "text")
    c.contains(
        text, mcp_text.removesuffix(".0"), "the text of by_hand", hint="the model answers from the tool's result"
    )
    resent = run_sync(_resend(messages))
    c.equal(resent.get("stop_reason"), "end_turn", "the offline model's reply to your messages",
            hint="send them again: the model must answer, not call a tool")  # fmt: skip
    say(f"tool_use {uses[0]['id']} answered by a tool_result in a user turn; the model said: {text}")


async def _tool_text(name: str, arguments: dict[str, Any]) -> str:
    """What the calculator really answers to the model's call: the text the tool_result must carry."""
    async with teaching_client(build_calculator_server()) as client:
        result = await client.call_tool(name, arguments)
    return result.content[0].text


def _text_of(content: Any) -> Any:
    """A tool_result's content as text: a string as it is, text blocks joined; anything else as it is."""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(b.get("text", "") for b in content)
    return content


def _in_time(coroutine: Any) -> Any:
    """Run the check's request to the student's app, or None if it did not answer in time."""
    try:
        return run_sync(coroutine, timeout=PROVIDER_SECONDS)
    except CheckTimedOut:
        return None


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
    answered = _in_time(_probe(rate_limited_app))
    c.true(answered is not None, "POST /v1/chat/completions to rate_limited_app",
           expected=f"an answer within {PROVIDER_SECONDS:g} s", found="none",
           hint="the endpoint must return a response (JSONResponse(...)), not wait")  # fmt: skip
    status, body = answered
    c.equal(status, 429, "the HTTP status of POST /v1/chat/completions",
            hint="the path the openai SDK posts to, and the status of a rate limit")  # fmt: skip
    c.instance(body, dict, "the response body", hint='return JSONResponse({"error": {...}}, status_code=429)')
    c.true("type" not in body, "the response body", expected='no outer "type": only an "error" object',
           found=body, hint='OpenAI\'s are {"error": {...}}; {"type": "error", ...} is Anthropic\'s shape')  # fmt: skip
    error = body.get("error")
    c.true(isinstance(error, dict) and isinstance(error.get("message"), str), "the response body",
           expected='OpenAI\'s error shape {"error": {"message": ..., ...}}', found=body,
           hint='{"error": {"message": ..., "type": ..., "code": ...}}')  # fmt: skip
    c.equal(error.get("code"), "rate_limit_exceeded", "error.code", hint="the code the task names")
    c.instance(rate_limit_message, str, "rate_limit_message", hint="str(error) of the LLMError you caught")
    whole = rate_limit_message.startswith("The LLM at http") and RATE_LIMITED in rate_limit_message
    hint = BASE_URL_HINT if "(HTTP 404)" in rate_limit_message else "ask through your app; keep str(error)"
    c.true(whole, "rate_limit_message", expected=f"the LLMError's text: The LLM at <url> {RATE_LIMITED}. ...",
           found=rate_limit_message, hint=hint)  # fmt: skip
    ours = _in_time(_through(rate_limited_app)) or "(no answer in time)"
    c.contains(ours, "(HTTP 429)", "what the loop says when the check asks through your app",
               hint="every POST /v1/chat/completions must get the 429")  # fmt: skip
    say(f"HTTP 429 rate_limit_exceeded -> {rate_limit_message.split(' (HTTP')[0]} (HTTP 429).")
