"""Each person may hold only so many 2025-11-25 sessions on one server at a time.

The mcp SDK keeps at most 10,000 stateful streamable-HTTP sessions (``DEFAULT_MAX_SESSIONS``), each until it
has been idle for 30 minutes (``DEFAULT_SESSION_IDLE_TIMEOUT``), and answers 503 to every new one past that. A
loop of ``initialize`` opens about 75 sessions a second, so one client fills the table in about two minutes and
locks every other 2025-11-25 client out for half an hour. A shorter idle timeout only shortens the lock-out, and
ends the sessions of students who paused. Instead :class:`SessionQuota` counts the open sessions of each
authenticated person (a student's own token, a demo user, an OAuth client) and answers the
:data:`SESSIONS_PER_PERSON` + 1st with ``429 Too Many Requests`` and a JSON-RPC error saying how to free one;
other people are not affected. The specification leaves such limits to the server ("Servers MUST ... Rate limit
tool invocations", 2026-07-28, server/tools, Security Considerations; sessions are a 2025-11-25 feature,
basic/transports, Session Management). 2026-07-28 requests open no session and pass untouched.

A session counts from the response that gave it an ``Mcp-Session-Id`` until a ``DELETE`` ends it, a request for
it answers 404 (expired), or it has had no request for the SDK's idle timeout. Over the deprecated SSE transport
(``stream_path``) a session is its event stream: it counts from its ``GET`` until the stream closes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: How many sessions one person may hold open at once (a lesson's notebook needs a few).
SESSIONS_PER_PERSON = 16
#: JSON-RPC code of the refusal: the one the SDK's own "Too many open sessions" answer uses.
INTERNAL_ERROR = -32603
_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"
#: The protocol versions of the handshake era, whose requests may open a session.
_HANDSHAKE_VERSIONS = frozenset({b"2024-11-05", b"2025-03-26", b"2025-06-18", b"2025-11-25"})


def _header(scope: Scope, name: bytes) -> bytes | None:
    return next((value for key, value in scope["headers"] if key == name), None)


def _person(scope: Scope) -> tuple[object, ...] | None:
    """Who the authenticated request is from, as the SDK compares it when it binds a session, or None."""
    user = scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        return None
    context = authorization_context(user)
    return context["client_id"], context["issuer"], context["subject"]


@dataclass
class SessionQuota:
    """ASGI middleware: at most ``limit`` open 2025-11-25 sessions per person; ``exempt`` client ids are not counted."""

    app: ASGIApp
    limit: int = SESSIONS_PER_PERSON
    exempt: frozenset[str] = frozenset()
    idle_seconds: float = DEFAULT_SESSION_IDLE_TIMEOUT
    #: SSE: the path whose ``GET`` opens a session, which lasts as long as that request.
    stream_path: str | None = None
    #: person -> session id -> when a request for it last came (monotonic seconds); over SSE, -> when it opened
    _open: dict[tuple[object, ...], dict[object, float]] = field(default_factory=dict)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        person = _person(scope) if scope["type"] == "http" else None
        if person is None or person[0] in self.exempt:
            await self.app(scope, receive, send)
            return
        sessions = self._open.setdefault(person, {})
        if self.stream_path is not None:
            await self._stream(sessions, scope, receive, send)
            return
        session = _header(scope, _SESSION_HEADER)
        if session is None and self._would_open(scope) and len(self._prune(sessions)) >= self.limit:
            await self._refuse(scope, receive, send)
            return
        if session in sessions:
            sessions[session] = time.monotonic()
        await self.app(scope, receive, self._noting(sessions, session, scope["method"], send))

    async def _stream(self, sessions: dict[object, float], scope: Scope, receive: Receive, send: Send) -> None:
        """SSE: an event stream is a session while it is open."""
        if scope["method"] != "GET" or scope["path"].rstrip("/") != self.stream_path.rstrip("/"):
            await self.app(scope, receive, send)
        elif len(sessions) >= self.limit:
            await self._refuse(scope, receive, send)
        else:
            stream = object()
            sessions[stream] = time.monotonic()
            try:
                await self.app(scope, receive, send)
            finally:
                sessions.pop(stream)

    @staticmethod
    def _would_open(scope: Scope) -> bool:
        version = _header(scope, _VERSION_HEADER)
        return scope["method"] == "POST" and (version is None or version in _HANDSHAKE_VERSIONS)

    def _prune(self, sessions: dict[object, float]) -> dict[object, float]:
        """Forget the sessions the SDK has ended for idleness by now."""
        cutoff = time.monotonic() - self.idle_seconds
        for session in [session for session, seen in sessions.items() if seen < cutoff]:
            del sessions[session]
        return sessions

    @staticmethod
    def _noting(sessions: dict[object, float], session: bytes | None, method: str, send: Send) -> Send:
        """``send``, noting the session a response opens (``session`` None) or ends (404, or a ``DELETE`` done)."""

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = message["status"]
                if session is None:
                    opened = next((v for k, v in message.get("headers", []) if k.lower() == _SESSION_HEADER), None)
                    if opened is not None:
                        sessions[opened] = time.monotonic()
                elif status == 404 or (method == "DELETE" and status < 300):
                    sessions.pop(session, None)
            await send(message)

        return noting

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        text = f"You already have {self.limit} open sessions on this server, the most one person may hold. " + (
            "Close an event stream (GET) you no longer use (fastmcp's Client closes it when its 'async with' block "
            "ends) or reuse an open one."
            if self.stream_path is not None
            else "End one you no longer use with an HTTP DELETE carrying its Mcp-Session-Id (fastmcp's Client does "
            "when its 'async with' block ends), reuse an open one, or speak 2026-07-28, which needs no session. "
            f"Idle sessions end by themselves after {self.idle_seconds / 60:.0f} minutes."
        )
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": INTERNAL_ERROR, "message": text}}
        response = JSONResponse(body, status_code=429, headers={"Retry-After": "60"})
        await response(scope, receive, send)
