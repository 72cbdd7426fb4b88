"""Helpers several test modules share (import with ``from support import ...``)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from mcp_teach.transports.sockets import bind_socket
from mcp_teach.wire.modern_post import modern_post

#: Generous limit that only stops a hung test, even on a machine busy with other jobs; nothing asserts on how
#: long anything takes, and every wait returns as soon as what it waits for has happened.
HANG_TIMEOUT = 300
#: Every (connection, client mode) a course server is tested on: SSE speaks only the 2025-11-25 handshake.
CONNECTION_MODES = [
    ("in-memory", "auto"),
    ("in-memory", "legacy"),
    ("stdio", "auto"),
    ("stdio", "legacy"),
    ("sse", "legacy"),
    ("streamable-http", "auto"),
    ("streamable-http", "legacy"),
]
CONNECTION_MODE_IDS = [f"{connection}-{mode}" for connection, mode in CONNECTION_MODES]


#: What an :class:`~mcp_teach.wire.http_recording.HttpExchange` holds that a lesson may show.
EXCHANGE_FIELDS = ("method", "target", "request_headers", "request_body", "status", "response_headers", "response_body")


def recorded_text(capture: Any) -> str:
    """Everything a capture recorded (each message, each HTTP exchange) as one JSON text, to search for secrets."""
    messages = [wire.message for wire in capture.messages]
    exchanges = [{name: getattr(exchange, name) for name in EXCHANGE_FIELDS} for exchange in capture.http]
    return json.dumps([messages, exchanges])


def initialize(version: str, request_id: int = 1) -> dict:
    """A hand-written 2025-11-25 ``initialize`` request proposing ``version``."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def discover(version: str, request_id: int = 1) -> dict:
    """A hand-written 2026-07-28 ``server/discover`` request for ``version``, with the required envelope."""
    meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "server/discover", "params": {"_meta": meta}}


def refuses_connections(port: int) -> bool:
    """True if nothing listens on 127.0.0.1:``port`` any more."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


@contextlib.contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free 127.0.0.1 port in a background thread; yields ``http://127.0.0.1:<port>``."""
    sock = bind_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + HANG_TIMEOUT
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(HANG_TIMEOUT)
        sock.close()


async def legacy_session():
    """A real in-memory 2025-11-25 session: handshake, tools/list, one good call and a divide-by-zero."""
    from mcp_teach.client import teaching_client
    from mcp_teach.servers.calculator import build_calculator_server
    from mcp_teach.wire.capture import CaptureTransport

    capture = CaptureTransport(build_calculator_server())
    async with teaching_client(capture, mode="legacy") as client:
        await client.list_tools()
        await client.call_tool("calculator_add", {"a": 1, "b": 2})
        await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
    return capture


def talk_as_a_host(command: list[str], timeout: float = 60, **popen: Any) -> tuple[list[dict], int, str]:
    """Start ``command`` as a host does (stdin and stdout as the pipes), send the 2025-11-25 handshake and
    ``tools/list``, reading each answer before the next message, then close stdin: ``(answers, exit code, stderr)``."""
    import subprocess

    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen
    )
    messages = [initialize("2025-11-25"), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    answers = []
    try:
        for message in [*messages, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]:
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            if "id" in message:
                answers.append(json.loads(server.stdout.readline()))
    finally:
        server.stdin.close()
        returncode = server.wait(timeout=timeout)
        stderr = server.stderr.read()
        server.stdout.close()
        server.stderr.close()
    return answers, returncode, stderr


async def open_listen_stream(streams: contextlib.AsyncExitStack, http: Any, url: str, headers: dict[str, str]) -> dict:
    """Open a ``subscriptions/listen`` stream (2026-07-28), kept open until ``streams`` closes: its first message."""
    post = modern_post("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    response = await streams.enter_async_context(
        http.stream("POST", url, content=post.json(), headers=post.headers | headers)
    )
    lines = response.aiter_lines()
    streams.push_async_callback(lines.aclose)  # closing the lines closes the response: only when ``streams`` does
    read = []
    async for line in lines:
        if line.startswith("data:"):
            return json.loads(line[5:])
        read.append(line)
    return json.loads("".join(read))
