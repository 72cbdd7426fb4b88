"""CaptureTransport: see every JSON-RPC message a fastmcp client exchanges.

Wrap anything ``fastmcp.Client`` accepts::

    capture = CaptureTransport(build_calculator_server())
    async with Client(capture) as client:
        await client.call_tool("calculator_add", {"a": 1, "b": 2})
    capture.messages  # initialize/server/discover, tools/call, ... in wire order

Every fastmcp transport builds its session from ``transport_options.session_class``
with the two message streams, so substituting a session class whose streams
record each :class:`~mcp.shared.message.SessionMessage` sees both directions on
every transport without touching private code.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import time
from collections.abc import AsyncGenerator
from typing import Any

from fastmcp.client.transports import ClientTransport, SSETransport, StreamableHttpTransport
from fastmcp.client.transports.base import SessionKwargs, TransportOptions
from fastmcp.client.transports.inference import infer_transport
from mcp import ClientSession
from mcp.shared.message import SessionMessage
from typing_extensions import Unpack

from mcp_teach.wire.http_recording import recording_client_factory
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture, Direction


class _RecordingStream:
    """Wraps one direction of a session's message streams and records what passes."""

    def __init__(self, inner: Any, capture: Capture, direction: Direction) -> None:
        self._inner = inner
        self._capture = capture
        self._direction = direction

    def _record(self, item: Any) -> None:
        if isinstance(item, SessionMessage):
            self._capture.record(self._direction, item, time.monotonic())

    async def send(self, item: SessionMessage, /) -> None:
        self._record(item)
        await self._inner.send(item)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._record(item)
        return item

    def __aiter__(self) -> _RecordingStream:
        return self

    async def __anext__(self) -> Any:
        item = await self._inner.__anext__()
        self._record(item)
        return item

    async def __aenter__(self) -> _RecordingStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _recording_session_class(base: type[ClientSession], capture: Capture) -> type[ClientSession]:
    """A subclass of ``base`` whose streams record into ``capture``."""

    class RecordingSession(base):  # type: ignore[valid-type, misc]
        def __init__(self, read_stream: Any = None, write_stream: Any = None, *args: Any, **kwargs: Any) -> None:
            read_stream = _RecordingStream(read_stream, capture, SERVER_TO_CLIENT)
            write_stream = _RecordingStream(write_stream, capture, CLIENT_TO_SERVER)
            super().__init__(read_stream, write_stream, *args, **kwargs)

    return RecordingSession


class CaptureTransport(ClientTransport):
    """A client transport that records the JSON-RPC traffic of the transport it wraps.

    ``target`` is anything ``fastmcp.Client`` accepts: a server object, a
    script path, a URL or another transport. For SSE and streamable-HTTP
    targets with ``record_http=True`` (the default) the HTTP exchanges are
    recorded as well, in :attr:`Capture.http`.
    """

    def __init__(self, target: Any, *, capture: Capture | None = None, record_http: bool = True) -> None:
        self.capture = capture if capture is not None else Capture()
        inner = infer_transport(target)
        over_http = isinstance(inner, SSETransport | StreamableHttpTransport)
        if record_http and over_http and inner.httpx_client_factory is None:
            inner = copy.copy(inner)
            inner.httpx_client_factory = recording_client_factory(self.capture.http.append)
        self.inner: ClientTransport = inner
        self.legacy_only = inner.legacy_only

    @property
    def messages(self) -> Capture:
        """Shortcut for :attr:`capture`, which reads well in a notebook."""
        return self.capture

    @contextlib.asynccontextmanager
    async def connect_session(
        self, *, transport_options: TransportOptions | None = None, **session_kwargs: Unpack[SessionKwargs]
    ) -> AsyncGenerator[ClientSession, None]:
        options = transport_options or TransportOptions()
        session_class = _recording_session_class(options.session_class, self.capture)
        recording = dataclasses.replace(options, session_class=session_class)
        async with self.inner.connect_session(transport_options=recording, **session_kwargs) as session:
            yield session

    async def close(self) -> None:
        await self.inner.close()

    def get_session_id(self) -> str | None:
        return self.inner.get_session_id()

    def _set_auth(self, auth: Any) -> None:
        self.inner._set_auth(auth)

    def __repr__(self) -> str:
        return f"<CaptureTransport({self.inner!r})>"
