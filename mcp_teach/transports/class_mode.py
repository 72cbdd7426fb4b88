"""Serve a large class: several uvicorn worker processes sharing one listening socket.

``mcp-teach serve --transport streamable-http --workers 4 --stateless`` runs
:func:`serve_workers`: uvicorn's process supervisor starts the workers, the
kernel hands each new connection to one of them, and Ctrl-C or SIGTERM stops
them all (a worker whose supervisor was killed outright stops by itself; one
that dies is replaced). A worker cannot receive the parent's app object, so each one builds
its own with :func:`worker_app` from an :class:`AppSettings` (pickled to the
worker, token included, never printed; the server by its ``--server`` name): same tools, Host/Origin guard,
JSON-RPC guard and class token as a single-process server.

Several workers need ``--stateless``: a 2025-11-25 (legacy) client gets an
``mcp-session-id`` from the worker that answered its ``initialize``, and only
that worker knows it; its next request may reach another worker and get ``404
Session not found``. Stateless HTTP keeps no session: every request is served
on its own (2026-07-28 clients are sessionless anyway). SSE keeps its session
in one process, so it is refused with several workers.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing
import os
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field

import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.supervisors import Multiprocess

from mcp_teach.servers.by_name import DEFAULT_SERVER, build_server
from mcp_teach.transports.http_app import HttpTransport, guarded_http_app
from mcp_teach.transports.options import check_class_mode
from mcp_teach.transports.sockets import QUIET_UVICORN

#: Each worker prints this, its pid and ``ready`` on stderr when it accepts connections (the calculator's
#: workers; another server's say its own name, see :func:`worker_ready`).
WORKER_READY = "mcp-teach calculator: worker process"


def worker_ready(server_name: str = DEFAULT_SERVER) -> str:
    """What the workers of ``server_name`` print before their pid and ``ready``."""
    return f"mcp-teach {server_name}: worker process"


@dataclass(frozen=True)
class AppSettings:
    """Everything a worker needs to build the same app as a single-process server."""

    transport: HttpTransport
    path: str
    host: str
    stateless: bool = False
    token: str | None = field(default=None, repr=False)
    #: Which server of :mod:`mcp_teach.servers.by_name` each worker builds.
    server_name: str = DEFAULT_SERVER


@dataclass(frozen=True)
class _AnnounceReady:
    """ASGI wrapper: says ``worker process <pid> ready`` on stderr once the app has started."""

    app: ASGIApp
    server_name: str = DEFAULT_SERVER

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def announce(message: Message) -> None:
            await send(message)
            if message["type"] == "lifespan.startup.complete":
                # one write, newline included: the workers share stderr, and print's two writes could interleave
                sys.stderr.write(f"{worker_ready(self.server_name)} {os.getpid()} ready\n")
                sys.stderr.flush()

        await self.app(scope, receive, announce)


def _stop_with_parent() -> None:
    """In a worker: stop (as on SIGTERM) when the supervisor process ends, even if it was killed with SIGKILL.

    uvicorn stops its workers when the supervisor gets Ctrl-C or SIGTERM; without this, a supervisor killed
    outright would leave them serving on the shared socket with no one to stop them.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()  # returns when the parent's end of the pipe closes, however the parent ended
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="stop-with-parent", daemon=True).start()


def worker_app(settings: AppSettings) -> ASGIApp:
    """The ASGI app of one worker (called by uvicorn in each worker process)."""
    _stop_with_parent()
    server = build_server(settings.server_name)
    app = guarded_http_app(server, settings.transport, settings.path, settings.host, settings.token, settings.stateless)
    gc.freeze()  # it all lives as long as the worker: out of every full garbage collection (see AnnouncingServer)
    return _AnnounceReady(app, settings.server_name)


def worker_config(settings: AppSettings, workers: int) -> uvicorn.Config:
    """uvicorn's settings: each of the ``workers`` processes calls :func:`worker_app` with ``settings``."""
    app = functools.partial(worker_app, settings)
    return uvicorn.Config(app, factory=True, workers=workers, lifespan="on", **QUIET_UVICORN)


def serve_workers(sock: socket.socket, settings: AppSettings, workers: int) -> None:
    """Serve on the listening ``sock`` with ``workers`` processes until Ctrl-C or SIGTERM, then stop them all."""
    check_class_mode(settings.transport, workers, settings.stateless)
    Multiprocess(worker_config(settings, workers), sockets=[sock]).run()
