"""Record the HTTP exchanges under an SSE or streamable-HTTP MCP connection.

JSON-RPC messages look the same on every transport; what differs is the
framing. :class:`RecordingHTTPTransport` sits below httpx and keeps each
request and response (status, headers, body as it streams in), with
credentials redacted, so a lesson can show the framing itself.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from mcp_teach.redact import redact_headers, redact_text


@dataclass
class HttpExchange:
    """One HTTP request and its response, as far as it has arrived."""

    method: str
    #: Path and query, e.g. ``/mcp`` or ``/messages/?session_id=...``.
    target: str
    request_headers: dict[str, str]
    request_body: str
    started_at: float
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str = ""
    ended_at: float | None = None

    @property
    def content_type(self) -> str | None:
        return self.response_headers.get("content-type")

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HttpExchange:
        return cls(**data)


class _RecordingBody(httpx2.AsyncByteStream):
    """A response body that copies each chunk into its exchange as it is read.

    A network chunk can end inside a UTF-8 character or inside a key, so the
    text is decoded incrementally and redacted a whole line at a time (keys
    never span lines); the unfinished last line is re-redacted as it grows.
    """

    def __init__(self, inner: httpx2.AsyncByteStream, exchange: HttpExchange) -> None:
        self._inner = inner
        self._exchange = exchange
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._lines = ""  # complete lines, redacted
        self._tail = ""  # the unfinished last line, not yet redacted

    def _add(self, text: str) -> None:
        lines, newline, self._tail = (self._tail + text).rpartition("\n")
        self._lines += redact_text(lines + newline)
        self._exchange.response_body = self._lines + redact_text(self._tail)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._add(self._decoder.decode(chunk))
            yield chunk
        self._add(self._decoder.decode(b"", final=True))

    async def aclose(self) -> None:
        self._exchange.ended_at = time.monotonic()
        await self._inner.aclose()


class RecordingHTTPTransport(httpx2.AsyncBaseTransport):
    """An httpx transport that appends every exchange to ``on_exchange``."""

    def __init__(self, on_exchange: Callable[[HttpExchange], None]) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._on_exchange = on_exchange

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        exchange = HttpExchange(
            method=request.method,
            target=request.url.raw_path.decode("ascii"),
            request_headers=redact_headers(request.headers),
            request_body=redact_text(body.decode("utf-8", "replace")),
            started_at=time.monotonic(),
        )
        self._on_exchange(exchange)
        response = await self._inner.handle_async_request(request)
        exchange.status = response.status_code
        exchange.response_headers = redact_headers(response.headers)
        response.stream = _RecordingBody(response.stream, exchange)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def recording_client_factory(on_exchange: Callable[[HttpExchange], None]) -> Callable[..., httpx2.AsyncClient]:
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
        return httpx2.AsyncClient(
            headers=headers,
            timeout=timeout or httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
            auth=auth,
            transport=RecordingHTTPTransport(on_exchange),
            **kwargs,
        )

    return factory
