"""Serve a FastMCP server over stdin/stdout so that every line gets its answer.

fastmcp's own stdio loop (``server.run("stdio")``) has two gaps a classroom
hits at once:

- a line it cannot read (not JSON, not JSON-RPC, too large) gets no reply at
  all; here it gets ``-32700`` or ``-32600`` (see :mod:`mcp_teach.transports.frames`);
- a request that carries no protocol version and comes before any handshake
  gets ``-32602 "Invalid request parameters"`` and nothing else; here it is told
  what is missing and how to fix it (see :mod:`mcp_teach.transports.envelope`);
- when stdin closes, requests still being handled are cancelled, so
  ``cat requests.jsonl | python -m mcp_teach.serve`` loses results; here every
  request already read is answered before the server exits.

Everything else is fastmcp's server, run on our streams.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from fastmcp import FastMCP
from fastmcp.server.context import reset_transport, set_transport
from mcp.shared.message import SessionMessage

from mcp_teach.transports.envelope import missing_envelope_keys, stdio_refusal
from mcp_teach.transports.frames import MAX_MESSAGE_BYTES, Rejected, check_frame, is_misplaced_notification, too_large

logger = logging.getLogger(__name__)
#: How long the server waits, after stdin closed, for answers to requests it already read.
DRAIN_SECONDS = 30.0


@dataclass(frozen=True)
class OversizedLine:
    """A line longer than the limit; only its size is kept."""

    size: int


def read_lines(read: Callable[[int], bytes], limit: int = MAX_MESSAGE_BYTES) -> Iterator[bytes | OversizedLine]:
    """Lines from ``read`` (e.g. ``os.read`` on fd 0), without their newline.

    A line over ``limit`` bytes is dropped as it streams in, never held whole
    in memory; only its size is reported.
    """
    buffer = bytearray()
    dropped = 0  # bytes of an oversized line already thrown away
    while chunk := read(1 << 16):
        searched = len(buffer)
        buffer += chunk
        while (end := buffer.find(b"\n", searched)) != -1:
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            searched = 0
            yield _finished(line, dropped, limit)
            dropped = 0
        if len(buffer) > limit:
            dropped += len(buffer)
            buffer.clear()
    if buffer or dropped:
        yield _finished(bytes(buffer), dropped, limit)


def _finished(line: bytes, dropped: int, limit: int) -> bytes | OversizedLine:
    size = dropped + len(line)
    return OversizedLine(size) if size > limit else line.removesuffix(b"\r")


class _PendingRequests:
    """Ids of requests read but not answered yet.

    The event to wait on exists only once stdin has closed: a session of sequential calls
    would otherwise make and set one per request.
    """

    def __init__(self) -> None:
        self._ids: set[types.RequestId] = set()
        self._all_answered: anyio.Event | None = None

    def add(self, id: types.RequestId) -> None:
        self._ids.add(id)

    def answered(self, id: types.RequestId | None) -> None:
        self._ids.discard(id)
        if not self._ids and self._all_answered is not None:
            self._all_answered.set()

    async def wait_until_answered(self, timeout: float) -> None:
        if self._ids:
            self._all_answered = anyio.Event()
            with anyio.move_on_after(timeout):
                await self._all_answered.wait()
        if self._ids:
            logger.warning("stdin closed; gave up waiting for %d unanswered request(s)", len(self._ids))


@dataclass
class LineReader:
    """What this server does with each line before fastmcp's server sees it: the message, or the refusal to send
    back (a line that is no JSON-RPC message, :mod:`~mcp_teach.transports.frames`; a request that belongs to
    neither era, :func:`~mcp_teach.transports.envelope.stdio_refusal`). One per connection: it remembers whether
    the handshake came, or a 2026-07-28 request. :class:`~mcp_teach.wire.raw_memory.RawMemoryServer` reads its
    lines with it too, so a line gets the same answer in memory as over a stdio pipe."""

    handshake_seen: bool = False
    modern_seen: bool = False

    def read(self, line: bytes | OversizedLine) -> Rejected | types.JSONRPCMessage:
        checked = too_large(line.size) if isinstance(line, OversizedLine) else check_frame(line)
        if isinstance(checked, types.JSONRPCRequest):
            if refusal := stdio_refusal(checked, self.handshake_seen, self.modern_seen):
                return refusal
            self.handshake_seen = self.handshake_seen or checked.method == "initialize"
            self.modern_seen = self.modern_seen or not (self.handshake_seen or missing_envelope_keys(checked.params))
        return checked


def _feed_lines(
    read: Callable[[int], bytes], send: MemoryObjectSendStream, token: anyio.lowlevel.EventLoopToken
) -> None:
    """Thread body: hand each line to the event loop; closing ``send`` at EOF.

    A daemon thread reading with ``os.read`` (no buffered file object, so no
    lock held): a read blocked on a terminal or pipe must not keep the process
    alive, or crash its shutdown, after Ctrl-C or SIGTERM.
    """
    with contextlib.suppress(RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        for line in read_lines(read):
            anyio.from_thread.run(send.send, line, token=token)
        anyio.from_thread.run(send.aclose, token=token)


async def _read_requests(
    lines: MemoryObjectReceiveStream,
    to_server: MemoryObjectSendStream,
    replies: MemoryObjectSendStream,
    pending: _PendingRequests,
) -> None:
    """Pass readable messages to the server, answer unreadable ones, and at EOF wait for pending answers."""
    reader = LineReader()
    async with to_server, replies, lines:
        async for line in lines:
            if line == b"":
                continue  # a blank line between messages
            checked = reader.read(line)
            if isinstance(checked, Rejected):
                await replies.send(SessionMessage(checked.reply))
                continue
            if isinstance(checked, types.JSONRPCRequest):
                pending.add(checked.id)
            elif isinstance(checked, types.JSONRPCNotification) and checked.method == "notifications/cancelled":
                pending.answered((checked.params or {}).get("requestId"))  # a cancelled request gets no answer
            elif is_misplaced_notification(checked):
                why = 'a request needs an "id" to get an answer (JSON-RPC never answers a notification)'
                logger.warning("ignored notification %r: %s", checked.method, why)
            await to_server.send(SessionMessage(checked))
        await pending.wait_until_answered(DRAIN_SECONDS)


async def _write_replies(messages: MemoryObjectReceiveStream, wire: BinaryIO, pending: _PendingRequests) -> None:
    """Write each outgoing message as one line; note which requests are answered."""
    async with messages:
        async for session_message in messages:
            message = session_message.message
            line = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            await anyio.to_thread.run_sync(_write_line, wire, line)
            if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                pending.answered(message.id)


def _write_line(wire: BinaryIO, line: bytes) -> None:
    wire.write(line)
    wire.flush()


@contextlib.contextmanager
def _wire_stdout() -> Iterator[BinaryIO]:
    """The real stdout for JSON-RPC; meanwhile fd 1 points at stderr, so a stray ``print`` cannot corrupt the wire."""
    sys.stdout.flush()
    wire_fd = os.dup(1)
    os.dup2(2, 1)
    wire = os.fdopen(wire_fd, "wb")
    try:
        yield wire
    finally:
        sys.stdout.flush()
        os.dup2(wire_fd, 1)
        wire.close()


async def serve_stdio(server: FastMCP, *, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve ``server`` on stdin/stdout (or the binary streams given) until stdin closes and all is answered."""
    pending = _PendingRequests()
    lines_in, lines_out = anyio.create_memory_object_stream[bytes | OversizedLine](0)
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    own_replies = server_writes.clone()
    read = stdin.read if stdin else functools.partial(os.read, 0)
    feed = (read, lines_in, anyio.lowlevel.current_token())
    reader = threading.Thread(target=_feed_lines, args=feed, name="mcp-teach stdin", daemon=True)
    token = set_transport("stdio")
    try:
        with contextlib.ExitStack() as stack:
            wire = stdout or stack.enter_context(_wire_stdout())
            # The same two steps as fastmcp's run_stdio_async, which offers no way to pass our own streams.
            async with anyio.create_task_group() as tasks, server._lifespan_manager():
                tasks.start_soon(_write_replies, outgoing, wire, pending)
                tasks.start_soon(_read_requests, lines_out, to_server, own_replies, pending)
                reader.start()
                await server._mcp_server.run(
                    server_reads, server_writes, server._mcp_server.create_initialization_options()
                )
    finally:
        reset_transport(token)
