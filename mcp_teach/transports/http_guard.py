"""Answer an HTTP body the MCP server cannot read with a JSON-RPC error that says what to fix.

mcp's HTTP transports reject such bodies unevenly: SSE answers plain text
(``400 Could not parse message``) and silently drops a request whose ``id`` is
not a string or integer; streamable HTTP (handshake era) answers ``-32602``
with pydantic's full report; both answer a ``tools/call`` without ``id`` with
``202`` and nothing else, and an oversized body with a plain-text ``413``.

:class:`JsonRpcGuard` checks each POSTed message first with
:func:`~mcp_teach.transports.frames.read_frame`, the stdio server's checks (same codes,
same wording), and answers ``400`` (``413`` when too large) with a JSON-RPC
error body. A notification that should have been a request is refused too:
HTTP, unlike stdio, has a response in which to say so. With sessions (streamable
HTTP, not stateless), a request with neither an ``MCP-Protocol-Version`` header
nor a session is told how to join either era (:mod:`.envelope`): mcp answers it
``Missing session ID``. Everything else goes on to mcp unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from dataclasses import dataclass

import fastmcp
import mcp_types as types
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_teach.transports import frames
from mcp_teach.transports.envelope import http_refusal, version_header_mismatch


def _declared_length(scope: Scope) -> int | None:
    """The request's Content-Length, if it declares a usable one (read from the raw headers: this runs per request)."""
    value = next((value for name, value in scope["headers"] if name == b"content-length"), None)
    return int(value) if value is not None and value.isdigit() else None


async def _read_body(scope: Scope, receive: Receive, limit: int) -> tuple[bytes, int] | None:
    """``(body, size)``, the body kept only up to ``limit`` bytes; None if the client went away meanwhile.

    A declared Content-Length over the limit is not read at all.
    """
    declared = _declared_length(scope)
    if declared is not None and declared > limit:
        return b"", declared
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


class _Replay:
    """The ``receive`` the app gets: the body already read, then the client's own ``receive``.

    A plain callable that hands back the client's awaitable, not a coroutine awaiting it: mcp cancels a
    task waiting on ``receive`` at the end of every request, and a coroutine of ours in that wait would
    add its frame, cells and traceback to the cyclic garbage of each request (~10 % more objects for the
    garbage collector, whose full passes then come that much sooner).
    """

    __slots__ = ("_message", "_receive")

    def __init__(self, receive: Receive, body: bytes) -> None:
        self._receive = receive
        self._message: Message | None = {"type": "http.request", "body": body, "more_body": False}

    def __call__(self) -> Awaitable[Message]:
        message, self._message = self._message, None
        return self._receive() if message is None else _ready(message)


async def _ready(message: Message) -> Message:
    return message


def _reply(rejection: frames.Rejected, status: int) -> Response:
    """The error as the body of an HTTP response (serialized as the stdio server writes it: ``id`` null kept)."""
    body = rejection.reply.model_dump_json(by_alias=True, exclude_unset=True)
    return Response(body, status_code=status, media_type="application/json")


def _needs_an_id(method: str) -> frames.Rejected:
    return frames.rejected(
        types.INVALID_REQUEST,
        f'Invalid Request: "{method}" is a request, so it needs an "id" (a string or an integer); '
        "without one it is a notification, and a notification never gets an answer.",
    )


@dataclass
class JsonRpcGuard:
    """ASGI middleware: check the JSON-RPC message POSTed to ``paths`` before the MCP transport reads it."""

    app: ASGIApp
    paths: Iterable[str]
    limit: int = frames.MAX_MESSAGE_BYTES
    #: A legacy request then needs a session: one without any is told how to fix it.
    sessions: bool = False
    #: With fastmcp's auth, a request without a valid token goes on unread, to fastmcp's 401: a stranger learns
    #: nothing from how its body would have been parsed.
    authenticated_only: bool = False
    #: Streamable HTTP: MCP-Protocol-Version must match ``_meta``.
    headers_mirror_body: bool = False

    def __post_init__(self) -> None:
        self.paths = {path.rstrip("/") for path in self.paths}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        other = scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") not in self.paths
        if other or (self.authenticated_only and not getattr(scope.get("user"), "is_authenticated", False)):
            await self.app(scope, receive, send)
            return
        read = await _read_body(scope, receive, self.limit)
        if read is None:
            return
        body, size = read
        checked = self.sessions or self.headers_mirror_body
        refusal = _refusal(body, size, self.limit, scope if checked else None, self.sessions)
        if refusal is None:
            await self.app(scope, _Replay(receive, body), send)
        else:
            await refusal(scope, receive, send)


def _refusal(body: bytes, size: int, limit: int, scope: Scope | None, sessions: bool) -> Response | None:
    """The error response for a body mcp should not get, or None (the parsed message is not kept meanwhile).

    ``scope``: the request, when its headers must agree with its body (streamable HTTP); ``sessions``: its server
    keeps sessions (see :func:`.envelope.http_refusal`).
    """
    if size > limit:
        return _reply(frames.too_large(size, limit), 413)
    message = frames.read_frame(body, limit=limit)
    if isinstance(message, frames.Rejected):
        return _reply(message, 400)
    if frames.is_misplaced_call(message):
        return _reply(_needs_an_id(message["method"]), 400)
    if scope is None or not frames.is_call(message) or "id" not in message:
        return None
    # The request's headers that say its era.
    headers = {name: value for name, value in scope["headers"] if name in (b"mcp-protocol-version", b"mcp-session-id")}
    refused = version_header_mismatch(message, headers) or (http_refusal(message, headers) if sessions else None)
    return None if refused is None else _reply(refused, 400)


def json_rpc_guard(transport: str, path: str, stateless: bool = False, authenticated_only: bool = False) -> Middleware:
    """The guard for an app built by ``FastMCP.http_app``: SSE takes messages on its message path, not on ``path``.

    SSE and stateless streamable HTTP have no sessions to miss (an SSE message URL names its own).
    ``authenticated_only``: the server has fastmcp auth, which answers the others 401 after this guard.
    """
    message_path = fastmcp.settings.message_path if transport == "sse" else path
    sessions = transport == "streamable-http" and not stateless
    return Middleware(
        JsonRpcGuard,
        paths=[message_path],
        sessions=sessions,
        authenticated_only=authenticated_only,
        headers_mirror_body=transport == "streamable-http",
    )
