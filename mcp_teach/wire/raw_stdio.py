"""Talk to the stdio server with hand-written JSON-RPC lines, no MCP library in between.

Lessons use it to send what a well-behaved client never would (an unknown
protocol version, malformed JSON, an unknown method) and to look at the
server's exact reply::

    async with RawStdioServer() as server:
        replies = await server.exchange({"jsonrpc": "2.0", "id": 1, "method": "ping"})
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from mcp_teach.transports.in_process import PLAIN_LOGS, STDIO_LOG, STDIO_SERVER_ARGS, bounded_log
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture, WireMessage, json_or_none

#: How long to wait for a reply line before deciding the server sent none: long enough for a server to start
#: on a busy machine (a reply that comes sooner ends the wait at once).
REPLY_TIMEOUT = 30.0
#: How long a server whose stdin was closed may take to exit before it is killed (busy machine included).
EXIT_TIMEOUT = 30.0


class RawConnection:
    """What both raw servers share: plain JSON-RPC dicts (or exact lines) in and out, all kept in :attr:`capture`.

    A subclass says how one line reaches the server (``_write``) and how its next reply comes back (``_read``).
    """

    #: The default wait for a reply; for a notification only ``notification_wait``, since none comes.
    reply_timeout = REPLY_TIMEOUT
    notification_wait = 0.3

    def __init__(self) -> None:
        self.capture = Capture()
        self._open = False

    def _require_open(self) -> None:
        if not self._open:
            raise RuntimeError(f"use 'async with {type(self).__name__}() as server:' first")

    async def _write(self, line: str) -> None:
        raise NotImplementedError

    async def _read(self, timeout: float) -> dict[str, Any] | None:
        raise NotImplementedError

    async def send(self, message: dict[str, Any] | str) -> None:
        """Send one message: a dict as the JSON object it is, a str as the exact text of a stdio line."""
        self._require_open()
        line = message if isinstance(message, str) else json.dumps(message, separators=(",", ":"))
        self.capture.messages.append(WireMessage(CLIENT_TO_SERVER, as_object(line), anyio.current_time()))
        await self._write(line)

    async def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next message from the server as a dict, or ``None`` if none came in time."""
        self._require_open()
        message = await self._read(self.reply_timeout if timeout is None else timeout)
        if message is not None:
            self.capture.messages.append(WireMessage(SERVER_TO_CLIENT, message, anyio.current_time()))
        return message

    async def exchange(self, message: dict[str, Any] | str, timeout: float | None = None) -> dict[str, Any] | None:
        """Send one message and return the server's reply (``None`` for a notification: none comes)."""
        await self.send(message)
        return await self.receive(timeout if expects_reply(message) else self.notification_wait)


class RawStdioServer(RawConnection):
    """``python -m mcp_teach.serve --transport stdio`` as a subprocess with raw pipes.

    Everything written and read is kept in :attr:`capture` (lines that are not
    JSON objects are kept as ``{"raw": "<text>"}``).
    """

    def __init__(self, log_file: Path = STDIO_LOG) -> None:
        super().__init__()
        self.log_file = log_file
        self._process: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> RawStdioServer:
        with bounded_log(self.log_file).open("a") as log:
            pipes = {"stdin": asyncio.subprocess.PIPE, "stdout": asyncio.subprocess.PIPE, "stderr": log}
            command = [sys.executable, *STDIO_SERVER_ARGS]
            self._process = await asyncio.create_subprocess_exec(*command, env={**os.environ, **PLAIN_LOGS}, **pipes)
        self._open = True
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self._require_open()
        process = self._process
        if process.stdin and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=EXIT_TIMEOUT)
        except TimeoutError:
            process.kill()
            await process.wait()

    async def _write(self, line: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(line.encode() + b"\n")
        await self._process.stdin.drain()

    async def _read(self, timeout: float) -> dict[str, Any] | None:
        assert self._process is not None and self._process.stdout is not None
        try:
            line = await asyncio.wait_for(self._process.stdout.readline(), timeout)
        except TimeoutError:
            return None
        return as_object(line.decode().rstrip("\n")) if line else None

    async def receive_all(self, timeout: float = REPLY_TIMEOUT, quiet: float = 0.5) -> list[dict[str, Any]]:
        """Every line the server sends: the first within ``timeout``, then until it is quiet for ``quiet`` seconds."""
        replies = []
        wait = timeout
        while (reply := await self.receive(wait)) is not None:
            replies.append(reply)
            wait = quiet
        return replies


def expects_reply(message: dict[str, Any] | str) -> bool:
    """False for a notification (a method and no id): nothing comes back for it."""
    return not (isinstance(message, dict) and "method" in message and "id" not in message)


def as_object(line: str) -> dict[str, Any]:
    """One line as the capture keeps it: a JSON object, or ``{"raw": line}`` for anything else."""
    value = json_or_none(line)
    return value if isinstance(value, dict) else {"raw": line}
