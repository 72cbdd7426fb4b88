"""The course's client helpers: a fastmcp client with a fixed identity, and a calculator on any connection."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Literal

import mcp_types
from fastmcp import Client

from mcp_teach.servers.by_name import DEFAULT_SERVER, build_server
from mcp_teach.transports.in_process import serve_http, stdio_transport

#: Sent as ``clientInfo``; fixed by the package so captures do not change with fastmcp upgrades.
CLIENT_INFO = mcp_types.Implementation(name="mcp-teach-client", version="1.0.0")

Connection = Literal["in-memory", "stdio", "sse", "streamable-http"]
CONNECTIONS: tuple[Connection, ...] = ("in-memory", "stdio", "sse", "streamable-http")


def teaching_client(target: Any, *, mode: str = "auto", **kwargs: Any) -> Client:
    """``fastmcp.Client(target)`` with the course's ``clientInfo``.

    ``mode="legacy"`` speaks the 2025-11-25 ``initialize`` handshake; the
    default ``"auto"`` starts with the 2026-07-28 ``server/discover`` where the
    transport supports it (SSE always falls back to the handshake).
    """
    return Client(target, client_info=CLIENT_INFO, mode=mode, **kwargs)


@contextlib.asynccontextmanager
async def calculator_target(connection: Connection, *, server: str = DEFAULT_SERVER) -> AsyncIterator[Any]:
    """Yield what ``teaching_client``/``CaptureTransport`` connect to; servers stop when the block ends.

    in-memory: the server object; stdio: a transport that spawns the server;
    sse / streamable-http: the URL of an in-process server on 127.0.0.1.
    ``server`` names the course server (default the calculator; ``"knowledge"`` for lesson 07's).
    """
    if connection in ("sse", "streamable-http"):
        async with serve_http(connection, server=build_server(server)) as url:
            yield url
    elif connection == "stdio":
        yield stdio_transport(server=server)
    elif connection == "in-memory":
        yield build_server(server)
    else:
        raise ValueError(f"unknown connection {connection!r}: choose one of {', '.join(CONNECTIONS)}")
