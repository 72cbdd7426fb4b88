"""Record the HTTP exchanges under an SSE or streamable-HTTP MCP connection.

JSON-RPC messages look the same on every transport; what differs is the
framing. :class:`RecordingHTTPTransport` sits below httpx and keeps each
request and response (status, headers, body as it streams in), with
credentials redacted by the tap's rules (:mod:`mcp_teach.wire.redact`), so a
lesson can show the framing itself. ``inner`` puts it in front of any transport (an
in-process ASGI app, say), and ``redact=False`` keeps the exchange as sent, for a
lesson that must show the credential itself (and never stores it).
"""

from __future__ import annotations

import codecs
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from mcp_teach.wire.redact import redact_body, redact_headers, redact_url

RawHeaders = list[tuple[bytes, bytes]]


class HttpExchange:
    """One HTTP request and its response, as far as it has arrived.

    Like :class:`~mcp_teach.wire.messages.WireMessage`, a live recording keeps what httpx
    hands over (raw header lists, body bytes, response chunks) and decodes and
    redacts it only when a lesson reads it, so recording costs a few microseconds
    per request and appending a chunk to a long-lived stream stays O(1).
    """

    def __init__(
        self,
        method: str,
        target: str,
        request_headers: dict[str, str],
        request_body: str,
        started_at: float,
        status: int | None = None,
        response_headers: dict[str, str] | None = None,
        response_body: str = "",
        ended_at: float | None = None,
    ) -> None:
        self.method = method
        #: Path and query, e.g. ``/mcp`` or ``/messages/?session_id=...``.
        self.target = target
        self.started_at = started_at
        self.status = status
        self.ended_at = ended_at
        self._request_headers: dict[str, str] | RawHeaders = request_headers
        self._request_body: str | bytes = request_body
        self._response_headers: dict[str, str] | RawHeaders = response_headers or {}
        self._response_chunks: list[bytes] | None = None  # set while recording a live response
        self._response_body = response_body
        self._redact = True

    @classmethod
    def _recording(cls, request: httpx2.Request, body: bytes, redact: bool = True) -> HttpExchange:
        """A live exchange holding references only (see the class docstring)."""
        target = request.url.raw_path.decode("ascii")
        exchange = cls(request.method, redact_url(target) if redact else target, {}, "", time.monotonic())
        exchange._request_headers, exchange._request_body = request.headers.raw, body
        exchange._response_chunks = []
        exchange._redact = redact
        return exchange

    def _headers(self, raw: RawHeaders) -> dict[str, str]:
        headers = httpx2.Headers(raw)
        return redact_headers(headers) if self._redact else {name.lower(): value for name, value in headers.items()}

    def _body(self, text: str, content_type: str) -> str:
        return redact_body(text, content_type) if self._redact else text

    @property
    def request_headers(self) -> dict[str, str]:
        if isinstance(self._request_headers, list):
            self._request_headers = self._headers(self._request_headers)
        return self._request_headers

    @property
    def request_body(self) -> str:
        if isinstance(self._request_body, bytes):
            text = self._request_body.decode("utf-8", "replace")
            self._request_body = self._body(text, self.request_headers.get("content-type", ""))
        return self._request_body

    @property
    def response_headers(self) -> dict[str, str]:
        if isinstance(self._response_headers, list):
            self._response_headers = self._headers(self._response_headers)
        return self._response_headers

    @response_headers.setter
    def response_headers(self, headers: dict[str, str] | RawHeaders) -> None:
        self._response_headers = headers

    @property
    def response_body(self) -> str:
        """The body so far, decoded (an unfinished UTF-8 character held back) and redacted."""
        if self._response_chunks is not None:
            data = b"".join(self._response_chunks)
            finished = self.ended_at is not None
            text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=finished)
            self._response_body = self._body(text, self.content_type or "")
            if finished:
                self._response_chunks = None
        return self._response_body

    @property
    def content_type(self) -> str | None:
        return self.response_headers.get("content-type")

    def __repr__(self) -> str:
        return f"<HttpExchange {self.method} {self.target} {self.status}>"


class _RecordingBody(httpx2.AsyncByteStream):
    """A response body that hands each chunk to its exchange as it is read (O(1) per chunk)."""

    def __init__(self, inner: httpx2.AsyncByteStream, chunks: list[bytes], exchange: HttpExchange) -> None:
        self._inner = inner
        self._chunks = chunks
        self._exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._chunks.append(chunk)
            yield chunk

    async def aclose(self) -> None:
        self._exchange.ended_at = time.monotonic()
        await self._inner.aclose()


class RecordingHTTPTransport(httpx2.AsyncBaseTransport):
    """An httpx transport that appends every exchange to ``on_exchange``, in front of ``inner`` (default: the network).

    ``redact=False`` keeps credentials as sent, for code that must learn a flow's own secrets (an OAuth code,
    a token) before it hides them wherever they reappear; never show such exchanges as they are.
    """

    def __init__(
        self,
        on_exchange: Callable[[HttpExchange], None],
        *,
        redact: bool = True,
        inner: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self._inner = inner or httpx2.AsyncHTTPTransport()
        self._on_exchange = on_exchange
        self._redact = redact

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        exchange = HttpExchange._recording(request, await request.aread(), self._redact)
        self._on_exchange(exchange)
        response = await self._inner.handle_async_request(request)
        exchange.status = response.status_code
        exchange.response_headers = response.headers.raw
        response.stream = _RecordingBody(response.stream, exchange._response_chunks, exchange)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def recording_client_factory(
    on_exchange: Callable[[HttpExchange], None], *, redact: bool = True
) -> Callable[..., httpx2.AsyncClient]:
    """An ``httpx_client_factory`` for fastmcp's HTTP transports that records exchanges.

    It builds the client the way the MCP SDK does by default (30 s timeouts,
    300 s read timeout for streams), only with a recording transport below it.
    """

    def factory(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        **kwargs: Any,
    ) -> httpx2.AsyncClient:
        timeout = timeout or httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
        transport = RecordingHTTPTransport(on_exchange, redact=redact)
        return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, transport=transport, **kwargs)

    return factory
