"""Check one incoming frame (a stdio line or an HTTP body) before it reaches the MCP server.

A server must answer what it cannot read with a JSON-RPC error instead of
staying silent: ``-32700`` (Parse error) when the bytes are not UTF-8 JSON,
``-32600`` (Invalid Request) when the JSON is not a JSON-RPC message.
:func:`check_frame` returns either the parsed message, to pass on, or a
:class:`Rejected` frame with the error to send back; each error message says
what to fix::

    check_frame(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}')   # JSONRPCRequest(...)
    check_frame(b"{not json").reply.error.message    # 'Parse error: not valid JSON (...). Send ...'
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from pydantic import ValidationError
from pydantic_core import from_json

#: The largest message accepted: the same 4 MiB that mcp's streamable HTTP transport allows per request body.
MAX_MESSAGE_BYTES: int = DEFAULT_MAX_REQUEST_BODY_SIZE
HOW_TO_SEND = "Send each JSON-RPC message as one UTF-8 JSON object (over stdio: one per line)."


@dataclass(frozen=True)
class Rejected:
    """A frame the server cannot take, and the error response that says why."""

    reply: types.JSONRPCError


def rejected(code: int, message: str, id: types.RequestId | None = None) -> Rejected:
    """A rejection answered with a JSON-RPC error (``id`` is null when the request's id could not be read)."""
    return Rejected(types.JSONRPCError(jsonrpc="2.0", id=id, error=types.ErrorData(code=code, message=message)))


def too_large(size: int, limit: int = MAX_MESSAGE_BYTES) -> Rejected:
    """The rejection of a message over ``limit`` bytes (it is not read, so its id is unknown)."""
    text = f"Invalid Request: the message is {size:,} bytes; this server accepts at most {limit:,} bytes per message."
    return rejected(types.INVALID_REQUEST, text)


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _usable_id(message: Any) -> types.RequestId | None:
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


def _shape_problem(message: Any) -> str | None:
    """What makes a parsed JSON value not a JSON-RPC message, in words; None if nothing obvious."""
    if isinstance(message, list):
        return "got a JSON array (a batch); MCP sends one JSON-RPC message at a time, not batches."
    if not isinstance(message, dict):
        return f'got a JSON {_json_type(message)}; a JSON-RPC message is an object with "jsonrpc": "2.0".'
    if message.get("jsonrpc") != "2.0":
        found = f"got {json.dumps(message['jsonrpc'])}" if "jsonrpc" in message else "it is missing"
        return f'"jsonrpc" must be "2.0" ({found}).'
    if "id" in message and _usable_id(message) is None:
        return f'"id" must be a string or an integer (got {_json_type(message["id"])}).'
    if "method" in message and not isinstance(message["method"], str):
        return f'"method" must be a string such as "tools/call" (got {_json_type(message["method"])}).'
    if "method" not in message and not ("id" in message and ("result" in message or "error" in message)):
        return 'a request needs a "method" (a string such as "tools/call") and an "id".'
    if "params" in message and not isinstance(message["params"], dict):
        return f'"params" must be an object (got {_json_type(message["params"])}).'
    return None


def _parsed(data: bytes, limit: int) -> Any | Rejected:
    """The JSON value in ``data``, shape-checked as a JSON-RPC message (:func:`_shape_problem`), or its rejection.

    pydantic-core's ``from_json`` reads a request three times faster than ``json.loads`` (this runs for every
    message); what it refuses is read again with ``json.loads``, whose errors the rejection words.
    """
    if len(data) > limit:
        return too_large(len(data), limit)
    try:
        message = from_json(data)
    except ValueError:
        message = _decoded(data)
        if isinstance(message, Rejected):
            return message
    if problem := _shape_problem(message):
        return rejected(types.INVALID_REQUEST, f"Invalid Request: {problem}", _usable_id(message))
    return message


def _decoded(data: bytes) -> Any | Rejected:
    """``json.loads`` of ``data``, or the parse error in words."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        problem = f"the message is not UTF-8 text (byte 0x{data[error.start]:02x} at position {error.start})"
    else:
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            problem = f"not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        except RecursionError:
            problem = "the JSON is nested too deeply to read"
        except ValueError:  # Python reads integer literals of at most sys.get_int_max_str_digits() digits
            problem = f"a number has more than {sys.get_int_max_str_digits()} digits"
    return rejected(types.PARSE_ERROR, f"Parse error: {problem}. {HOW_TO_SEND}")


def _validated(message: dict[str, Any]) -> types.JSONRPCMessage | Rejected:
    """``message`` as the mcp SDK's JSON-RPC model, or the rejection naming the first field that does not fit."""
    try:
        return types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "message"
        return rejected(types.INVALID_REQUEST, f"Invalid Request: {where}: {first['msg']}.", _usable_id(message))


def check_frame(data: bytes, *, limit: int = MAX_MESSAGE_BYTES) -> types.JSONRPCMessage | Rejected:
    """The JSON-RPC message in ``data``, or its rejection with the error response that explains why."""
    message = _parsed(data, limit)
    return message if isinstance(message, Rejected) else _validated(message)


def is_call(message: dict[str, Any]) -> bool:
    """A request or notification (a ``method``, and neither ``result`` nor ``error``)."""
    return "method" in message and "result" not in message and "error" not in message


def read_frame(data: bytes, *, limit: int = MAX_MESSAGE_BYTES) -> dict[str, Any] | Rejected:
    """What :func:`check_frame` accepts, as the parsed dict: for a server that passes on the bytes, not a model.

    A request or notification that passed :func:`_shape_problem` fits the SDK's model already (jsonrpc, id,
    method and params are what the model checks), so only responses are validated again: this runs for every
    HTTP request, and the model's validation was 2 % of a ``tools/call``'s instructions.
    """
    message = _parsed(data, limit)
    if isinstance(message, Rejected) or is_call(message):
        return message
    validated = _validated(message)
    return validated if isinstance(validated, Rejected) else message


def is_misplaced_notification(message: types.JSONRPCMessage) -> bool:
    """A notification (no ``id``) whose method is not a ``notifications/…`` one: a request that forgot its id.

    JSON-RPC forbids answering a notification, so the server cannot say so on
    the wire; it logs a warning instead.
    """
    return isinstance(message, types.JSONRPCNotification) and not message.method.startswith("notifications/")


def is_misplaced_call(message: dict[str, Any]) -> bool:
    """:func:`is_misplaced_notification` for a message read by :func:`read_frame`."""
    return is_call(message) and "id" not in message and not message["method"].startswith("notifications/")
