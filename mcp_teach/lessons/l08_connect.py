"""Lesson 08: connect a fastmcp client to the low-level calculator, in this kernel or over stdio.

fastmcp 4's ``Client`` runs a ``FastMCP`` server or the SDK's high-level ``MCPServer`` in memory, but not a
bare low-level ``mcp.server.lowlevel.Server`` (``infer_transport`` does not recognise it). The mcp SDK's own
``mcp.client.Client(server)`` does accept one, but in the 2026-07-28 era it calls the handlers directly,
with no JSON-RPC in between, so there is nothing to capture. :class:`LowLevelMemoryTransport` is the
cleanest real connection: a pair of in-memory message streams and the server's own serving loop
(``Server.run``, the same loop fastmcp's in-memory transport and the stdio server drive), so
:class:`~mcp_teach.wire.capture.CaptureTransport` sees every message as it would on stdio::

    async with teaching_client(LowLevelMemoryTransport(build_lowlevel_calculator())) as client:
        await client.call_tool("calculator_add", {"a": 1, "b": 2})
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, Literal

import anyio
from fastmcp.client.transports import ClientTransport, StdioTransport
from fastmcp.client.transports.base import SessionKwargs, TransportOptions
from mcp import ClientSession
from mcp.server.lowlevel import Server
from mcp.shared.memory import create_client_server_memory_streams
from typing_extensions import Unpack

from mcp_teach.servers.lowlevel_calculator import build_lowlevel_calculator
from mcp_teach.transports.in_process import PLAIN_LOGS, bounded_log

#: The command that serves the low-level calculator over stdio (the SDK's own stdio server).
STDIO_COMMAND = (sys.executable, "-m", "mcp_teach.servers.lowlevel_calculator")


class LowLevelMemoryTransport(ClientTransport):
    """A fastmcp client transport to a low-level ``Server`` in this process, over in-memory message streams."""

    def __init__(self, server: Server[Any] | None = None, *, raise_exceptions: bool = False) -> None:
        self.server = server if server is not None else build_lowlevel_calculator()
        self.raise_exceptions = raise_exceptions

    @contextlib.asynccontextmanager
    async def connect_session(
        self,
        *,
        transport_options: TransportOptions | None = None,
        **session_kwargs: Unpack[SessionKwargs],
    ) -> AsyncGenerator[ClientSession, None]:
        options = transport_options or TransportOptions()
        server = self.server
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(
                lambda: server.run(
                    *server_streams, server.create_initialization_options(), raise_exceptions=self.raise_exceptions
                )
            )
            try:
                async with options.session_class(*client_streams, **session_kwargs) as session:
                    yield session
            finally:
                tasks.cancel_scope.cancel()

    def __repr__(self) -> str:
        return f"<LowLevelMemoryTransport(server='{self.server.name}')>"


def lowlevel_stdio_transport(*, log_file: Path | None = None, keep_alive: bool = False) -> StdioTransport:
    """A client transport that runs ``python -m mcp_teach.servers.lowlevel_calculator`` over stdio.

    The server's stderr goes to ``log_file`` (default: the course's stdio log), as for the calculator.
    """
    command, *args = STDIO_COMMAND
    return StdioTransport(command, args, env=PLAIN_LOGS, log_file=log_file or bounded_log(), keep_alive=keep_alive)


def lowlevel_target(connection: Literal["in-memory", "stdio"] = "in-memory") -> ClientTransport:
    """What ``teaching_client``/``CaptureTransport`` connect to for the low-level calculator."""
    if connection == "in-memory":
        return LowLevelMemoryTransport()
    if connection == "stdio":
        return lowlevel_stdio_transport()
    raise ValueError(f"unknown connection {connection!r}: choose 'in-memory' or 'stdio'")
