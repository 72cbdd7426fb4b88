"""Anthropic's Messages API on top of the offline teaching model, and MCP tools as Anthropic tool definitions.

The teaching model reads OpenAI chat-completions requests (:func:`~mcp_teach.llm.teaching_model.complete`).
This module translates a Messages request into one and the ``chat.completion`` back into a Messages reply,
so both APIs get the same answers from the same rules:

==============================  ==========================================  ==========================================
                                Anthropic Messages (``POST /v1/messages``)  OpenAI chat completions
==============================  ==========================================  ==========================================
the application's prompt        top-level ``system`` (a string or blocks)   a ``role: "system"`` message
tool definitions                ``{name, description, input_schema}``       ``{type: "function", function: {name,
                                                                            description, parameters}}``
the model calls a tool          ``tool_use`` block ``{id, name, input}``    ``tool_calls[{id, function: {name,
                                (``input`` is a JSON object)                arguments}}]`` (``arguments`` a string)
the result goes back            ``role: "user"``, ``tool_result`` block     ``role: "tool"``, ``tool_call_id``
                                ``{tool_use_id, content, is_error}``
why the model stopped           ``stop_reason``, e.g. ``tool_use`` or       ``finish_reason``, e.g. ``tool_calls`` or
                                ``end_turn`` (also ``max_tokens``, …)       ``stop`` (also ``length``, …)
==============================  ==========================================  ==========================================

The teaching model gives only the two usual reasons of each; the real APIs have more (lesson 11 lists them).

Deterministic, like the OpenAI side: ``id`` is ``msg_`` and a hash of the request, tool-use ids are
``toolu_<round>_<index>`` (the OpenAI side's ``call_<round>_<index>``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from mcp_teach.llm.openai_tools import to_openai_tools, tool_call

#: ``tool_choice`` in the Messages API -> in chat completions.
TOOL_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
#: An error's HTTP status -> Anthropic's error ``type``.
ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
    413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}  # fmt: skip


class MessagesRejected(Exception):
    """A Messages request the endpoint refuses: HTTP status and message, sent as Anthropic's error body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status

    def body(self) -> dict[str, Any]:
        """``{"type": "error", "error": {"type": ..., "message": ...}}``."""
        return {"type": "error", "error": {"type": ERROR_TYPES.get(self.status, "api_error"), "message": str(self)}}


# --- MCP tools as Anthropic tool definitions -------------------------------------------------------------------


def to_anthropic_tools(tools: Iterable[Any]) -> list[dict[str, Any]]:
    """Every MCP tool as ``{"name", "description", "input_schema"}``, in the same order.

    The same fields and schema cleaning as :func:`~mcp_teach.llm.openai_tools.to_openai_tools` (names unique,
    ``title`` as description when there is none); only the envelope differs: no ``{"type": "function",
    "function": ...}`` around it, and the schema is called ``input_schema`` instead of ``parameters``.
    """
    functions = [definition["function"] for definition in to_openai_tools(tools)]
    for function in functions:
        function["input_schema"] = function.pop("parameters")
    return functions


# --- Checking a Messages request ---------------------------------------------------------------------------------


def _require(condition: bool, message: str, status: int = 400) -> None:
    """Refuse the request with ``message`` (a :class:`MessagesRejected`) unless ``condition`` holds."""
    if not condition:
        raise MessagesRejected(status, message)


def validate_messages_request(body: Any, model_name: str) -> dict[str, Any]:
    """Check a Messages request body as Anthropic does; raise :class:`MessagesRejected` if it is unusable."""
    _require(isinstance(body, dict), "The request body must be a JSON object.")
    model = body.get("model")
    _require(isinstance(model, str) and bool(model), "model: Field required")
    here = f"this is the offline teaching endpoint, whose model is '{model_name}'"
    fix = f"Set ANTHROPIC_MODEL={model_name} or point ANTHROPIC_BASE_URL at your provider."
    _require(model == model_name, f"model: {model} does not exist here: {here}. {fix}", 404)
    max_tokens = body.get("max_tokens")
    whole = isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens >= 1
    _require(whole, "max_tokens: Field required (a whole number of at least 1)")
    _require(not body.get("stream"), "The offline teaching model does not stream; leave 'stream' unset.")
    messages = body.get("messages")
    _require(isinstance(messages, list) and bool(messages), "messages: must be a non-empty array")
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        where = f"messages.{index}"
        roles = f"{where}.role: must be 'user' or 'assistant' (the prompt goes in 'system')"
        _require(role in ("user", "assistant"), roles)
        content = message.get("content")
        _require(isinstance(content, str | list), f"{where}.content: must be a string or an array of blocks")
        for block_index, block in enumerate(content if isinstance(content, list) else []):
            at = f"{where}.content.{block_index}"
            _require(isinstance(block, dict) and isinstance(block.get("type"), str), f"{at}.type: Field required")
            turn = {"tool_result": "user", "tool_use": "assistant"}.get(block["type"], role)
            # The API refuses a block in the other side's turn.
            _require(turn == role, f"{at}: a {block['type']} block belongs in a {turn} turn")
            has_id = block["type"] != "tool_result" or bool(block.get("tool_use_id"))
            _require(has_id, f"{at}.tool_use_id: Field required")
    tools = body.get("tools")
    _require(tools is None or isinstance(tools, list), "tools: must be an array")
    for index, tool in enumerate(tools or []):
        named = isinstance(tool, dict) and isinstance(tool.get("name"), str) and bool(tool["name"])
        _require(named, f"tools.{index}.name: Field required")
        has_schema = "type" in tool or isinstance(tool.get("input_schema"), dict)
        _require(has_schema, f"tools.{index}.input_schema: Field required")
    choice = body.get("tool_choice")
    known = choice is None or (isinstance(choice, dict) and choice.get("type") in (*TOOL_CHOICES, "tool"))
    _require(known, "tool_choice.type: must be one of 'auto', 'any', 'tool', 'none'")
    return body


# --- Messages request -> chat-completions request ----------------------------------------------------------------


def _text(content: Any) -> str:
    """A string, or the text of ``text`` blocks joined with newlines."""
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text")
    return content if isinstance(content, str) else ""


def _tool_result_content(block: Mapping[str, Any]) -> str:
    """A ``tool_result``'s content as the text of a ``role: "tool"`` message; an error is marked ``Error:``."""
    content = block.get("content")
    result = _text(content) if isinstance(content, list) else "" if content is None else str(content)
    return f"Error: {result}" if block.get("is_error") and not result.startswith("Error") else result


def _user_messages(content: Any) -> list[dict[str, Any]]:
    """A Messages ``user`` turn: its ``tool_result`` blocks become ``tool`` messages, its text one ``user``
    message after them (a turn with only results asks no new question)."""
    if not isinstance(content, list):
        return [{"role": "user", "content": _text(content)}]
    messages: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": str(b["tool_use_id"]), "content": _tool_result_content(b)}
        for b in content
        if b.get("type") == "tool_result"
    ]
    if (texts := [b for b in content if b.get("type") == "text"]) or not messages:
        messages.append({"role": "user", "content": _text(texts)})
    return messages


def _assistant_message(content: Any) -> dict[str, Any]:
    """A Messages ``assistant`` turn: ``text`` blocks as its content, ``tool_use`` blocks as ``tool_calls``."""
    message: dict[str, Any] = {"role": "assistant", "content": _text(content) or None}
    if calls := [b for b in content if b.get("type") == "tool_use"] if isinstance(content, list) else []:
        message["tool_calls"] = [
            tool_call(str(b.get("id")), str(b.get("name")), json.dumps(b.get("input") or {})) for b in calls
        ]
    return message


def _tool_choice(choice: Any) -> Any:
    if not isinstance(choice, Mapping):
        return "auto"
    if choice.get("type") == "tool":
        return {"type": "function", "function": {"name": choice.get("name")}}
    return TOOL_CHOICES.get(str(choice.get("type")), "auto")


def _function(tool: Mapping[str, Any]) -> dict[str, Any]:
    """An Anthropic tool definition as the ``function`` of a chat-completions one."""
    schema = tool.get("input_schema") or {"type": "object"}
    return {"name": tool["name"], "description": tool.get("description", ""), "parameters": schema}


def to_chat_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """The chat-completions request that asks the teaching model what ``body`` (a Messages request) asks."""
    messages: list[dict[str, Any]] = []
    if system := _text(body.get("system")):
        messages.append({"role": "system", "content": system})
    for message in body.get("messages") or []:
        if message.get("role") == "assistant":
            messages.append(_assistant_message(message.get("content")))
        else:
            messages += _user_messages(message.get("content"))
    request: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    if tools := [{"type": "function", "function": _function(tool)} for tool in body.get("tools") or []]:
        request["tools"] = tools
    request["tool_choice"] = _tool_choice(body.get("tool_choice"))
    return request


# --- chat.completion -> Messages reply ---------------------------------------------------------------------------


def to_message(completion: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """The Messages API reply (``type: "message"``) for the teaching model's ``chat.completion``."""
    message = completion["choices"][0]["message"]
    content: list[dict[str, Any]] = []
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        call_id = str(call["id"]).removeprefix("call_")
        arguments = json.loads(call["function"]["arguments"] or "{}")
        content.append({"type": "tool_use", "id": f"toolu_{call_id}", "name": call["function"]["name"],
                        "input": arguments})  # fmt: skip
    usage = completion.get("usage") or {}
    digest = hashlib.sha256(json.dumps(body, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()
    return {
        "id": "msg_" + digest[:24], "type": "message", "role": "assistant", "model": completion.get("model"),
        "content": content, "stop_reason": "tool_use" if message.get("tool_calls") else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0)},
    }  # fmt: skip
