"""A fresh calculator reachable over any of the course's four kinds of connection."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Literal

from mcp_teach.runners import serve_http, stdio_transport
from mcp_teach.server import build_calculator_server

Connection = Literal["in-memory", "stdio", "sse", "streamable-http"]
CONNECTIONS: tuple[Connection, ...] = ("in-memory", "stdio", "sse", "streamable-http")


@contextlib.asynccontextmanager
async def calculator_target(connection: Connection) -> AsyncIterator[Any]:
    """Yield what ``teaching_client``/``CaptureTransport`` connect to; servers stop when the block ends.

    in-memory: the server object; stdio: a transport that spawns the server;
    sse / streamable-http: the URL of an in-process server on 127.0.0.1.
    """
    if connection in ("sse", "streamable-http"):
        async with serve_http(connection) as url:
            yield url
    elif connection == "stdio":
        yield stdio_transport()
    elif connection == "in-memory":
        yield build_calculator_server()
    else:
        raise ValueError(f"unknown connection {connection!r}: choose one of {', '.join(CONNECTIONS)}")
