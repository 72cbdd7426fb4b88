"""``mcp-teach tap --out FILE --listen HOST:PORT --upstream URL``: record what a host says to an HTTP server.

A reverse proxy: the host connects to the tap instead of the server; every request is forwarded
to the upstream's origin with the same method, path, query, headers and body, and the response
(status, headers, body) is passed back as it arrives: a ``text/event-stream`` response is relayed
chunk by chunk, so streamed progress and server requests reach the host as promptly as they would
directly. Only ``Host`` is set to the upstream's, and hop-by-hop headers (``Connection``…) stay with
each hop, as for any proxy. In front of it stands the course servers' Host/Origin guard
(:func:`~mcp_teach.transports.http_app.host_origin_guard`): a tap rewrites ``Host`` to the upstream's, so without
its own guard a DNS-rebinding page would reach the upstream through it. It listens on loopback only: it has no
credential of its own, so on another interface anyone who reached it would use the upstream as the host does
(with the host's session) and have it recorded, and the guard could not tell a foreign ``Host`` from a real one.

The recording gets records as things happen (:mod:`mcp_teach.wire.host_tap_writer`): ``http-request``,
``http-response``, then ``sse-event`` per event or one ``http-body``, then ``http-end``, all with the
``exchange`` number they belong to. Credentials are redacted in the recording only, by
:mod:`mcp_teach.wire.redact`: credential headers (``Authorization``, cookies, ``X-Auth-Token``...), OAuth
codes, verifiers and tokens in URLs, ``Location`` headers, form, multipart and JSON bodies and event-stream data
(after decoding), and key-like strings anywhere. A body or an event over
:data:`~mcp_teach.wire.host_tap_writer.RECORD_LIMIT` is cut in its record (``truncated_from`` says its size);
while it passes, the tap holds it whole, as the host's client does.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import signal
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import uvicorn

from mcp_teach.config import is_loopback
from mcp_teach.transports.http_app import host_origin_guard
from mcp_teach.transports.sockets import QUIET_UVICORN, bind_socket, server_url
from mcp_teach.wire.host_tap_writer import TapWriter, capped
from mcp_teach.wire.redact import redact_body, redact_event, redact_headers, redact_url
from mcp_teach.wire.sse import EVENT_END, SseEvent, parse_event

#: Headers that belong to one connection, not to the message (RFC 9110 section 7.6.1), plus Host.
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"transfer-encoding", b"upgrade", b"host"}
)
#: Upstream timeouts: no read timeout, since an SSE stream may stay quiet for as long as the session lasts.
TIMEOUTS = {"connect": 30.0, "read": None, "write": 30.0, "pool": 30.0}
#: What the recording says of a block with no data (a comment, a keep-alive): no event is dispatched.
NO_EVENT = SseEvent("message", "")
#: An event's end in the bytes of a stream (its blank line is ASCII, never part of a UTF-8 character).
EVENT_END_BYTES = re.compile(EVENT_END.pattern.encode())


def parse_listen(listen: str) -> tuple[str, int]:
    """``127.0.0.1:8010`` or ``[::1]:0`` → host and port; a loopback host only (see the module docstring)."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--listen wants HOST:PORT, e.g. 127.0.0.1:8010 (PORT 0: any free one), not {listen!r}")
    if not is_loopback(host):  # anyone who reached the tap would use the upstream as the host, unauthenticated
        raise ValueError(f"--listen {host} would open the tap to other machines: use --listen 127.0.0.1:PORT")
    return host, int(port)


class _EventRecorder:
    """Splits a streamed ``text/event-stream`` body into events and records each one as it completes.

    An event is held until it ends, as the host's own client holds it; its record keeps what a record holds.
    """

    def __init__(self, writer: TapWriter, exchange: int) -> None:
        self._writer = writer
        self._exchange = exchange
        self._pending = bytearray()

    def feed(self, chunk: bytes, *, final: bool = False) -> None:
        searched = max(0, len(self._pending) - 3)  # an event's end may begin in the previous chunk
        self._pending += chunk
        while match := EVENT_END_BYTES.search(self._pending, searched):
            self._record(bytes(self._pending[: match.end()]))
            del self._pending[: match.end()]
            searched = 0
        if final and self._pending:
            self._record(bytes(self._pending))  # a stream cut off in the middle of an event

    def _record(self, block: bytes) -> None:
        record = capped("raw", block, redact_event)
        event = asdict(parse_event(record["raw"]) or NO_EVENT)
        self._writer.write("sse-event", exchange=self._exchange, **event, **record)


class TapProxy:
    """The ASGI app: forwards each HTTP request to ``upstream`` and records the exchange into ``writer``."""

    def __init__(self, upstream: str, writer: TapWriter) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--upstream wants an http:// or https:// URL, not {upstream!r}")
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._writer = writer
        self._numbers = itertools.count(1)
        self._transport = httpx2.AsyncHTTPTransport()  # no client: no cookies, redirects or default headers added

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._forward(scope, receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self._transport.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _forward(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        number = next(self._numbers)
        body = await _read_body(receive)
        query = scope["query_string"].decode("latin-1")
        target = scope["raw_path"].decode("latin-1") + (f"?{query}" if query else "")
        headers = [(name, value) for name, value in scope["headers"] if name.lower() not in HOP_BY_HOP]
        sent = httpx2.Headers(headers)
        request = httpx2.Request(
            scope["method"], self._origin + target, headers=headers, content=body, extensions={"timeout": TIMEOUTS}
        )
        self._writer.write(
            "http-request",
            exchange=number,
            method=scope["method"],
            target=redact_url(target),
            url=redact_url(self._origin + target),
            http_version=f"HTTP/{scope.get('http_version', '1.1')}",
            headers=redact_headers(sent),
            **capped("body", body, redact_body, sent.get("content-type", "")),
        )
        try:
            response = await self._transport.handle_async_request(request)
        except httpx2.HTTPError as error:
            await self._bad_gateway(number, error, send)
            return
        try:
            await self._relay(number, response, receive, send)
        finally:
            await response.aclose()

    async def _relay(self, number: int, response: httpx2.Response, receive: Any, send: Any) -> None:
        upstream_headers = httpx2.Headers(response.headers.raw)
        self._writer.write(
            "http-response",
            exchange=number,
            status=response.status_code,
            reason=response.extensions.get("reason_phrase", b"").decode("latin-1"),
            http_version=response.extensions.get("http_version", b"HTTP/1.1").decode("ascii"),
            headers=redact_headers(upstream_headers),
        )
        headers = [(name.lower(), value) for name, value in response.headers.raw if name.lower() not in HOP_BY_HOP]
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
        streaming = upstream_headers.get("content-type", "").startswith("text/event-stream")
        events = _EventRecorder(self._writer, number) if streaming else None
        chunks: list[bytes] = []
        error = None
        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_on_disconnect, receive, group.cancel_scope)
            try:
                async for chunk in response.stream:
                    if events is not None:
                        events.feed(chunk)
                    else:
                        chunks.append(chunk)
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except (httpx2.HTTPError, OSError) as failure:  # the upstream broke off (the client sees it end too)
                error = f"upstream: {failure!r}"
            finally:
                if events is not None:
                    events.feed(b"", final=True)
                else:
                    body = capped("body", b"".join(chunks), redact_body, upstream_headers.get("content-type", ""))
                    self._writer.write("http-body", exchange=number, **body)
                if group.cancel_scope.cancel_called:
                    error = error or "the client disconnected"
                self._writer.write("http-end", exchange=number, error=error)
            group.cancel_scope.cancel()

    async def _bad_gateway(self, number: int, error: Exception, send: Any) -> None:
        """The upstream could not be reached: 502 to the client, and the reason in the recording."""
        message = f"mcp-teach tap: the upstream {self._origin} could not be reached: {error!r}\n".encode()
        self._writer.write("http-end", exchange=number, error=f"upstream: {error!r}")
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(message)).encode())]
        await send({"type": "http.response.start", "status": 502, "headers": headers})
        await send({"type": "http.response.body", "body": message})


async def _read_body(receive: Any) -> bytes:
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if message["type"] == "http.disconnect" or not message.get("more_body"):
            return b"".join(parts)


async def _cancel_on_disconnect(receive: Any, scope: anyio.CancelScope) -> None:
    """Stop relaying when the client goes away (e.g. a host closing its GET event stream)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


def run_http_tap(out: Path, listen: str, upstream: str) -> int:
    """Serve the proxy on ``listen`` until SIGINT/SIGTERM, recording into ``out``; 0 on a clean stop."""
    host, port = parse_listen(listen)
    writer = TapWriter(out, transport="http", upstream=redact_url(upstream))
    try:
        app = host_origin_guard(TapProxy(upstream, writer), host)
        sock = bind_socket(host, port)
    except (ValueError, OSError):
        writer.close()
        raise
    sock.listen(2048)  # before announcing the URL: a client that connects as soon as it reads it is queued, not refused
    url = server_url(host, sock.getsockname()[1], urlsplit(upstream).path or "/")
    writer.write("listening", url=url)
    forwarding = f"forwarding to {redact_url(upstream)} , recording to {out} (Ctrl-C stops it)"
    print(f"mcp-teach tap: listening on {url} , {forwarding}", file=sys.stderr, flush=True)
    quiet = {**QUIET_UVICORN, "timeout_graceful_shutdown": 1}
    # The upstream's own Server and Date headers are passed on.
    config = uvicorn.Config(app, lifespan="on", server_header=False, date_header=False, **quiet)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops it as Ctrl-C does
    try:
        with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises the signal again once it is down
            uvicorn.Server(config).run(sockets=[sock])
    finally:
        writer.close()
    return 0
