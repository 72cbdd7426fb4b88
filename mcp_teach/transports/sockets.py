"""Listening sockets, the URLs clients use to reach them, and how the course serves HTTP on them with uvicorn.

uvicorn closes a connection idle between two requests after 5 s (``timeout_keep_alive``), but puts no limit on
how long a request takes to arrive: a client that sends its headers a byte at a time (slowloris), its body slower
than any real client, or nothing at all after connecting, holds its connection, and the worker's memory and file
descriptor for it, as long as it likes. :class:`RequestTimeout` (uvicorn's ``h11`` HTTP/1.1 protocol, the one
uvicorn picks when ``httptools`` is not installed, as here) answers such a client ``408 Request Timeout`` and
closes the connection once a request has been arriving for :data:`REQUEST_SECONDS` to twice that (RFC 9110,
15.5.9: the server "did not receive a complete request message within the time that it was prepared to wait").
Only the request is timed: once it has arrived, a slow answer, a ``subscriptions/listen`` stream or an SSE event
stream keeps its connection as long as it lasts. A timer per connection looks every :data:`REQUEST_SECONDS`, so a
request costs no extra work.
"""

from __future__ import annotations

import asyncio
import socket

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcp_teach.config import LOOPBACK

#: How long a request may take to arrive, headers and body. Real clients send a request at once: the largest body a
#: course server reads (4 MiB) takes about 3 s at 10 Mbit/s. A request still arriving at two looks in a row, this
#: far apart, is cut off: after 10 to 20 s.
REQUEST_SECONDS = 10.0


class RequestTimeout(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing with ``408`` a connection whose request is too slow to arrive."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._seen: tuple[object, object] | None = None
        self._timer = self.loop.call_later(REQUEST_SECONDS, self._look)

    def connection_lost(self, exc: Exception | None) -> None:
        self._timer.cancel()
        super().connection_lost(exc)

    def _look(self) -> None:
        """Close the connection if the request that was arriving at the last look still is; else look again later.

        What is arriving: uvicorn's cycle and the client's state. Between two requests nothing is (uvicorn's
        keep-alive timeout applies), nor while the app has not read the body yet (reading paused: the server's delay).
        """
        state = self.conn.their_state
        owed = state is h11.IDLE and (self.cycle is None or self.conn.trailing_data[0])  # a first or a begun request
        arriving = (self.cycle, state) if owed or (state is h11.SEND_BODY and not self.flow.read_paused) else None
        if arriving is None or arriving != self._seen:
            self._seen, self._timer = arriving, self.loop.call_later(REQUEST_SECONDS, self._look)
            return
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):  # no answer begun: say why it ends
            text = f"A request's headers and body must arrive whole within {REQUEST_SECONDS:g} s: send it at once."
            head = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
            self.transport.write(f"{head}Content-Length: {len(text)}\r\n\r\n{text}".encode())
        self.transport.close()


#: How the course serves with uvicorn: no access log, warnings only, 2 s for open connections at the end, and slow
#: requests cut off.
QUIET_UVICORN = {"log_level": "warning", "access_log": False, "timeout_graceful_shutdown": 2, "http": RequestTimeout}


def bind_socket(host: str = LOOPBACK, port: int = 0) -> socket.socket:
    """A listening-ready TCP socket (TCP_NODELAY on, as uvicorn sets it); port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def server_url(host: str, port: int, path: str) -> str:
    """The URL a client connects to."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"
