"""Start the calculator server on any transport: from a terminal or in-process.

- :func:`run_server` blocks, for ``python -m mcp_teach.server`` / ``mcp-teach serve``.
- :func:`serve_http` is an async context manager that serves SSE or streamable
  HTTP on a free loopback port inside the current event loop (a notebook or a
  test) and yields the URL.
- :func:`stdio_transport` builds a client transport that spawns the server as a
  subprocess and works inside Jupyter and under nbval.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Literal

import uvicorn
from fastmcp import FastMCP
from fastmcp.client.transports import StdioTransport

from mcp_teach.server import build_calculator_server

Transport = Literal["stdio", "sse", "streamable-http"]
HttpTransport = Literal["sse", "streamable-http"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "sse", "streamable-http")
LOOPBACK = "127.0.0.1"
DEFAULT_PATHS: dict[HttpTransport, str] = {"sse": "/sse", "streamable-http": "/mcp"}
#: Where stdio servers started by :func:`stdio_transport` write their logs.
STDIO_LOG = Path(tempfile.gettempdir()) / "mcp-teach-stdio-server.log"


def bind_socket(host: str = LOOPBACK, port: int = 0) -> socket.socket:
    """A listening-ready TCP socket (TCP_NODELAY on, as uvicorn sets it); port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def server_url(host: str, port: int, path: str) -> str:
    """The URL a client connects to."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def _http_app(server: FastMCP, transport: HttpTransport, path: str, host: str):
    """The server's ASGI app with Host/Origin checks on for loopback binds."""
    return server.http_app(
        path=path,
        transport=transport,
        host_origin_protection="auto",
        allowed_hosts=[host],
    )


class _InProcessServer(uvicorn.Server):
    """A uvicorn server that leaves signal handling to the host (kernel, test runner)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def serve_http(
    transport: HttpTransport = "streamable-http",
    *,
    server: FastMCP | None = None,
    host: str = LOOPBACK,
    port: int = 0,
    path: str | None = None,
) -> AsyncIterator[str]:
    """Serve ``server`` (default: a fresh calculator) over HTTP until the block exits.

    Yields the URL once the server accepts connections::

        async with serve_http("sse") as url:
            async with Client(url) as client: ...
    """
    if transport not in DEFAULT_PATHS:
        raise ValueError(f"serve_http serves 'sse' or 'streamable-http', not {transport!r}")
    path = path or DEFAULT_PATHS[transport]
    app = _http_app(server or build_calculator_server(), transport, path, host)
    sock = bind_socket(host, port)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2)
    uvicorn_server = _InProcessServer(config)
    task = asyncio.create_task(uvicorn_server.serve(sockets=[sock]))
    try:
        while not uvicorn_server.started:
            if task.done():
                task.result()  # re-raises why the server could not start
                raise RuntimeError("the HTTP server stopped before it accepted connections")
            await asyncio.sleep(0.005)
        yield server_url(host, sock.getsockname()[1], path)
    finally:
        uvicorn_server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        except TimeoutError:
            uvicorn_server.force_exit = True
            await task
        finally:
            sock.close()


def stdio_transport(*, log_file: Path | None = None, keep_alive: bool = False) -> StdioTransport:
    """A client transport that runs ``python -m mcp_teach.server`` over stdio.

    The server's stderr goes to ``log_file`` (default :data:`STDIO_LOG`): a
    kernel run by nbval has no real stderr to hand to a subprocess. With
    ``keep_alive=False`` every ``async with Client(...)`` starts a fresh
    server, so every block shows its own handshake.
    """
    return StdioTransport(
        sys.executable,
        ["-m", "mcp_teach.server", "--transport", "stdio"],
        log_file=log_file or STDIO_LOG,
        keep_alive=keep_alive,
    )


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def stop_on_sigterm() -> None:
    """Make SIGTERM end a terminal server the way Ctrl-C does: cleanly, exit code 0."""
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)


def run_server(
    transport: Transport = "stdio",
    *,
    host: str = LOOPBACK,
    port: int = 8000,
    path: str | None = None,
    server: FastMCP | None = None,
) -> None:
    """Run the calculator until Ctrl-C or SIGTERM, then return normally.

    stdio: only JSON-RPC is written to stdout; logs go to stderr.
    HTTP: the URL to connect to is printed on stderr first.
    """
    server = server or build_calculator_server()
    stop_on_sigterm()
    with contextlib.suppress(KeyboardInterrupt):
        if transport == "stdio":
            server.run("stdio", show_banner=False, log_level="WARNING")
            return
        path = path or DEFAULT_PATHS[transport]
        sock = bind_socket(host, port)
        # Listen before announcing the URL: a client that connects as soon as it reads it is queued, not refused.
        sock.listen(2048)
        url = server_url(host, sock.getsockname()[1], path)
        print(f"mcp-teach calculator: {transport} on {url}  (Ctrl-C stops it)", file=sys.stderr, flush=True)
        app = _http_app(server, transport, path, host)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2)
        uvicorn.Server(config).run(sockets=[sock])
