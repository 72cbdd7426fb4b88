"""The ASGI app that serves an MCP server over SSE or streamable HTTP, with every guard in front of it."""

from __future__ import annotations

from typing import Literal

from fastmcp import FastMCP
from starlette.middleware import Middleware

from mcp_teach.transports.class_token import ClassTokenMiddleware
from mcp_teach.transports.http_guard import json_rpc_guard

HttpTransport = Literal["sse", "streamable-http"]
#: Bind addresses meaning "every interface".
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
DEFAULT_PATHS: dict[HttpTransport, str] = {"sse": "/sse", "streamable-http": "/mcp"}


def allowed_hosts(host: str) -> list[str] | None:
    """The ``Host`` headers a server bound to ``host`` accepts (fastmcp's guard; None: any).

    A server bound to one address answers requests for that address (and, on
    loopback, for ``localhost``); anything else is a DNS-rebinding attempt
    and gets 421. A server on every interface (``0.0.0.0``, ``::``) is reached
    by whatever IP or name the students use, which it cannot know: it accepts
    any ``Host`` except on loopback connections, which fastmcp still checks.
    Protect such a server with a class token.
    """
    return None if host in WILDCARD_HOSTS else [host]


def guarded_http_app(
    server: FastMCP,
    transport: HttpTransport,
    path: str,
    host: str,
    token: str | None = None,
    stateless: bool = False,
):
    """The server's ASGI app: Host/Origin checks (see :func:`allowed_hosts`), bad bodies answered (:mod:`.http_guard`).

    With ``token`` every request also needs ``Authorization: Bearer <token>`` (:mod:`.class_token`); the
    Host/Origin guard stays in front of it, so a bad Host or Origin is refused before the token is looked at.
    ``stateless`` (streamable HTTP only) keeps no session between requests (see :mod:`.class_mode`).
    """
    token_check = [Middleware(ClassTokenMiddleware, token=token)] if token else []
    return server.http_app(
        path=path,
        transport=transport,
        stateless_http=stateless,
        host_origin_protection="auto",
        allowed_hosts=allowed_hosts(host),
        middleware=[*token_check, json_rpc_guard(transport, path)],
    )
