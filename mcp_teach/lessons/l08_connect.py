"""Lesson 08: a fastmcp client transport to a low-level ``Server`` in this process (the lesson writes it in a cell).

fastmcp's ``Client`` runs a ``FastMCP`` server or the SDK's ``MCPServer`` in memory, but not a bare
``mcp.server.lowlevel.Server``. This transport runs the server's own serving loop, ``Server.run``, on two in-memory
message streams, and builds the client's session from ``transport_options.session_class``: that is where
:class:`~mcp_teach.wire.capture.CaptureTransport` puts its recording session, so wrapping this transport records
every message, as for any other target. It captures nothing itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
from fastmcp.client.transports import ClientTransport
from fastmcp.client.transports.base import TransportOptions
from mcp import ClientSession
from mcp.server.lowlevel import Server
from mcp.shared.memory import create_client_server_memory_streams

from mcp_teach.servers.lowlevel_calculator import build_lowlevel_calculator


class LowLevelMemoryTransport(ClientTransport):
    """Connects a fastmcp client to a low-level ``Server`` in this kernel (default: the low-level calculator)."""

    def __init__(self, server: Server[Any] | None = None) -> None:
        self.server = server or build_lowlevel_calculator()

    @contextlib.asynccontextmanager
    async def connect_session(
        self, *, transport_options: TransportOptions | None = None, **session_kwargs: Any
    ) -> AsyncIterator[ClientSession]:
        options = transport_options or TransportOptions()  # CaptureTransport passes its recording session class
        server = self.server
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(lambda: server.run(*server_streams, server.create_initialization_options()))
            try:
                async with options.session_class(*client_streams, **session_kwargs) as session:
                    yield session
            finally:
                tasks.cancel_scope.cancel()
