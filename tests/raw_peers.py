"""Raw JSON-RPC peers for the bad-input and fuzz tests: bytes in, every reply out, on each transport.

One synchronous interface over four ways to reach the calculator, so a test can
send what no MCP client would and read exactly what came back:

- ``stdio``: ``python -m mcp_teach.serve --transport stdio``, one frame per line;
- ``sse``: GET /sse for the replies, POST /messages/?session_id=... for the frames (2025-11-25 session);
- ``streamable-http``: POST /mcp, 2026-07-28 era (no session; each request carries ``_meta`` and routing headers);
- ``streamable-http-legacy``: POST /mcp in a 2025-11-25 session (``initialize`` first, ``mcp-session-id``).

Every reply lands in :attr:`Peer.inbox`: read from the pipe or the event
stream, or taken from the POST response (for SSE also a refused POST's JSON-RPC
error body). :meth:`Peer.send` returns the HTTP status (``None`` on stdio).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import queue
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
from mcp.shared.inbound import NAME_BEARING_METHODS, encode_header_value
from support import HANG_TIMEOUT

from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.raw_requests import PROTOCOL_VERSION, raw_request
from mcp_teach.wire.sse import sse_events

PEERS = ("stdio", "sse", "streamable-http", "streamable-http-legacy")
LEGACY_VERSION = "2025-11-25"
#: Every error code the calculator may answer a frame with: JSON-RPC's own and the MCP-defined ones a bad
#: envelope or routing header earns (-32020 header mismatch, -32021 missing capability, -32022 unsupported version).
#: -32603 (Internal error) is deliberately absent: bad input must never crash a handler.
ALLOWED_ERROR_CODES = frozenset({-32700, -32600, -32601, -32602, -32020, -32021, -32022})
#: Where one server-sent event ends and the next begins.
_EVENT_END = re.compile(r"\r\n\r\n|\n\n|\r\r")
#: Put in the inbox when the server's output ends.
_CLOSED = object()


def _json_or_text(data: str | bytes) -> Any:
    """The JSON value in ``data``; ``data`` itself if it is not JSON (next_message then fails with it in view)."""
    try:
        return json.loads(data)
    except ValueError:
        return data


class Peer:
    """Base: an inbox of replies and the era-appropriate way to write a request."""

    name: str
    #: True in the 2026-07-28 era (requests carry the ``_meta`` envelope), False in a 2025-11-25 session.
    modern: bool

    def __init__(self) -> None:
        self.inbox: queue.Queue[Any] = queue.Queue()

    def request(self, id: int | str | None, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A request (``id=None``: a notification) as this peer's era wants it."""
        return raw_request(id, method, params, envelope=self.modern)

    def send(self, frame: bytes) -> int | None:
        raise NotImplementedError

    def handshake(self) -> None:
        """The 2025-11-25 handshake: ``initialize`` → result → ``notifications/initialized``."""
        params = {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        self.send_message(raw_request(0, "initialize", params, envelope=False))
        assert "result" in self.next_message(), f"{self.name}: initialize failed"
        self.send_message(raw_request(None, "notifications/initialized", envelope=False))

    def send_message(self, message: Any) -> int | None:
        return self.send(json.dumps(message).encode())

    def next_message(self, timeout: float = HANG_TIMEOUT) -> dict[str, Any]:
        """The next reply (a JSON object) in arrival order."""
        try:
            message = self.inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{self.name}: no reply within {timeout} s") from None
        assert message is not _CLOSED, f"{self.name}: the server closed its output (it crashed or exited)"
        assert isinstance(message, dict), (
            f"{self.name}: the server sent something that is not a JSON object: {message!r}"
        )
        return message

    def pending(self) -> list[Any]:
        """Replies received but not read yet (without waiting)."""
        found = []
        with contextlib.suppress(queue.Empty):
            while True:
                found.append(self.inbox.get_nowait())
        return [message for message in found if message is not _CLOSED]

    def call(self, id: int | str, tool: str, arguments: Any) -> dict[str, Any]:
        """Send a ``tools/call`` and return its reply (asserting nothing else arrived first)."""
        self.send_message(self.request(id, "tools/call", {"name": tool, "arguments": arguments}))
        reply = self.next_message()
        assert reply.get("id") == id, f"{self.name}: expected the reply to {id!r}, got {reply!r}"
        return reply

    def add(self, id: int | str, a: float = 1, b: float = 2) -> float:
        """A normal call that must succeed: ``calculator_add(a, b)``'s structured result."""
        result = self.call(id, "calculator_add", {"a": a, "b": b}).get("result", {})
        assert result.get("isError") is False, f"{self.name}: a normal call failed: {result!r}"
        return result["structuredContent"]["result"]


class StdioPeer(Peer):
    """The stdio server as a subprocess; frames are written as lines, replies read by a thread."""

    name = "stdio"
    modern = True

    def __init__(self, *, cwd: Path, stderr: Path, env: dict[str, str]) -> None:
        super().__init__()
        #: The server's stderr (its log).
        self.log_file = stderr
        self._stderr = stderr.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_teach.serve", "--transport", "stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=cwd,
            env=env,
        )
        self._reader = threading.Thread(target=self._read, name="stdio replies", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.inbox.put(_json_or_text(line))
        self.inbox.put(_CLOSED)

    def send(self, frame: bytes) -> None:
        """Write ``frame`` and a newline (a frame with newlines in it is several lines)."""
        self.process.stdin.write(frame + b"\n")
        self.process.stdin.flush()

    def close(self) -> int:
        """Close stdin (the server answers what it read, then exits); returns the exit code."""
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()
        try:
            code = self.process.wait(HANG_TIMEOUT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(HANG_TIMEOUT)
            self._reader.join(HANG_TIMEOUT)
            self.process.stdout.close()
            self._stderr.close()
        return code


def _routing_headers(frame: bytes) -> dict[str, str]:
    """The ``Mcp-Method``/``Mcp-Name`` headers a 2026-07-28 client derives from the body (none if unreadable)."""
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        return {}
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return {}
    headers = {"mcp-method": encode_header_value(message["method"])}
    key = NAME_BEARING_METHODS.get(message["method"])
    params = message.get("params")
    if key and isinstance(params, dict) and isinstance(params.get(key), str):
        headers["mcp-name"] = encode_header_value(params[key])
    return headers


def _replies_in(response: httpx2.Response) -> list[Any]:
    """The JSON-RPC messages in a POST response: a JSON body or the events of an event stream."""
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("text/event-stream"):
        return [json.loads(event.data) for event in sse_events(response.text) if event.event == "message"]
    if content_type.startswith("application/json") and response.content:
        return [json.loads(response.content)]
    assert not response.content, f"a reply that is not JSON-RPC: {response.status_code} {response.text!r}"
    return []


def _put_replies(peer: Peer, response: httpx2.Response) -> None:
    """Queue the reply a POST response carries: 202 carries none, every other status exactly one."""
    messages = _replies_in(response)
    expected = 0 if response.status_code == 202 else 1
    assert len(messages) == expected, f"{peer.name}: HTTP {response.status_code} carried {messages!r}"
    for message in messages:
        peer.inbox.put(message)


class StreamableHttpPeer(Peer):
    """POST /mcp; each response body holds the reply (JSON or an event stream)."""

    def __init__(self, url: str, *, modern: bool) -> None:
        super().__init__()
        self.url = url
        self.modern = modern
        self.name = "streamable-http" if modern else "streamable-http-legacy"
        self.client = httpx2.Client(timeout=HANG_TIMEOUT)
        self.headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        self.headers["mcp-protocol-version"] = PROTOCOL_VERSION if modern else LEGACY_VERSION
        if not modern:
            self.handshake()

    def send(self, frame: bytes) -> int:
        headers = {**self.headers, **_routing_headers(frame)} if self.modern else self.headers
        response = self.client.post(self.url, content=frame, headers=headers)
        if session := response.headers.get("mcp-session-id"):
            self.headers["mcp-session-id"] = session
        _put_replies(self, response)
        return response.status_code

    def close(self) -> None:
        if not self.modern:
            self.client.delete(self.url, headers=self.headers)
        self.client.close()


class SsePeer(Peer):
    """GET /sse read by a thread; frames POSTed to the endpoint it names. A refused POST's error body counts too."""

    name = "sse"
    modern = False

    def __init__(self, url: str) -> None:
        super().__init__()
        self.client = httpx2.Client(timeout=httpx2.Timeout(HANG_TIMEOUT, read=None))
        self.headers = {"content-type": "application/json"}
        self._endpoint: queue.Queue[str] = queue.Queue()
        self._stream_url = url
        self._reader = threading.Thread(target=self._read, name="sse replies", daemon=True)
        self._reader.start()
        path = self._endpoint.get(timeout=HANG_TIMEOUT)
        self.url = str(httpx2.URL(url).join(path))
        self.handshake()

    def _read(self) -> None:
        """Split the stream into events at blank lines (CR, LF or CRLF only: httpx's ``iter_lines`` also splits
        at U+2028 and friends, which JSON leaves unescaped) and queue each one."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        buffer = ""
        with (
            contextlib.suppress(httpx2.HTTPError),
            self.client.stream("GET", self._stream_url, headers={"accept": "text/event-stream"}) as stream,
        ):
            self._stream = stream
            for chunk in stream.iter_bytes():
                buffer += decoder.decode(chunk)
                *blocks, buffer = _EVENT_END.split(buffer)
                for event in sse_events("\n\n".join(blocks)):
                    if event.event == "endpoint":
                        self._endpoint.put(event.data)
                    else:
                        self.inbox.put(_json_or_text(event.data))
        self.inbox.put(_CLOSED)

    def send(self, frame: bytes) -> int:
        response = self.client.post(self.url, content=frame, headers=self.headers)
        if response.status_code != 202:  # accepted: the reply, if any, comes on the event stream
            _put_replies(self, response)
        return response.status_code

    def close(self) -> None:
        # Shut the socket down: that ends the reader's blocked read at once (closing the stream would wait
        # for the next keep-alive ping, 15 s away).
        with contextlib.suppress(OSError):  # already closed by the server
            self._stream.extensions["network_stream"].get_extra_info("socket").shutdown(socket.SHUT_RDWR)
        self._reader.join(HANG_TIMEOUT)
        self.client.close()


@contextlib.contextmanager
def http_server(transport: str) -> Iterator[str]:
    """:func:`mcp_teach.transports.in_process.serve_http` (the real app, guards included) in a background thread.

    Yields the URL.
    """
    started: queue.Queue[str | BaseException] = queue.Queue()
    loop_and_stop: list[Any] = []

    async def serve() -> None:
        stop = asyncio.Event()
        loop_and_stop.extend((asyncio.get_running_loop(), stop))
        try:
            async with serve_http(transport) as url:
                started.put(url)
                await stop.wait()
        except BaseException as error:
            started.put(error)
            raise

    thread = threading.Thread(target=asyncio.run, args=(serve(),), name=f"{transport} server", daemon=True)
    thread.start()
    url = started.get(timeout=HANG_TIMEOUT)
    if isinstance(url, BaseException):
        raise url
    try:
        yield url
    finally:
        loop, stop = loop_and_stop
        loop.call_soon_threadsafe(stop.set)
        thread.join(HANG_TIMEOUT)


@contextlib.contextmanager
def open_peer(name: str, *, workdir: Path, env: dict[str, str]) -> Iterator[Peer]:
    """A connected peer of kind ``name`` (one of :data:`PEERS`); stdio's clean exit is checked on the way out."""
    if name == "stdio":
        peer = StdioPeer(cwd=workdir, stderr=workdir / "stdio-server.log", env=env)
        try:
            yield peer
        finally:
            code = peer.close()
        assert code == 0, f"the stdio server exited with {code}: {(workdir / 'stdio-server.log').read_text()[-2000:]}"
        return
    transport = "sse" if name == "sse" else "streamable-http"
    with http_server(transport) as url:
        peer = SsePeer(url) if name == "sse" else StreamableHttpPeer(url, modern=name == "streamable-http")
        try:
            yield peer
        finally:
            peer.close()
