"""Lesson 01: hand-written JSON-RPC to a calculator in this kernel, one fresh connection per ``async with``.

Why it exists: version negotiation is the same on every transport, and lesson 01 probes it on many
fresh connections. Over stdio each connection is a new server process (about a second to start);
here it is a fresh calculator served in the kernel, with the same interface as
:class:`mcp_teach.wire.raw_stdio.RawStdioServer` (``send``, ``receive``, ``exchange``, ``capture``)::

    async with RawMemoryServer() as server:
        reply = await server.exchange({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {...}})

Each dict is read exactly as the stdio server reads a line (:class:`mcp_teach.transports.stdio_loop.LineReader`:
the same refusals for an unreadable line or a request of neither era),
then handed to the server's own serving loop (the mcp SDK's ``Server.run``, the loop fastmcp's in-memory
client transport and our stdio server drive too); replies come back as the JSON objects a stdio server
would write.
"""

from __future__ import annotations

from collections import deque
from contextlib import AsyncExitStack
from typing import Any

import anyio
from fastmcp import FastMCP
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage

from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.frames import Rejected
from mcp_teach.transports.stdio_loop import LineReader
from mcp_teach.wire.messages import wire_dict
from mcp_teach.wire.raw_stdio import RawConnection


class RawMemoryServer(RawConnection):
    """A fresh calculator (or ``server``) on a new in-memory connection, spoken to in plain JSON-RPC dicts.

    Everything sent and received is kept in :attr:`capture`. Leaving the ``async with`` block ends the
    connection, as closing a stdio server's stdin would.
    """

    #: How long to wait for a reply before deciding the server sent none (nothing to start here).
    reply_timeout = 5.0
    notification_wait = 0.05

    def __init__(self, server: FastMCP | None = None) -> None:
        super().__init__()
        self.server = server
        self._stack: AsyncExitStack | None = None
        self._read_stream: Any = None
        self._write_stream: Any = None
        self._rejections: deque[dict[str, Any]] = deque()
        self._reader = LineReader()

    async def __aenter__(self) -> RawMemoryServer:
        server = self.server or build_calculator_server()
        self._reader = LineReader()  # a new connection: no handshake seen yet
        lowlevel = server._mcp_server  # what FastMCP serves; our stdio loop runs the same object
        stack = AsyncExitStack()
        async with stack:
            client_streams, (server_read, server_write) = await stack.enter_async_context(
                create_client_server_memory_streams()
            )
            await stack.enter_async_context(server._lifespan_manager())
            tasks = await stack.enter_async_context(anyio.create_task_group())
            tasks.start_soon(lowlevel.run, server_read, server_write, lowlevel.create_initialization_options())
            stack.callback(tasks.cancel_scope.cancel)
            self._read_stream, self._write_stream = client_streams
            self._stack = stack.pop_all()
        self._open = True
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        self._require_open()
        stack, self._stack, self._open = self._stack, None, False
        return await stack.__aexit__(*exc_info)

    async def _write(self, line: str) -> None:
        """Read ``line`` as the stdio server reads one, then hand it to the server."""
        checked = self._reader.read(line.encode())
        if isinstance(checked, Rejected):  # answered as the stdio server answers it (an unreadable line, no era)
            self._rejections.append(checked.reply.model_dump(by_alias=True, mode="json", exclude_unset=True))
            return
        await self._write_stream.send(SessionMessage(checked))

    async def _read(self, timeout: float) -> dict[str, Any] | None:
        if self._rejections:
            return self._rejections.popleft()
        message = None
        with anyio.move_on_after(timeout):
            while message is None:  # the server sends SessionMessages only; anything else is skipped
                item = await self._read_stream.receive()
                message = wire_dict(item) if isinstance(item, SessionMessage) else None
        return message
