"""The ASGI app that serves an MCP server over SSE or streamable HTTP, with every guard in front of it."""

from __future__ import annotations

from typing import Literal

import sniffio
from fastmcp import FastMCP
from fastmcp.server.http import HostOriginGuardMiddleware
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_teach.servers.student_tokens import INSTRUCTOR
from mcp_teach.transports.class_token import ClassTokenMiddleware
from mcp_teach.transports.http_guard import json_rpc_guard
from mcp_teach.transports.session_quota import SessionQuota

HttpTransport = Literal["sse", "streamable-http"]
#: Bind addresses meaning "every interface".
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
DEFAULT_PATHS: dict[HttpTransport, str] = {"sse": "/sse", "streamable-http": "/mcp"}
#: How many different (Host, Origin, server address, scheme) that passed fastmcp's guard are remembered.
REMEMBERED_PASSES = 64


def allowed_hosts(host: str) -> list[str] | None:
    """The ``Host`` headers a server bound to ``host`` accepts (fastmcp's guard; None: any).

    A server bound to one address answers requests for that address (and, on loopback, for ``localhost``);
    anything else is a DNS-rebinding attempt and gets 421 (403 if it also carries a foreign ``Origin``: see
    :class:`RememberedHostOriginGuard`). A server on every interface (``0.0.0.0``, ``::``) is reached by whatever
    IP or name the students use, which it cannot know: it accepts any ``Host`` except on loopback connections,
    which fastmcp still checks.
    Protect such a server with a class token.
    """
    return None if host in WILDCARD_HOSTS else [host]


def _guard_inputs(scope: Scope) -> tuple[object, ...]:
    """All that fastmcp's Host/Origin guard reads of a request: first Host and Origin, server address, scheme."""
    first: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        first.setdefault(name, value)
    return first.get(b"host"), first.get(b"origin"), scope.get("server"), scope.get("scheme")


#: What each refusal says (fastmcp's words).
REFUSALS = {403: "Forbidden Origin", 421: "Misdirected Request"}


async def _let_through(scope: Scope, receive: Receive, send: Send) -> None:
    """The app behind the guard when it is only asked: a request it lets through is answered by nobody."""


def _reached_as(scope: Scope) -> Scope | None:
    """``scope`` with its ``Host`` replaced by the address the connection reached (None if the server has none)."""
    server = scope.get("server")
    if not server:
        return None
    address, port = server[0], server[1]
    host = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    headers = [(name, value) for name, value in scope["headers"] if name != b"host"]
    return {**scope, "headers": [(b"host", host.encode("latin-1")), *headers]}


class RememberedHostOriginGuard:
    """fastmcp's Host/Origin guard, with the settings fastmcp gave it, asked once per :func:`_guard_inputs`, and an
    invalid ``Origin`` answered 403 before the ``Host`` is judged.

    fastmcp checks ``Host`` first and answers a bad one 421 whatever the ``Origin``; a DNS-rebinding page sends
    both a foreign ``Host`` and its own foreign ``Origin``, and "If the `Origin` header is present and invalid,
    servers MUST respond with HTTP 403 Forbidden" (2026-07-28 and 2025-11-25, streamable HTTP, Security). So a
    request fastmcp answers 421 that carries an ``Origin`` is asked again with the ``Host`` the connection really
    reached (the server's own address): if fastmcp refuses that ``Origin`` even then, the answer is 403. A bad
    ``Host`` without an ``Origin`` (or with one the server accepts) still gets 421; every other answer is fastmcp's.

    fastmcp's answer depends on those inputs and its settings only, and a class sends the same few all lesson
    long; asking it every time (urlsplit, ipaddress, fnmatch) cost 2 % of a ``tools/call``. Only passes
    are remembered, at most :data:`REMEMBERED_PASSES` (varied Host headers cannot grow memory): a refused
    request is judged each time.
    """

    def __init__(self, app: ASGIApp, options: dict[str, object]) -> None:
        self.app = app
        self._ask = HostOriginGuardMiddleware(_let_through, **options)
        self._passes: set[tuple[object, ...]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # fastmcp's guard lets anything but HTTP requests through, too
        if scope["type"] != "http" or (inputs := _guard_inputs(scope)) in self._passes:
            await self.app(scope, receive, send)
            return
        status = await self._status(scope)
        if status == 421 and inputs[1] is not None and (reached := _reached_as(scope)) is not None:
            status = 403 if await self._status(reached) == 403 else 421
        if status == 200:
            if len(self._passes) < REMEMBERED_PASSES:
                self._passes.add(inputs)
            await self.app(scope, receive, send)
        else:
            await Response(REFUSALS.get(status, "Forbidden"), status_code=status)(scope, receive, send)

    async def _status(self, scope: Scope) -> int:
        """What fastmcp's guard answers ``scope``: its refusal's status, or 200 if it lets the request through."""
        answered = [200]

        async def note(message: Message) -> None:
            if message["type"] == "http.response.start":
                answered[0] = message["status"]

        await self._ask(scope, _nothing_to_receive, note)
        return answered[0]


async def _nothing_to_receive() -> Message:
    return {"type": "http.disconnect"}


def host_origin_guard(app: ASGIApp, host: str) -> RememberedHostOriginGuard:
    """``app`` behind the guard the course's MCP servers have, for a server bound to ``host`` (see
    :func:`allowed_hosts`): for the HTTP services that are not fastmcp apps (the tap, the offline model)."""
    options = {"allowed_hosts": allowed_hosts(host), "allowed_origins": None, "mode": "auto"}
    return RememberedHostOriginGuard(app, options)


def _remember_host_origin_answers(app: Starlette) -> None:
    """Put fastmcp's guard, as fastmcp configured it, behind :class:`RememberedHostOriginGuard`."""
    stack = app.user_middleware
    found = [index for index, entry in enumerate(stack) if entry.cls is HostOriginGuardMiddleware]
    if len(found) != 1 or stack[found[0]].args or app.middleware_stack is not None:
        raise RuntimeError("fastmcp's Host/Origin guard is not where this fastmcp version put it")
    stack[found[0]] = Middleware(RememberedHostOriginGuard, options=stack[found[0]].kwargs)


class AsyncLibraryKnown:
    """ASGI middleware: each request runs with sniffio told which event loop runs it.

    anyio asks sniffio which async library is running some twenty times per ``tools/call``. Under
    ``anyio.run`` (how fastmcp's own ``run()`` serves) sniffio reads the answer from a context variable;
    under uvicorn's own loop it looks at the running task every time: 1.2 % of a ``tools/call`` (instructions
    counted with callgrind, 100 clients calling). Asked once here, then set.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if sniffio.current_async_library_cvar.get() is not None:  # e.g. served under anyio.run
            await self.app(scope, receive, send)
            return
        known = sniffio.current_async_library_cvar.set(sniffio.current_async_library())
        try:
            await self.app(scope, receive, send)
        finally:
            sniffio.current_async_library_cvar.reset(known)


def guarded_http_app(
    server: FastMCP, transport: HttpTransport, path: str, host: str, token: str | None = None, stateless: bool = False
):
    """The server's ASGI app: Host/Origin checks (see :func:`allowed_hosts`), bad bodies answered (:mod:`.http_guard`).

    With ``token`` every request also needs ``Authorization: Bearer <token>`` (:mod:`.class_token`); the
    Host/Origin guard stays in front of it, so a bad Host or Origin is refused before the token is looked at.
    ``stateless`` (streamable HTTP only) keeps no session between requests (see :mod:`.class_mode`).
    """
    token_check = [Middleware(ClassTokenMiddleware, token=token)] if token else []
    # Sessions: SSE's event streams, and the handshake era of streamable HTTP with state; each person has their
    # own credential. The instructor (the class secret itself) is not counted: a load test may open one per client.
    keeps_sessions = transport == "sse" or not stateless
    quota = {"exempt": frozenset({INSTRUCTOR} if token else ()), "stream_path": path if transport == "sse" else None}
    session_quota = [Middleware(SessionQuota, **quota)] if keeps_sessions and (token or server.auth) else []
    json_guard = json_rpc_guard(transport, path, stateless, authenticated_only=server.auth is not None)
    middleware = [Middleware(AsyncLibraryKnown), *token_check, *session_quota, json_guard]
    guards = {"host_origin_protection": "auto", "allowed_hosts": allowed_hosts(host), "middleware": middleware}
    app = server.http_app(path=path, transport=transport, stateless_http=stateless, **guards)
    _remember_host_origin_answers(app)
    return app
