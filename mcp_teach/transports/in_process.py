"""Serve an MCP server inside the running event loop (a notebook, a test), or spawn one over stdio.

- :func:`serve_http` is an async context manager that serves SSE or streamable
  HTTP on a free loopback port inside the current event loop and yields the URL.
- :func:`stdio_transport` builds a client transport that spawns the server as a
  subprocess and works inside Jupyter and under nbval.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import uvicorn
from fastmcp import FastMCP
from fastmcp.client.transports import StdioTransport
from starlette.types import ASGIApp

from mcp_teach.config import LOOPBACK
from mcp_teach.private_files import make_private, rotate_if_over
from mcp_teach.servers.by_name import DEFAULT_SERVER, SERVER_NAMES
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.http_app import DEFAULT_PATHS, HttpTransport, guarded_http_app
from mcp_teach.transports.sockets import QUIET_UVICORN, bind_socket, server_url

#: How long leaving a :func:`serve_http` block waits for uvicorn's shutdown (2 s of it for open connections).
STOP_SECONDS = 5.0


def user_log_folder() -> Path:
    """The current user's own folder for logs: ``%LOCALAPPDATA%\\mcp-teach\\logs`` on Windows, else
    ``$XDG_STATE_HOME/mcp-teach`` (by default ``~/.local/state/mcp-teach``).

    Not the shared temporary folder: there another user could read the log, or plant a link under its
    well-known name that the next server would write through.
    """
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "mcp-teach" / "logs"
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "mcp-teach"


#: Where stdio servers started by :func:`stdio_transport` write their logs.
STDIO_LOG = user_log_folder() / "stdio-server.log"
#: A log over this size is moved to ``<name>.1`` (replacing the older one) before a server writes to it.
STDIO_LOG_LIMIT = 1024 * 1024
#: What a stdio server started here gets in its environment: plain log lines (no rich boxes or colours) in its log.
PLAIN_LOGS = {"FASTMCP_ENABLE_RICH_LOGGING": "false", "NO_COLOR": "1"}
#: The arguments after ``python`` that start the course's stdio server.
STDIO_SERVER_ARGS = ("-m", "mcp_teach.serve", "--transport", "stdio")


def bounded_log(path: Path = STDIO_LOG) -> Path:
    """``path``, first moved aside if it has grown past :data:`STDIO_LOG_LIMIT` (every lesson run appends to it),
    then created (mode 0600) or checked: a regular file, not a symbolic link, made private.

    The server process opens the log by name afterwards; what it finds there is the file checked here.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    rotate_if_over(path, STDIO_LOG_LIMIT)
    try:
        return make_private(path)
    except OSError as error:  # ELOOP: a symbolic link; ENXIO: a FIFO nobody reads
        why = f"the server log {path} cannot be opened as a regular file ({error.strerror or error})"
        raise OSError(error.errno, f"{why}: remove it, or pass log_file=") from None


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
async def serve_asgi(app: ASGIApp, sock: socket.socket | None = None, *, lifespan: str = "on") -> AsyncIterator[int]:
    """Serve any ASGI ``app`` with uvicorn inside the running event loop until the block exits; yields the port.

    ``sock``: a socket bound already (:func:`~mcp_teach.transports.sockets.bind_socket`), for an app that must
    know its own URL before it is built (an OAuth server puts it in its metadata); default a free loopback port.
    """
    sock = sock or bind_socket()
    uvicorn_server = _InProcessServer(uvicorn.Config(app, lifespan=lifespan, **QUIET_UVICORN))
    task = asyncio.create_task(uvicorn_server.serve(sockets=[sock]))
    try:
        while not uvicorn_server.started:
            if task.done():
                task.result()  # re-raises why the server could not start
                raise RuntimeError("the HTTP server stopped before it accepted connections")
            await asyncio.sleep(0.005)
        yield sock.getsockname()[1]
    finally:
        await stop_in_process_server(uvicorn_server, task, sock)


@contextlib.asynccontextmanager
async def serve_http(
    transport: HttpTransport = "streamable-http",
    *,
    server: FastMCP | None = None,
    host: str = LOOPBACK,
    port: int = 0,
    path: str | None = None,
    token: str | None = None,
    stateless: bool = False,
) -> AsyncIterator[str]:
    """Serve ``server`` (default: a fresh calculator) over HTTP until the block exits.

    Yields the URL once the server accepts connections::

        async with serve_http("sse") as url:
            async with Client(url) as client: ...

    With ``token``, clients must send it: ``Client(url, auth=token)``. ``stateless`` (streamable HTTP):
    no sessions, as in the large-class mode.
    """
    if transport not in DEFAULT_PATHS:
        raise ValueError(f"serve_http serves 'sse' or 'streamable-http', not {transport!r}")
    path = path or DEFAULT_PATHS[transport]
    app = guarded_http_app(server or build_calculator_server(), transport, path, host, token, stateless)
    async with serve_asgi(app, bind_socket(host, port)) as bound:
        yield server_url(host, bound, path)


def stdio_transport(
    *, log_file: Path | None = None, keep_alive: bool = False, server: str = DEFAULT_SERVER
) -> StdioTransport:
    """A client transport that runs ``python -m mcp_teach.serve`` over stdio.

    The server's stderr goes to ``log_file`` (default :data:`STDIO_LOG`): a
    kernel run by nbval has no real stderr to hand to a subprocess. With
    ``keep_alive=False`` every ``async with Client(...)`` starts a fresh
    server, so every block shows its own handshake. ``server`` names the course
    server to run (``--server``, :data:`~mcp_teach.servers.by_name.SERVER_NAMES`);
    the default, the calculator, adds no option to the command line.
    """
    if server not in SERVER_NAMES:
        raise ValueError(f"unknown server {server!r}: choose one of {', '.join(SERVER_NAMES)}")
    choice = [] if server == DEFAULT_SERVER else ["--server", server]
    # env: merged over the mcp SDK's safe default environment.
    command, log_file = [*STDIO_SERVER_ARGS, *choice], log_file or bounded_log()
    return StdioTransport(sys.executable, command, env=PLAIN_LOGS, log_file=log_file, keep_alive=keep_alive)
