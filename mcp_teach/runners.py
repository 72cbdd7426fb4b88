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

import anyio
import uvicorn
from fastmcp import FastMCP
from fastmcp.client.transports import StdioTransport
from fastmcp.utilities.logging import temporary_log_level
from starlette.middleware import Middleware

from mcp_teach.class_token import ClassTokenMiddleware
from mcp_teach.http_guard import json_rpc_guard
from mcp_teach.server import build_calculator_server
from mcp_teach.stdio_server import serve_stdio

Transport = Literal["stdio", "sse", "streamable-http"]
HttpTransport = Literal["sse", "streamable-http"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "sse", "streamable-http")
LOOPBACK = "127.0.0.1"
#: Bind addresses meaning "every interface".
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
DEFAULT_PATHS: dict[HttpTransport, str] = {"sse": "/sse", "streamable-http": "/mcp"}
#: How long leaving a :func:`serve_http` block waits for uvicorn's shutdown (2 s of it for open connections).
STOP_SECONDS = 5.0
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


def allowed_hosts(host: str) -> list[str] | None:
    """The ``Host`` headers a server bound to ``host`` accepts (fastmcp's guard; None: any).

    A server bound to one address answers requests for that address (and, on
    loopback, for ``localhost``); anything else is a DNS-rebinding attempt
    and gets 421. A server on every interface (``0.0.0.0``, ``::``) is reached
    by whatever IP or name the students use, which it cannot know: it accepts
    any ``Host`` except on loopback connections, which fastmcp still checks.
    Protect such a server with a class token.
    """
    return None if host in WILDCARD_HOSTS else [host]


def guarded_http_app(
    server: FastMCP,
    transport: HttpTransport,
    path: str,
    host: str,
    token: str | None = None,
    stateless: bool = False,
):
    """The server's ASGI app: Host/Origin checks (see :func:`allowed_hosts`), bad bodies answered (:mod:`.http_guard`).

    With ``token`` every request also needs ``Authorization: Bearer <token>`` (:mod:`.class_token`); the
    Host/Origin guard stays in front of it, so a bad Host or Origin is refused before the token is looked at.
    ``stateless`` (streamable HTTP only) keeps no session between requests (see :mod:`.class_server`).
    """
    token_check = [Middleware(ClassTokenMiddleware, token=token)] if token else []
    return server.http_app(
        path=path,
        transport=transport,
        stateless_http=stateless,
        host_origin_protection="auto",
        allowed_hosts=allowed_hosts(host),
        middleware=[*token_check, json_rpc_guard(transport, path)],
    )


class _InProcessServer(uvicorn.Server):
    """A uvicorn server that leaves signal handling to the host (kernel, test runner)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def stop_in_process_server(server: uvicorn.Server, task: asyncio.Task[None], sock: socket.socket) -> None:
    """Stop ``server`` (served by ``task`` on ``sock``) and return once it is down: port closed, lifespan ended.

    Runs to the end even if the caller is cancelled meanwhile (a second interrupt, an anyio timeout round
    the block): leaving early would leave the server running with its socket closed under it. That
    cancellation is raised once the server is down. A server still running after :data:`STOP_SECONDS`
    is cancelled.
    """
    server.should_exit = True
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_SECONDS
    cancelled: asyncio.CancelledError | None = None
    with anyio.CancelScope(shield=True):  # holds off anyio cancel scopes; asyncio's task.cancel() gets through
        while not task.done():
            remaining = deadline - loop.time()
            if remaining <= 0:
                task.cancel()
            try:
                await asyncio.wait({task}, timeout=remaining if remaining > 0 else None)
            except asyncio.CancelledError as error:
                cancelled = error
    sock.close()
    if cancelled is not None:
        raise cancelled
    if not task.cancelled():
        task.result()  # re-raises why the server failed


@contextlib.asynccontextmanager
async def serve_http(
    transport: HttpTransport = "streamable-http",
    *,
    server: FastMCP | None = None,
    host: str = LOOPBACK,
    port: int = 0,
    path: str | None = None,
    token: str | None = None,
) -> AsyncIterator[str]:
    """Serve ``server`` (default: a fresh calculator) over HTTP until the block exits.

    Yields the URL once the server accepts connections::

        async with serve_http("sse") as url:
            async with Client(url) as client: ...

    With ``token``, clients must send it: ``Client(url, auth=token)``.
    """
    if transport not in DEFAULT_PATHS:
        raise ValueError(f"serve_http serves 'sse' or 'streamable-http', not {transport!r}")
    path = path or DEFAULT_PATHS[transport]
    app = guarded_http_app(server or build_calculator_server(), transport, path, host, token)
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
        await stop_in_process_server(uvicorn_server, task, sock)


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
    token: str | None = None,
    workers: int = 1,
    stateless: bool = False,
) -> None:
    """Run the calculator until Ctrl-C or SIGTERM, then return normally.

    stdio: only JSON-RPC is written to stdout, every line answered (see :mod:`mcp_teach.stdio_server`);
    logs go to stderr.
    HTTP: the URL to connect to is printed on stderr first (never the ``token``, which clients must send).
    ``workers`` > 1 serves streamable HTTP from that many processes, each with its own fresh calculator;
    ``stateless`` keeps no session between requests (see :mod:`mcp_teach.class_server`).
    """
    from mcp_teach import class_server  # here, not at the top: class_server imports this module

    if token and transport == "stdio":
        raise ValueError("a class token protects the HTTP transports; stdio has no requests to check it on")
    class_server.check_class_mode(transport, workers, stateless)
    if server is not None and workers > 1:
        raise ValueError("each worker builds its own calculator: pass no server object with workers > 1")
    server = server or build_calculator_server()
    stop_on_sigterm()
    with contextlib.suppress(KeyboardInterrupt):
        if transport == "stdio":
            with temporary_log_level("WARNING"):
                anyio.run(serve_stdio, server)
            return
        path = path or DEFAULT_PATHS[transport]
        sock = bind_socket(host, port)
        # Listen before announcing the URL: a client that connects as soon as it reads it is queued, not refused.
        sock.listen(2048)
        url = server_url(host, sock.getsockname()[1], path)
        needs = "class token required; " if token else ""
        mode = class_server.describe_mode(workers, stateless)
        announce = f"mcp-teach calculator: {transport} on {url}  ({mode}{needs}Ctrl-C stops it)"
        print(announce, file=sys.stderr, flush=True)
        if workers > 1:
            settings = class_server.AppSettings(transport, path, host, stateless, token)
            class_server.serve_workers(sock, settings, workers)
            return
        app = guarded_http_app(server, transport, path, host, token, stateless)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2)
        uvicorn.Server(config).run(sockets=[sock])
