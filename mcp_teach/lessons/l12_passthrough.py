"""Lesson 12: token passthrough, the confused deputy's favourite mistake, recorded on loopback.

An MCP server that calls another service for its users (here ``sync_note`` posts a note to a "backup" HTTP
service) needs a credential for that service. The anti-pattern forwards the token the *client* sent to the MCP
server; the right way uses a credential issued to the MCP server itself. :func:`passthrough_demo` runs both over
real HTTP on 127.0.0.1 (the student's client -> the MCP server with a token -> the backup service) and returns
what the backup service received: in the bad case the student's own token arrives there.

The specification: "The MCP server MUST NOT pass through the token it received from the MCP client" and "MCP
servers MUST only accept tokens specifically intended for themselves" (2026-07-28, basic/authorization/
security-considerations; basic/authorization/index, "Token Handling": tokens MUST be validated for their audience,
RFC 8707). Why (2026-07-28, docs/tutorials/security/security_best_practices, "Token Passthrough"): the downstream
API may trust the token "as if it came from the MCP server" (the confused deputy), its rate limits and audit trail
see the wrong party, and one stolen token opens every service that accepts it. Here the token is the class token
(:mod:`mcp_teach.transports.class_token`) standing in for an OAuth access token; what is printed is always
redacted, with a label saying whose credential it was.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx2
from fastmcp import FastMCP
from fastmcp.server.dependencies import get_http_headers
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_teach.client import teaching_client
from mcp_teach.transports.in_process import serve_asgi, serve_http
from mcp_teach.transports.sockets import server_url
from mcp_teach.wire.redact import redact_headers


@dataclass(frozen=True)
class Received:
    """One request the backup service received: its Authorization header (redacted) and whose credential it was."""

    mode: str
    authorization: str
    whose: str

    def __str__(self) -> str:
        return f"{self.mode:<12} backup service got Authorization: {self.authorization:<19} = {self.whose}"


@contextlib.asynccontextmanager
async def _backup_service(seen: list[str]) -> AsyncIterator[str]:
    """A plain HTTP service on loopback that records each request's Authorization header (in memory only)."""

    async def notes(request: Request) -> JSONResponse:
        seen.append(request.headers.get("authorization", ""))
        return JSONResponse({"stored": True})

    app = Starlette(routes=[Route("/notes", notes, methods=["POST"])])
    async with serve_asgi(app, lifespan="off") as port:
        yield server_url("127.0.0.1", port, "/notes")


def build_sync_server(backup_url: str, *, passthrough: bool, own_credential: str) -> FastMCP:
    """An MCP server whose ``sync_note`` posts to ``backup_url``: with the client's token (``passthrough``, wrong)
    or with ``own_credential``, issued to this server for that service (right)."""
    server = FastMCP("mcp-teach-sync", version="1.0.0")

    async def sync_note(title: str) -> str:
        """Copy a note to the backup service."""
        if passthrough:  # the anti-pattern: whatever the client sent us goes on
            authorization = get_http_headers(include={"authorization"}).get("authorization", "")
        else:
            authorization = f"Bearer {own_credential}"
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(backup_url, json={"title": title}, headers={"Authorization": authorization})
        return f"Backed up {title!r} (HTTP {response.status_code})."

    server.tool(sync_note)
    return server


async def passthrough_demo() -> list[Received]:
    """Run ``sync_note`` once passing the student's token through, once with the server's own credential."""
    student_token, own_credential = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    received = []
    for mode, passthrough in (("passthrough", True), ("own token", False)):
        seen: list[str] = []
        async with _backup_service(seen) as backup:
            server = build_sync_server(backup, passthrough=passthrough, own_credential=own_credential)
            async with (
                serve_http("streamable-http", server=server, token=student_token) as url,
                teaching_client(url, auth=student_token) as client,
            ):
                await client.call_tool("sync_note", {"title": "shopping"})
        for header in seen:
            sent = header.removeprefix("Bearer ")
            whose = {student_token: "the student's token", own_credential: "the server's own credential"}
            shown = redact_headers({"authorization": header})["authorization"]
            received.append(Received(mode, shown, whose.get(sent, "something else")))
    return received
