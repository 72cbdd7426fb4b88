"""The LLM tool loop: where function calling meets MCP.

Five phases, as in lesson 04: (1) the client is connected (``initialize``
handshake or ``server/discover``), (2) **discovery**: ``tools/list`` becomes
OpenAI tool definitions, (3) **decision**: the model answers with
``tool_calls``, (4) **execution**: each call becomes an MCP ``tools/call``,
(5) **feeding back**: each result goes back as a ``role: "tool"`` message,
until the model answers in text.

As hosts do, the loop puts the server's ``instructions`` into the system
message (2025-11-25 ``InitializeResult.instructions``: "this information MAY be
added to the system prompt"; 2026-07-28 ``DiscoverResult.instructions``, server/discover),
and every error of a tool call reaches the model as text: tool execution
errors (``isError: true``, which clients SHOULD give the model) and protocol
errors such as an unknown tool (JSON-RPC ``-32602``, which clients MAY give it;
2025-11-25 and 2026-07-28 server/tools, Error Handling).

:func:`ask` speaks chat completions. :func:`ask_any` is the same loop for either API
(lesson 11), and does not care which one the model speaks: given an
``openai.AsyncOpenAI`` it sends chat completions (``tool_calls``, results as
``role: "tool"`` messages); given an ``anthropic.AsyncAnthropic`` it sends
Anthropic Messages (the system message as ``system``, ``tool_use`` blocks,
results as ``tool_result`` blocks in a ``role: "user"`` message). Only
:class:`OpenAIChat` and :class:`AnthropicMessages` know the formats.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import openai
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from mcp_teach.llm.anthropic_format import to_anthropic_tools
from mcp_teach.llm.openai_tools import to_openai_tools
from mcp_teach.llm.provider import explain_anthropic_error, explain_llm_error
from mcp_teach.llm.trace import Actor, Trace, TraceEvent, llm_response_label
from mcp_teach.wire.messages import Capture

if TYPE_CHECKING:  # not imported here: it takes 1.1 s; a client of it exists only once somebody imported it
    import anthropic

SYSTEM_PROMPT = (
    "You are the mcp-teach assistant. Use the provided tools for every calculation, one tool call per step, "
    "and answer in the user's language."
)
#: Put before the server's ``instructions`` in the system message: whose words they are.
INSTRUCTIONS_HEADING = "Instructions from the MCP server {name}:"


@dataclass(frozen=True)
class LoopResult:
    """What :func:`ask` returns."""

    answer: str
    trace: Trace
    #: The conversation with the model, its last reply included.
    messages: list[dict[str, Any]]
    #: How many times the model was asked.
    rounds: int
    #: True if ``max_rounds`` ran out before the model gave a final answer.
    stopped_early: bool


def system_message(mcp: Client, system_prompt: str = SYSTEM_PROMPT) -> dict[str, str]:
    """The first message of the conversation: the application's prompt, then the server's ``instructions``.

    fastmcp's ``Client.instructions`` holds them for either era: from the
    ``initialize`` result (2025-11-25; also ``client.initialize_result.instructions``)
    or from the ``server/discover`` result (2026-07-28, where ``initialize_result``
    is ``None``). A server without instructions adds nothing. The heading names
    the server (its self-reported ``serverInfo.name``) so the model knows whose
    guidance it reads; a host with several servers adds one such part per server.
    """
    instructions = (mcp.instructions or "").strip()
    if not instructions:
        return {"role": "system", "content": system_prompt}
    name = mcp.server_info.name if mcp.server_info is not None and mcp.server_info.name else "(unnamed)"
    heading = INSTRUCTIONS_HEADING.format(name=name)
    return {"role": "system", "content": f"{system_prompt}\n\n{heading}\n{instructions}"}


def _tool_text(result: Any) -> str:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return "\n".join(texts) if texts else json.dumps(result.structured_content)


async def execute_tool_call(mcp: Client, name: str, raw_arguments: str) -> str:
    """Run one tool call of the model through MCP; every failure becomes text the model can read."""
    try:
        arguments = json.loads(raw_arguments or "{}")
    except ValueError as error:
        return f"Error: the arguments for {name} are not valid JSON ({error}). Send one JSON object."
    if not isinstance(arguments, dict):
        return f"Error: the arguments for {name} must be a JSON object, not {type(arguments).__name__}."
    try:
        result = await mcp.call_tool(name, arguments, raise_on_error=False)
    except MCPError as error:  # a protocol error, e.g. an unknown tool: a JSON-RPC error instead of a result
        return f"Error: the MCP server answered with JSON-RPC error {error.error.code}: {error.error.message}"
    text = _tool_text(result)
    return f"Error: {text}" if result.is_error else text


async def run_tool_call(mcp: Client, name: str, arguments: str | Any) -> tuple[str, bool]:
    """Like :func:`execute_tool_call`, and whether it failed; ``arguments`` is a JSON string (OpenAI's
    ``arguments``) or already an object (Anthropic's ``input``)."""
    if isinstance(arguments, str) or arguments is None:
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError as error:
            return f"Error: the arguments for {name} are not valid JSON ({error}). Send one JSON object.", True
    if not isinstance(arguments, dict):
        return f"Error: the arguments for {name} must be a JSON object, not {type(arguments).__name__}.", True
    try:
        result = await mcp.call_tool(name, arguments, raise_on_error=False)
    except MCPError as error:  # a protocol error, e.g. an unknown tool: a JSON-RPC error instead of a result
        return f"Error: the MCP server answered with JSON-RPC error {error.error.code}: {error.error.message}", True
    text = _tool_text(result)
    return (f"Error: {text}", True) if result.is_error else (text, False)


def _assistant_message(message: dict[str, Any]) -> dict[str, Any]:
    kept = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        kept["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {k: c["function"][k] for k in ("name", "arguments")}}
            for c in message["tool_calls"]
        ]
    return kept


@dataclass
class _Recorder:
    """The trace of one question: events noted as they happen, the MCP messages merged from the capture at the end."""

    capture: Capture | None
    start: int
    on_event: Callable[[TraceEvent], None] | None
    trace: Trace = field(default_factory=Trace)

    def note(self, sender: Actor, receiver: Actor, kind: str, label: str, payload: Any) -> None:
        event = TraceEvent(time.monotonic(), sender, receiver, kind, label, payload)
        self.trace.add(event)
        if self.on_event:
            self.on_event(event)

    def finish(self, messages: list[dict[str, Any]], answer: str, rounds: int, *, stopped_early: bool) -> LoopResult:
        self.note("client", "user", "answer", answer, {"content": answer})
        if self.capture is not None:
            self.trace.merge_capture(self.capture, self.start)
        return LoopResult(answer, self.trace, messages, rounds, stopped_early)


async def _complete(llm: openai.AsyncOpenAI, request: dict[str, Any], round_number: int, record: _Recorder) -> dict:
    """One chat-completions request, recorded; returns the model's message (``choices[0].message``)."""
    record.note("client", "llm", "llm-request", f"chat.completions round {round_number}", request)
    try:
        completion = await llm.chat.completions.create(**request)
    except openai.OpenAIError as error:
        raise explain_llm_error(error, str(llm.base_url), request["model"], llm.api_key) from None
    reply = completion.choices[0].message.model_dump(mode="json", exclude_none=True)
    payload = completion.model_dump(mode="json", exclude_none=True)
    record.note("llm", "client", "llm-response", llm_response_label(reply), payload)
    return reply


def _stopped(max_rounds: int, reply: dict[str, Any]) -> str:
    return _stopped_wanting(max_rounds, [call["function"]["name"] for call in reply["tool_calls"]])


def _stopped_wanting(max_rounds: int, names: list[str]) -> str:
    wanted = ", ".join(names)
    return (
        f"Stopped after {max_rounds} round{'s' * (max_rounds != 1)} (max_rounds, set by LLM_MAX_TOOL_ROUNDS): "
        f"the model still asked for {wanted}, which was not run, so there is no final answer. "
        "Raise LLM_MAX_TOOL_ROUNDS or ask a simpler question."
    )


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the model, in either API: its id, the tool's name, the arguments as the API sent them."""

    id: str
    name: str
    arguments: str | Any


class OpenAIChat:
    """Chat completions: the system message first in ``messages``, ``tool_calls``, results as ``role: "tool"``."""

    def __init__(self, llm: openai.AsyncOpenAI, model: str) -> None:
        self.llm, self.model = llm, model

    def tools(self, mcp_tools: list[Any]) -> list[dict[str, Any]]:
        return to_openai_tools(mcp_tools)

    def start(self, system: dict[str, str], question: str) -> list[dict[str, Any]]:
        return [system, {"role": "user", "content": question}]

    async def step(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], round_number: int, record: _Recorder
    ) -> tuple[dict[str, Any], list[ToolCall], str]:
        """Ask once; the message to keep, the calls it asks for and its text."""
        request = {"model": self.model, "messages": list(messages), "tools": tools, "tool_choice": "auto"}
        reply = await _complete(self.llm, request, round_number, record)
        calls = [
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in reply.get("tool_calls") or []
        ]
        return _assistant_message(reply), calls, (reply.get("content") or "").strip()

    def results(self, calls: list[ToolCall], outcomes: list[tuple[str, bool]]) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": c.id, "content": text}
            for c, (text, _) in zip(calls, outcomes, strict=True)
        ]


#: ``max_tokens`` of each Messages request (required by the API; the teaching model writes far less).
MAX_TOKENS = 1024


class AnthropicMessages:
    """Anthropic Messages: the system message as ``system``, ``tool_use`` blocks, ``tool_result`` blocks sent
    back in one ``role: "user"`` message."""

    def __init__(self, llm: anthropic.AsyncAnthropic, model: str, max_tokens: int = MAX_TOKENS) -> None:
        self.llm, self.model, self.max_tokens = llm, model, max_tokens
        self.system = ""

    def tools(self, mcp_tools: list[Any]) -> list[dict[str, Any]]:
        return to_anthropic_tools(mcp_tools)

    def start(self, system: dict[str, str], question: str) -> list[dict[str, Any]]:
        self.system = system["content"]
        return [{"role": "user", "content": question}]

    async def step(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], round_number: int, record: _Recorder
    ) -> tuple[dict[str, Any], list[ToolCall], str]:
        request = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "messages": list(messages),
            "tools": tools,
            "tool_choice": {"type": "auto"},
        }
        record.note("client", "llm", "llm-request", f"messages round {round_number}", request)
        import anthropic

        try:
            reply = await self.llm.messages.create(**request)
        except anthropic.AnthropicError as error:
            url, key = str(self.llm.base_url).rstrip("/"), self.llm.api_key
            raise explain_anthropic_error(error, url, self.model, key) from None
        payload = reply.model_dump(mode="json", exclude_none=True)
        blocks = [b for b in payload.get("content", []) if b.get("type") in ("text", "tool_use")]
        kept = [
            {"type": "text", "text": b["text"]} if b["type"] == "text"
            else {"type": "tool_use", "id": b["id"], "name": b["name"], "input": b.get("input", {})}
            for b in blocks
        ]  # fmt: skip
        calls = [ToolCall(b["id"], b["name"], b.get("input", {})) for b in kept if b["type"] == "tool_use"]
        text = "\n".join(b["text"] for b in kept if b["type"] == "text").strip()
        record.note("llm", "client", "llm-response", _messages_label(calls, text), payload)
        return {"role": "assistant", "content": kept}, calls, text

    def results(self, calls: list[ToolCall], outcomes: list[tuple[str, bool]]) -> list[dict[str, Any]]:
        blocks = [
            {"type": "tool_result", "tool_use_id": c.id, "content": text, "is_error": failed}
            for c, (text, failed) in zip(calls, outcomes, strict=True)
        ]
        return [{"role": "user", "content": blocks}]


def _messages_label(calls: list[ToolCall], text: str) -> str:
    """The trace label of a Messages reply, worded like :func:`~mcp_teach.llm.trace.llm_response_label`."""
    if calls:
        openai_style = [
            {"function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}} for c in calls
        ]
        return llm_response_label({"tool_calls": openai_style}).replace("tool_calls:", "tool_use:", 1)
    return llm_response_label({"content": text})


def api_for(llm: openai.AsyncOpenAI | anthropic.AsyncAnthropic, model: str) -> OpenAIChat | AnthropicMessages:
    """The format the client speaks."""
    module = sys.modules.get("anthropic")
    if module is not None and isinstance(llm, module.AsyncAnthropic):
        return AnthropicMessages(llm, model)
    return OpenAIChat(llm, model)


async def ask(
    question: str,
    mcp: Client,
    llm: openai.AsyncOpenAI,
    *,
    model: str,
    max_rounds: int = 5,
    capture: Capture | None = None,
    since: int | None = None,
    system_prompt: str = SYSTEM_PROMPT,
    on_event: Callable[[TraceEvent], None] | None = None,
) -> LoopResult:
    """Answer ``question`` with the model deciding and the MCP server ``mcp`` (connected) executing.

    The trace gets the MCP messages from ``capture`` (default: the client's
    ``CaptureTransport``, if any) from index ``since`` on (default: from now on;
    ``0`` includes the connection's opening). ``on_event`` gets each question, LLM and answer
    event as it happens; the MCP messages join the trace at the end.
    """
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, not {max_rounds}")
    capture = capture if capture is not None else getattr(mcp.transport, "capture", None)
    start = since if since is not None else len(capture) if capture is not None else 0
    record = _Recorder(capture, start, on_event)
    record.note("user", "client", "question", question, {"content": question})
    tools = to_openai_tools(await mcp.list_tools())  # phase 2, discovery
    messages = [system_message(mcp, system_prompt), {"role": "user", "content": question}]
    for round_number in range(1, max_rounds + 1):
        request = {"model": model, "messages": list(messages), "tools": tools, "tool_choice": "auto"}
        reply = await _complete(llm, request, round_number, record)  # phase 3, decision (or the answer)
        messages.append(_assistant_message(reply))
        if not reply.get("tool_calls"):
            answer = (reply.get("content") or "").strip()
            return record.finish(messages, answer, round_number, stopped_early=False)
        if round_number == max_rounds:
            break  # no round left to show the model any result: do not run the calls at all
        for call in reply["tool_calls"]:  # phases 4 and 5, execution and feeding back
            content = await execute_tool_call(mcp, call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    return record.finish(messages, _stopped(max_rounds, reply), max_rounds, stopped_early=True)


async def ask_any(
    question: str,
    mcp: Client,
    llm: openai.AsyncOpenAI | anthropic.AsyncAnthropic,
    *,
    model: str,
    max_rounds: int = 5,
    capture: Capture | None = None,
    since: int | None = None,
    system_prompt: str = SYSTEM_PROMPT,
    on_event: Callable[[TraceEvent], None] | None = None,
) -> LoopResult:
    """:func:`ask` for either API: the same loop, the model's format left to :class:`OpenAIChat` or
    :class:`AnthropicMessages` (chosen by the type of ``llm``, see :func:`api_for`).

    The trace gets the MCP messages from ``capture`` (default: the client's
    ``CaptureTransport``, if any) from index ``since`` on (default: from now on;
    ``0`` includes the connection's opening). ``on_event`` gets each question, LLM and answer
    event as it happens; the MCP messages join the trace at the end. ``llm`` is an
    ``openai.AsyncOpenAI`` (chat completions) or an ``anthropic.AsyncAnthropic`` (Messages);
    ``messages`` of the result are then in that API's format.
    """
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, not {max_rounds}")
    capture = capture if capture is not None else getattr(mcp.transport, "capture", None)
    start = since if since is not None else len(capture) if capture is not None else 0
    record = _Recorder(capture, start, on_event)
    record.note("user", "client", "question", question, {"content": question})
    api = api_for(llm, model)
    tools = api.tools(await mcp.list_tools())  # phase 2, discovery
    messages = api.start(system_message(mcp, system_prompt), question)
    calls: list[ToolCall] = []
    for round_number in range(1, max_rounds + 1):
        kept, calls, text = await api.step(messages, tools, round_number, record)  # phase 3, decision (or answer)
        messages.append(kept)
        if not calls:
            return record.finish(messages, text, round_number, stopped_early=False)
        if round_number == max_rounds:
            break  # no round left to show the model any result: do not run the calls at all
        outcomes = [await run_tool_call(mcp, call.name, call.arguments) for call in calls]  # phase 4, execution
        messages += api.results(calls, outcomes)  # phase 5, feeding back
    return record.finish(
        messages, _stopped_wanting(max_rounds, [c.name for c in calls]), max_rounds, stopped_early=True
    )
