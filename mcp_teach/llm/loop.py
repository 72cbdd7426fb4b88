"""The LLM tool loop: the model decides, the MCP server executes (lesson 04 writes it, lesson 11 adds an API).

:func:`tool_loop` is the loop as the lessons write it: discovery (``tools/list`` -> tool definitions), decision
(the model answers with tool calls), execution (each call -> ``tools/call``), feeding back (each result -> a
message), until the model answers in text or ``max_rounds`` runs out. It knows no LLM API: a *format* object does
(:class:`ChatCompletions`, lesson 04; :class:`Messages`, lesson 11), the only code that knows one.

:func:`ask` is :func:`tool_loop` with a :class:`~mcp_teach.llm.trace.Trace` of the four actors (user, client,
LLM, server) for the lessons' diagrams, and with every SDK exception turned into an
:class:`~mcp_teach.llm.errors.LLMError` that names the fix. It records by wrapping the format object, so the loop
itself carries no recording code.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import openai
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from mcp_teach.llm.anthropic_format import to_anthropic_tools
from mcp_teach.llm.errors import explain, not_a_reply
from mcp_teach.llm.openai_tools import to_openai_tools
from mcp_teach.llm.trace import Actor, Trace, TraceEvent, short
from mcp_teach.wire.local_errors import local_error
from mcp_teach.wire.messages import Capture

if TYPE_CHECKING:  # not imported here: it takes 1.1 s; a client of it exists only once somebody imported it
    import anthropic

SYSTEM_PROMPT = (
    "You are the mcp-teach assistant. Use the provided tools for every calculation, one tool call per step, "
    "and answer in the user's language."
)


def system_text(mcp: Client, prompt: str = SYSTEM_PROMPT) -> str:
    """The application's prompt, then the server's ``instructions``, headed by the server's name."""
    instructions = (mcp.instructions or "").strip()
    if not instructions:
        return prompt
    name = mcp.server_info.name if mcp.server_info and mcp.server_info.name else "(unnamed)"
    return f"{prompt}\n\nInstructions from the MCP server {name}:\n{instructions}"


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the model, whatever the API: the id its result must name, the tool, the arguments."""

    id: str
    name: str
    arguments: str | dict[str, Any]  # Chat Completions: a JSON string; Messages: an object


class ChatCompletionsRequests:
    """OpenAI's Chat Completions API, the half that writes: tool definitions, one request, sending it."""

    name = "chat.completions"

    def tools(self, mcp_tools: list[Any]) -> list[dict[str, Any]]:
        return to_openai_tools(mcp_tools)  # lesson 02

    def request(self, model: str, system: str, messages: list[dict], tools: list[dict]) -> dict[str, Any]:
        system_message = {"role": "system", "content": system}
        return {"model": model, "messages": [system_message, *messages], "tools": tools, "tool_choice": "auto"}

    async def send(self, llm: openai.AsyncOpenAI, request: dict[str, Any]) -> dict[str, Any]:
        completion = await llm.chat.completions.create(**request)
        return completion.model_dump(mode="json", exclude_none=True)


class ChatCompletions(ChatCompletionsRequests):
    """OpenAI's Chat Completions API: the only code of the loop that knows this format."""

    def tool_calls(self, response: dict[str, Any]) -> list[ToolCall]:
        calls = response["choices"][0]["message"].get("tool_calls") or []
        return [ToolCall(call["id"], call["function"]["name"], call["function"]["arguments"]) for call in calls]

    def text(self, response: dict[str, Any]) -> str:
        return (response["choices"][0]["message"].get("content") or "").strip()

    def reply(self, response: dict[str, Any]) -> dict[str, Any]:
        """The model's message as the conversation keeps it: its text and its calls, sent back next round."""
        message = {"role": "assistant", "content": response["choices"][0]["message"].get("content")}
        calls = self.tool_calls(response)
        if calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls
            ]
        return message

    def results(self, calls: list[ToolCall], outcomes: list[tuple[str, bool]]) -> list[dict[str, Any]]:
        """One ``role: "tool"`` message per call; it carries text only, so a failure says so in words."""
        return [
            {"role": "tool", "tool_call_id": call.id, "content": text}
            for call, (text, failed) in zip(calls, outcomes, strict=True)
        ]


#: ``max_tokens`` of each Messages request (required by that API; the teaching model writes far less).
MAX_TOKENS = 1024


class Messages:
    """Anthropic's Messages API: the only code of the loop that knows this format."""

    name = "messages"

    def tools(self, mcp_tools: list[Any]) -> list[dict[str, Any]]:
        return to_anthropic_tools(mcp_tools)  # {name, description, input_schema}

    def request(self, model: str, system: str, messages: list[dict], tools: list[dict]) -> dict[str, Any]:
        return {
            "model": model,
            "max_tokens": MAX_TOKENS,
            "system": system,  # a top-level field, not a message
            "messages": list(messages),
            "tools": tools,
            "tool_choice": {"type": "auto"},
        }

    async def send(self, llm: anthropic.AsyncAnthropic, request: dict[str, Any]) -> dict[str, Any]:
        message = await llm.messages.create(**request)
        return message.model_dump(mode="json", exclude_none=True)

    def tool_calls(self, response: dict[str, Any]) -> list[ToolCall]:
        uses = [block for block in response["content"] if block["type"] == "tool_use"]
        return [ToolCall(block["id"], block["name"], block.get("input", {})) for block in uses]

    def text(self, response: dict[str, Any]) -> str:
        return "\n".join(block["text"] for block in response["content"] if block["type"] == "text").strip()

    def reply(self, response: dict[str, Any]) -> dict[str, Any]:
        """The model's turn as the conversation keeps it: its text and ``tool_use`` blocks."""
        text = [{"type": "text", "text": self.text(response)}] if self.text(response) else []
        uses = [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in self.tool_calls(response)
        ]
        return {"role": "assistant", "content": text + uses}

    def results(self, calls: list[ToolCall], outcomes: list[tuple[str, bool]]) -> list[dict[str, Any]]:
        """All results in ONE ``role: "user"`` turn, a ``tool_result`` block per call, with ``is_error``."""
        blocks = [
            {"type": "tool_result", "tool_use_id": call.id, "content": text, "is_error": failed}
            for call, (text, failed) in zip(calls, outcomes, strict=True)
        ]
        return [{"role": "user", "content": blocks}]


async def call_tool(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    """Run one tool call of the model as a ``tools/call``: (the text the model gets, whether it failed).

    It never raises: arguments that are no JSON object, a tool execution error (``isError``), a protocol error
    (a JSON-RPC error, e.g. an unknown tool) and a local error of the client (no answer in time, the connection
    closed) all become text the model can read. A local error is never passed off as the server's answer.
    """
    arguments = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError as error:
            return f"Error: the arguments for {call.name} are not valid JSON ({error}). Send one JSON object.", True
    if not isinstance(arguments, dict):
        return f"Error: the arguments for {call.name} must be a JSON object, not {type(arguments).__name__}.", True
    started = time.monotonic()
    try:
        result = await mcp.call_tool(call.name, arguments, raise_on_error=False)
    except MCPError as error:
        if meaning := local_error(error, waited=time.monotonic() - started):  # raised here: the server sent nothing
            return f"Error: {meaning} (a local error in the MCP client, not an answer from the server).", True
        return f"Error: the MCP server answered with JSON-RPC error {error.error.code}: {error.error.message}", True
    texts = [block.text for block in result.content if block.type == "text"]
    text = "\n".join(texts) if texts else json.dumps(result.structured_content)
    return (f"Error: {text}", True) if result.is_error else (text, False)


@dataclass(frozen=True)
class LoopResult:
    """What the loop returns."""

    answer: str
    #: The conversation with the model (the system prompt is sent with each request, not kept here).
    messages: list[dict[str, Any]]
    #: How many times the model was asked.
    rounds: int
    #: True if ``max_rounds`` ran out before the model gave a final answer.
    stopped_early: bool
    #: Every message between user, client, LLM and server; filled in by :func:`ask`.
    trace: Trace = field(default_factory=Trace)


async def tool_loop(
    question: str,
    mcp: Client,
    llm: Any,
    *,
    model: str,
    api: Any = None,
    max_rounds: int = 5,
    prompt: str = SYSTEM_PROMPT,
    execute: Callable[[Client, ToolCall], Awaitable[tuple[str, bool]]] = call_tool,
) -> LoopResult:
    """Answer ``question``: the model ``llm`` decides (in the format of ``api``), the MCP server executes."""
    api = api or ChatCompletions()
    tools = api.tools(await mcp.list_tools())  # discovery: MCP tools -> the API's tool definitions
    system = system_text(mcp, prompt)
    messages = [{"role": "user", "content": question}]
    for round_number in range(1, max_rounds + 1):
        response = await api.send(llm, api.request(model, system, messages, tools))  # decision
        messages.append(api.reply(response))
        calls = api.tool_calls(response)
        if not calls:  # the model answered in text: done
            return LoopResult(api.text(response), messages, round_number, stopped_early=False)
        if round_number == max_rounds:
            break  # no round left to show the model a result: do not run the calls at all
        outcomes = [await execute(mcp, call) for call in calls]  # execution: one tools/call each
        messages += api.results(calls, outcomes)  # feeding back
    wanted = ", ".join(call.name for call in calls)
    answer = f"Stopped after {max_rounds} round(s) (max_rounds): the model still asked for {wanted}, which was not run."
    return LoopResult(answer, messages, max_rounds, stopped_early=True)


# --- The trace: plumbing around the loop, for the lessons' diagrams ----------------------------------------------


def api_for(llm: openai.AsyncOpenAI | anthropic.AsyncAnthropic) -> ChatCompletions | Messages:
    """The format an SDK client speaks: :class:`Messages` for an ``anthropic`` client, else Chat Completions."""
    module = sys.modules.get("anthropic")
    return Messages() if module is not None and isinstance(llm, module.AsyncAnthropic) else ChatCompletions()


@dataclass
class _Traced:
    """A format object that notes each request and response in a trace, and explains the SDK's errors."""

    api: ChatCompletions | Messages
    note: Callable[[Actor, Actor, str, str, Any], None]
    rounds: int = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    async def send(self, llm: Any, request: dict[str, Any]) -> dict[str, Any]:
        self.rounds += 1
        self.note("client", "llm", "llm-request", f"{self.api.name} round {self.rounds}", request)
        try:
            response = await self.api.send(llm, request)
        except (openai.OpenAIError, *_anthropic_errors()) as error:
            raise explain(error, str(llm.base_url).rstrip("/"), request["model"], llm.api_key) from None
        if not response.get("choices" if isinstance(self.api, ChatCompletions) else "content"):
            # HTTP 200 with something else (an error body with the wrong status, a page): no SDK error to map
            raise not_a_reply(str(llm.base_url).rstrip("/"), self.api.name, response, llm.api_key) from None
        self.note("llm", "client", "llm-response", self._label(response), response)
        return response

    def _label(self, response: dict[str, Any]) -> str:
        if not (calls := self.api.tool_calls(response)):
            return f"answer: {short(self.api.text(response))}"
        word = "tool_calls" if isinstance(self.api, ChatCompletions) else "tool_use"
        return f"{word}: " + ", ".join(f"{call.name}({short(call.arguments, 40)})" for call in calls)


def _anthropic_errors() -> tuple[type[Exception], ...]:
    module = sys.modules.get("anthropic")
    return (module.AnthropicError,) if module is not None else ()


async def ask(
    question: str,
    mcp: Client,
    llm: openai.AsyncOpenAI | anthropic.AsyncAnthropic,
    *,
    model: str,
    api: ChatCompletions | Messages | None = None,
    max_rounds: int = 5,
    execute: Callable[[Client, ToolCall], Awaitable[tuple[str, bool]]] = call_tool,
    capture: Capture | None = None,
    since: int | None = None,
    system_prompt: str = SYSTEM_PROMPT,
    on_event: Callable[[TraceEvent], None] | None = None,
) -> LoopResult:
    """:func:`tool_loop`, with a trace of the four actors and an :class:`LLMError` for every SDK failure.

    ``api`` defaults to the format of ``llm`` (:func:`api_for`). The trace gets the MCP messages from ``capture``
    (default: the client's ``CaptureTransport``, if any) from index ``since`` on (default: from now on; ``0``
    includes the connection's opening). ``on_event`` gets each question, LLM and answer event as it happens; the
    MCP messages join the trace at the end.
    """
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, not {max_rounds}")
    capture = capture if capture is not None else getattr(mcp.transport, "capture", None)
    start = since if since is not None else len(capture) if capture is not None else 0
    trace = Trace()

    def note(sender: Actor, receiver: Actor, kind: str, label: str, payload: Any) -> None:
        event = TraceEvent(time.monotonic(), sender, receiver, kind, label, payload)
        trace.events.append(event)
        if on_event:
            on_event(event)

    note("user", "client", "question", question, {"content": question})
    traced = _Traced(api or api_for(llm), note)
    result = await tool_loop(
        question, mcp, llm, model=model, api=traced, max_rounds=max_rounds, prompt=system_prompt, execute=execute
    )
    note("client", "user", "answer", result.answer, {"content": result.answer})
    if capture is not None:
        trace.merge_capture(capture, start)
    return dataclasses.replace(result, trace=trace)
