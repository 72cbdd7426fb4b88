"""A served HTTP server keeps what it built at start out of the garbage collector's full passes."""

from __future__ import annotations

import functools
import gc

import anyio
import uvicorn
from starlette.responses import PlainTextResponse
from support import HANG_TIMEOUT

from mcp_teach.transports.foreground import AnnouncingServer
from mcp_teach.transports.sockets import QUIET_UVICORN, bind_socket


def test_once_started_what_exists_is_frozen(capsys) -> None:
    sock = bind_socket()
    sock.listen()
    server = AnnouncingServer(uvicorn.Config(PlainTextResponse("hi"), lifespan="off", **QUIET_UVICORN), "ready")

    async def start_and_stop() -> int:
        async with anyio.create_task_group() as serving:
            serving.start_soon(functools.partial(server.serve, sockets=[sock]))
            with anyio.fail_after(HANG_TIMEOUT):
                while not server.started:
                    await anyio.sleep(0.01)
            server.should_exit = True
            return gc.get_freeze_count()

    gc.unfreeze()
    try:
        frozen = anyio.run(start_and_stop)
    finally:
        gc.unfreeze()  # this test process goes on collecting as before
        sock.close()
    assert frozen > 10_000  # modules, classes, the app: everything built so far
    assert capsys.readouterr().err.strip() == "ready"
