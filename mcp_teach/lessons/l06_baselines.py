"""Two floors under MCP's latency (lesson 06): a JSON line echoed through a pipe, and a POST echoed over HTTP.

Neither involves MCP: they show what the stdio and HTTP transports cannot go below on this machine.
Every sample is in milliseconds, timed with ``time.perf_counter_ns``.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2

from mcp_teach.lessons.l06_calls import CALL_ARGUMENTS, CALL_TOOL
from mcp_teach.transports.in_process import serve_asgi
from mcp_teach.transports.sockets import server_url

#: The echo child of :func:`pipe_echo_baseline`: copies each line from stdin to stdout, nothing else.
_ECHO_SCRIPT = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"""


def pipe_echo_baseline(lines: int = 2000, *, warmup: int = 200, line: str | None = None) -> list[float]:
    """Milliseconds for one JSON line to go through a pipe to a plain Python process and back.

    The child only copies stdin to stdout: no MCP, no JSON parsing, no asyncio.
    This is the floor under stdio: pipes and two process switches. ``line`` defaults
    to a ``tools/call`` request like the one the client sends.
    """
    payload = ((line or _sample_request_line()).rstrip("\n") + "\n").encode()
    child = subprocess.Popen([sys.executable, "-c", _ECHO_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        samples = []
        for index in range(warmup + lines):
            start = time.perf_counter_ns()
            child.stdin.write(payload)
            child.stdin.flush()
            echoed = child.stdout.readline()
            elapsed = (time.perf_counter_ns() - start) / 1e6
            if echoed != payload:
                raise RuntimeError(f"the echo process sent back {echoed[:80]!r}")
            if index >= warmup:
                samples.append(elapsed)
        child.stdin.close()
        child.wait(timeout=10)
        return samples
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()


def _sample_request_line() -> str:
    """A ``tools/call`` request shaped like the one fastmcp sends (compact JSON, one line)."""
    message = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": CALL_TOOL, "arguments": CALL_ARGUMENTS, "_meta": {"progressToken": 3}},
    }
    return json.dumps(message, separators=(",", ":"))


async def _echo_app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """The smallest useful ASGI app: answers every POST with its own body."""
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextlib.asynccontextmanager
async def _serve_echo() -> AsyncIterator[str]:
    """Serve :func:`_echo_app` on 127.0.0.1 inside the current event loop; yields its URL."""
    async with serve_asgi(_echo_app, lifespan="off") as port:
        yield server_url("127.0.0.1", port, "/echo")


async def http_echo_baseline(requests: int = 200, *, warmup: int = 50, line: str | None = None) -> list[float]:
    """Milliseconds for one JSON POST to a trivial HTTP server on 127.0.0.1 and back: HTTP without MCP.

    Same HTTP client library (``httpx2``) and server (uvicorn, in this process) as
    the course's SSE and streamable-HTTP connections; the app just echoes the body.
    """
    payload = (line or _sample_request_line()).encode()
    headers = {"content-type": "application/json", "accept": "application/json"}
    samples = []
    async with _serve_echo() as url, httpx2.AsyncClient() as client:
        for index in range(warmup + requests):
            start = time.perf_counter_ns()
            response = await client.post(url, content=payload, headers=headers)
            elapsed = (time.perf_counter_ns() - start) / 1e6
            if response.content != payload:
                raise RuntimeError(f"the echo server answered {response.status_code} {response.content[:80]!r}")
            if index >= warmup:
                samples.append(elapsed)
    return samples
