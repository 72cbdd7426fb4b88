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

from mcp_teach.transports.in_process import PLAIN_LOGS, STDIO_LOG, bounded_log
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture, WireMessage

#: How long to wait for a reply line before deciding the server sent none: long enough for a server to start
#: on a busy machine (a reply that comes sooner ends the wait at once).
REPLY_TIMEOUT = 30.0


class RawStdioServer:
    """``python -m mcp_teach.serve --transport stdio`` as a subprocess with raw pipes.

    Everything written and read is kept in :attr:`capture` (lines that are not
    JSON objects are kept as ``{"raw": "<text>"}``).
    """

    def __init__(self, log_file: Path = STDIO_LOG) -> None:
        self.log_file = log_file
        self.capture = Capture()
        self._process: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> RawStdioServer:
        with bounded_log(self.log_file).open("a") as log:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "mcp_teach.serve",
                "--transport",
                "stdio",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env={**os.environ, **PLAIN_LOGS},
            )
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        process = self._require_process()
        if process.stdin and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=5)
        except TimeoutError:
            process.kill()
            await process.wait()

    def _require_process(self) -> asyncio.subprocess.Process:
        if self._process is None:
            raise RuntimeError("use 'async with RawStdioServer() as server:' first")
        return self._process

    async def send(self, message: dict[str, Any] | str) -> None:
        """Write one line: a dict is encoded as JSON, a str is sent exactly as given."""
        process = self._require_process()
        line = message if isinstance(message, str) else json.dumps(message, separators=(",", ":"))
        self.capture.messages.append(WireMessage(CLIENT_TO_SERVER, as_object(line), _now()))
        assert process.stdin is not None
        process.stdin.write(line.encode() + b"\n")
        await process.stdin.drain()

    async def receive(self, timeout: float = REPLY_TIMEOUT) -> dict[str, Any] | None:
        """The next line from the server as a dict, or ``None`` if none came in time."""
        process = self._require_process()
        assert process.stdout is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), timeout)
        except TimeoutError:
            return None
        if not line:
            return None
        message = as_object(line.decode().rstrip("\n"))
        self.capture.messages.append(WireMessage(SERVER_TO_CLIENT, message, _now()))
        return message

    async def receive_all(self, timeout: float = REPLY_TIMEOUT, quiet: float = 0.5) -> list[dict[str, Any]]:
        """Every line the server sends: the first within ``timeout``, then until it is quiet for ``quiet`` seconds."""
        replies = []
        wait = timeout
        while (reply := await self.receive(wait)) is not None:
            replies.append(reply)
            wait = quiet
        return replies

    async def exchange(self, message: dict[str, Any] | str, timeout: float = REPLY_TIMEOUT) -> dict[str, Any] | None:
        """Send one line and return the server's reply (``None`` for a notification: none comes)."""
        await self.send(message)
        wait = timeout if expects_reply(message) else 0.3
        return await self.receive(wait)


def expects_reply(message: dict[str, Any] | str) -> bool:
    """False for a notification (a method and no id): nothing comes back for it."""
    return not (isinstance(message, dict) and "method" in message and "id" not in message)


def as_object(line: str) -> dict[str, Any]:
    """One line as the capture keeps it: a JSON object, or ``{"raw": line}`` for anything else."""
    try:
        value = json.loads(line)
    except ValueError:
        return {"raw": line}
    return value if isinstance(value, dict) else {"raw": line}


def _now() -> float:
    return asyncio.get_running_loop().time()
