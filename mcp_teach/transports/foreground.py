"""Serve an MCP server from a terminal until Ctrl-C or SIGTERM (``python -m mcp_teach.serve``, ``mcp-teach serve``).

A stdio client starts a server for every connection, so the stdio path imports only what it runs
(:mod:`.stdio_loop`); the HTTP modules are imported when an HTTP server starts.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import signal
import socket
import sys

import anyio
import uvicorn
from fastmcp import FastMCP
from fastmcp.utilities.logging import temporary_log_level

from mcp_teach.config import LOOPBACK, Transport
from mcp_teach.servers.by_name import DEFAULT_SERVER, build_server
from mcp_teach.transports.options import check_class_mode, describe_mode
from mcp_teach.transports.stdio_loop import serve_stdio


def stop_on_sigterm() -> None:
    """Make SIGTERM end a terminal server the way Ctrl-C does: cleanly, exit code 0."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


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
    server_name: str = DEFAULT_SERVER,
) -> None:
    """Run a server until Ctrl-C or SIGTERM, then return normally: ``server``, or a fresh one named ``server_name``
    in :mod:`mcp_teach.servers.by_name` (the calculator by default).

    stdio: only JSON-RPC is written to stdout, every line answered (see :mod:`.stdio_loop`); logs go to stderr.
    HTTP: the URL to connect to is printed on stderr first (never the ``token``, which clients must send).
    ``workers`` > 1 serves streamable HTTP from that many processes, each building its own ``server_name``;
    ``stateless`` keeps no session between requests (see :mod:`.class_mode`).
    """
    if token and transport == "stdio":
        raise ValueError("a class token protects the HTTP transports; stdio has no requests to check it on")
    check_class_mode(transport, workers, stateless)
    if server is not None and workers > 1:
        raise ValueError("each worker builds its own server: pass server_name, not a server object, with workers > 1")
    server = server or build_server(server_name)
    stop_on_sigterm()
    with contextlib.suppress(KeyboardInterrupt):
        if transport == "stdio":
            with temporary_log_level("WARNING"):
                anyio.run(serve_stdio, server)
            return
        # Imported here, not above: a stdio server (one per connection) would load them for nothing.
        from mcp_teach.transports import class_mode
        from mcp_teach.transports.http_app import DEFAULT_PATHS, guarded_http_app
        from mcp_teach.transports.sockets import QUIET_UVICORN, bind_socket, server_url

        path = path or DEFAULT_PATHS[transport]
        sock = bind_socket(host, port)
        # Listen before announcing the URL: a client that connects as soon as it reads it is queued, not refused.
        sock.listen(2048)
        url = server_url(host, sock.getsockname()[1], path)
        needs = "class token required; " if token else ""
        announce = f"mcp-teach {server_name}: {transport} on {url}  ({describe_mode(workers, stateless)}{needs}"
        announce += "Ctrl-C stops it)"
        if workers > 1:
            print(announce, file=sys.stderr, flush=True)
            settings = class_mode.AppSettings(transport, path, host, stateless, token, server_name)
            class_mode.serve_workers(sock, settings, workers)
            return
        app = guarded_http_app(server, transport, path, host, token, stateless)
        config = uvicorn.Config(app, lifespan="on", **QUIET_UVICORN)
        # Under anyio.run, as fastmcp's own run() serves: sniffio then knows the event loop for the whole run, not
        # once per request (27 k fewer instructions per tools/call; benchmarks/http_call_instructions.py).
        anyio.run(functools.partial(AnnouncingServer(config, announce).serve, sockets=[sock]))


class AnnouncingServer(uvicorn.Server):
    """Prints ``announce`` once started: uvicorn's Ctrl-C handling is in place by then. A Ctrl-C sent the moment the
    line appeared used to land before it, and was lost where Ctrl-C starts ignored (a shell's background job).

    Started, it freezes what exists (``gc.freeze()``: modules, the server, its tools live as long as the process), so
    the garbage collector's full passes skip those ~110 k objects: with 100 clients they took 3.3 s of CPU per 5,000
    calls, 1.2 s frozen, and the longest pause, which every request then in flight waits out, fell from 130 to 57 ms.
    """

    def __init__(self, config: uvicorn.Config, announce: str) -> None:
        super().__init__(config)
        self.announce = announce

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            gc.freeze()
            print(self.announce, file=sys.stderr, flush=True)
