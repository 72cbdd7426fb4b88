"""The LLM tool loop: where function calling meets MCP.

Five phases, as in the course notes: (1) the client is connected (handshake or
discover), (2) **discovery**: ``tools/list`` becomes OpenAI tool definitions,
(3) **decision**: the model answers with ``tool_calls``, (4) **execution**: each
call becomes an MCP ``tools/call``, (5) **feeding back**: each result goes back
as a ``role: "tool"`` message, until the model answers in text.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from mcp_teach.llm.openai_tools import to_openai_tools
from mcp_teach.llm.provider import explain_llm_error
from mcp_teach.llm.trace import Trace, TraceEvent, llm_response_label
from mcp_teach.wire.messages import Capture

SYSTEM_PROMPT = (
    "You are the mcp-teach assistant. Use the provided tools for every calculation, one tool call per step, "
    "and answer in the user's language."
)


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


def _tool_text(result: Any) -> str:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return "\n".join(texts) if texts else json.dumps(result.structured_content)


async def execute_tool_call(mcp: Client, name: str, raw_arguments: str) -> str:
    """Run one tool call from the model through MCP; every failure becomes text the model can read."""
    try:
        arguments = json.loads(raw_arguments or "{}")
    except ValueError as error:
        return f"Error: the arguments for {name} are not valid JSON ({error}). Send one JSON object."
    if not isinstance(arguments, dict):
        return f"Error: the arguments for {name} must be a JSON object, not {type(arguments).__name__}."
    try:
        result = await mcp.call_tool(name, arguments, raise_on_error=False)
    except MCPError as error:
        return f"Error: the server refused the call (JSON-RPC error {error.error.code}: {error.error.message})."
    text = _tool_text(result)
    return f"Error: {text}" if result.is_error else text


def _assistant_message(message: dict[str, Any]) -> dict[str, Any]:
    kept = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        kept["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {k: c["function"][k] for k in ("name", "arguments")}}
            for c in message["tool_calls"]
        ]
    return kept


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
    """Answer ``question`` with the model deciding and the MCP server executing.

    ``mcp`` must be connected. MCP messages come into the trace from ``capture``
    (default: the capture of the client's ``CaptureTransport``, if it has one),
    from index ``since`` on (default: those sent from now on; ``0`` includes the
    connection's opening messages). ``on_event`` is called with each question,
    LLM and answer event as it happens; the MCP messages join the trace at the end.
    """
    capture = capture if capture is not None else getattr(mcp.transport, "capture", None)
    start = since if since is not None else len(capture) if capture is not None else 0
    trace = Trace()

    def note(event: TraceEvent) -> None:
        trace.add(event)
        if on_event:
            on_event(event)

    note(TraceEvent(time.monotonic(), "user", "client", "question", question, {"content": question}))
    tools = to_openai_tools(await mcp.list_tools())
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": question},
    ]
    for round_number in range(1, max_rounds + 1):
        request = {"model": model, "messages": list(messages), "tools": tools, "tool_choice": "auto"}
        note(
            TraceEvent(
                time.monotonic(), "client", "llm", "llm-request", f"chat.completions round {round_number}", request
            )
        )
        try:
            completion = await llm.chat.completions.create(**request)
        except openai.OpenAIError as error:
            raise explain_llm_error(error, str(llm.base_url), model, llm.api_key) from None
        reply = completion.choices[0].message.model_dump(mode="json", exclude_none=True)
        note(
            TraceEvent(
                time.monotonic(),
                "llm",
                "client",
                "llm-response",
                llm_response_label(reply),
                completion.model_dump(mode="json", exclude_none=True),
            )
        )
        messages.append(_assistant_message(reply))
        if not reply.get("tool_calls"):
            answer = (reply.get("content") or "").strip()
            return _finish(trace, capture, start, messages, answer, round_number, False, note)
        if round_number == max_rounds:
            break  # no round left to show the model any result: do not run the calls at all
        for call in reply["tool_calls"]:
            content = await execute_tool_call(mcp, call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    wanted = ", ".join(call["function"]["name"] for call in reply["tool_calls"])
    answer = (
        f"Stopped after {max_rounds} round{'s' * (max_rounds != 1)} (max_rounds, set by LLM_MAX_TOOL_ROUNDS): "
        f"the model still asked for {wanted}, which was not run, so there is no final answer. "
        "Raise LLM_MAX_TOOL_ROUNDS or ask a simpler question."
    )
    return _finish(trace, capture, start, messages, answer, max_rounds, True, note)


def _finish(
    trace: Trace,
    capture: Capture | None,
    start: int,
    messages: list[dict[str, Any]],
    answer: str,
    rounds: int,
    stopped_early: bool,
    note: Callable[[TraceEvent], None],
) -> LoopResult:
    note(TraceEvent(time.monotonic(), "client", "user", "answer", answer, {"content": answer}))
    if capture is not None:
        trace.merge_capture(capture, start)
    return LoopResult(answer, trace, messages, rounds, stopped_early)
