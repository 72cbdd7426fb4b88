"""Answer an HTTP body the MCP server cannot read with a JSON-RPC error that says what to fix.

mcp's HTTP transports reject such bodies unevenly: SSE answers plain text
(``400 Could not parse message``) and silently drops a request whose ``id`` is
not a string or integer; streamable HTTP (handshake era) answers ``-32602``
with pydantic's full report; both answer a ``tools/call`` without ``id`` with
``202`` and nothing else, and an oversized body with a plain-text ``413``.

:class:`JsonRpcGuard` checks each POSTed message first, with the same
:func:`~mcp_teach.transports.frames.check_frame` as the stdio server (same codes,
same wording), and answers ``400`` (``413`` when too large) with a JSON-RPC
error body. A notification that should have been a request is refused too:
HTTP, unlike stdio, has a response in which to say so. Everything else goes on
to mcp unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

import fastmcp
import mcp_types as types
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_teach.transports.frames import (
    MAX_MESSAGE_BYTES,
    Rejected,
    check_frame,
    is_misplaced_notification,
    rejected,
    too_large,
)


async def _read_body(scope: Scope, receive: Receive, limit: int) -> tuple[bytes, int] | None:
    """``(body, size)``, the body kept only up to ``limit`` bytes; None if the client went away meanwhile.

    A declared Content-Length over the limit is not read at all.
    """
    declared = Headers(scope=scope).get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return b"", int(declared)
    body = bytearray()
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= limit:
            body += chunk
        more = message.get("more_body", False)
    return bytes(body), size


def _reply(rejection: Rejected, status: int) -> Response:
    """The error as the body of an HTTP response (serialized as the stdio server writes it: ``id`` null kept)."""
    body = rejection.reply.model_dump_json(by_alias=True, exclude_unset=True)
    return Response(body, status_code=status, media_type="application/json")


def _needs_an_id(method: str) -> Rejected:
    return rejected(
        types.INVALID_REQUEST,
        f'Invalid Request: "{method}" is a request, so it needs an "id" (a string or an integer); '
        "without one it is a notification, and a notification never gets an answer.",
    )


class JsonRpcGuard:
    """ASGI middleware: check the JSON-RPC message POSTed to ``paths`` before the MCP transport reads it."""

    def __init__(self, app: ASGIApp, paths: Iterable[str], limit: int = MAX_MESSAGE_BYTES) -> None:
        self.app = app
        self.paths = {path.rstrip("/") for path in paths}
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") not in self.paths:
            await self.app(scope, receive, send)
            return
        read = await _read_body(scope, receive, self.limit)
        if read is None:
            return
        body, size = read
        if size > self.limit:
            await _reply(too_large(size, self.limit), 413)(scope, receive, send)
            return
        checked = check_frame(body, limit=self.limit)
        if isinstance(checked, Rejected):
            await _reply(checked, 400)(scope, receive, send)
            return
        if is_misplaced_notification(checked):
            await _reply(_needs_an_id(checked.method), 400)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def json_rpc_guard(transport: str, path: str) -> Middleware:
    """The guard for an app built by ``FastMCP.http_app``: SSE takes messages on its message path, not on ``path``."""
    message_path = fastmcp.settings.message_path if transport == "sse" else path
    return Middleware(JsonRpcGuard, paths=[message_path])
