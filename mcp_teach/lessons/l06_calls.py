"""Per-call latency of ``tools/call``, on one transport or several side by side (lesson 06).

Every sample is the same call (:data:`CALL_TOOL` with :data:`CALL_ARGUMENTS`; :func:`line_bytes` gives the size
of its messages), in **milliseconds**, timed on the client with ``time.perf_counter_ns``;
nothing here asserts how fast anything must be. The measuring follows
``benchmarks/capture_overhead.py``:

- ``tools/list`` first (else the client sends its own after the first call),
  then untimed warm-up calls: the first ``tools/call`` of a process imports
  ``jsonschema`` (about a second), which is not what a call costs afterwards;
- several transports are measured in **interleaved blocks** (a few calls each, the
  order rotating), so load from other programs hits all of them alike.

::

    calls = await measure_transports(CONNECTIONS, calls=200, warmup=50)
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fastmcp import Client

from mcp_teach.client import CONNECTIONS, Connection, calculator_target, teaching_client
from mcp_teach.lessons.l06_progress import Progress, progress_bar
from mcp_teach.wire.capture import CaptureTransport

#: The call every sample makes: tiny arguments and result, so what is measured is overhead, not work.
CALL_TOOL = "calculator_add"
CALL_ARGUMENTS: dict[str, Any] = {"a": 1, "b": 2}


def line_bytes(message: Mapping[str, Any]) -> int:
    """Size in bytes of a message written as one compact JSON line (as on the stdio wire, newline excluded)."""
    return len(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode())


async def time_calls(
    client: Client, count: int, *, tool: str = CALL_TOOL, arguments: Mapping[str, Any] | None = None
) -> list[float]:
    """Milliseconds of each of ``count`` sequential ``tools/call`` requests on a connected client."""
    arguments = dict(CALL_ARGUMENTS if arguments is None else arguments)
    samples = []
    for _ in range(count):
        start = time.perf_counter_ns()
        await client.call_tool(tool, arguments)
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


async def warm_up(
    client: Client, calls: int, *, tool: str = CALL_TOOL, arguments: Mapping[str, Any] | None = None
) -> None:
    """``tools/list``, then ``calls`` untimed calls: pays the one-off costs before measuring."""
    await client.list_tools()
    await time_calls(client, calls, tool=tool, arguments=arguments)


def _blocks(total: int, size: int) -> Iterator[int]:
    """Split ``total`` calls into blocks of at most ``size``."""
    for start in range(0, total, size):
        yield min(size, total - start)


async def measure_calls(
    connection: Connection | Client,
    calls: int = 200,
    warmup: int = 50,
    *,
    capture: bool = False,
    tool: str = CALL_TOOL,
    arguments: Mapping[str, Any] | None = None,
    progress: Progress | bool | None = None,
) -> list[float]:
    """Per-call latency (ms) of ``calls`` sequential ``tools/call`` requests after ``warmup`` untimed ones.

    ``connection`` is a name from :data:`~mcp_teach.client.CONNECTIONS` (a fresh
    calculator is started and stopped; ``capture=True`` puts a ``CaptureTransport``
    in between) or an already connected ``fastmcp.Client`` (any server: pass its
    ``tool`` and ``arguments``). The default call is ``calculator_add(a=1, b=2)``.
    """
    bar = progress_bar(progress, calls, f"{connection}" if isinstance(connection, str) else "tools/call")
    if not isinstance(connection, str):
        return await _measure_client(connection, calls, warmup, tool, arguments, bar)
    async with calculator_target(connection) as target:
        wrapped = CaptureTransport(target) if capture else target
        async with teaching_client(wrapped) as client:
            return await _measure_client(client, calls, warmup, tool, arguments, bar)


async def _measure_client(
    client: Client,
    calls: int,
    warmup: int,
    tool: str,
    arguments: Mapping[str, Any] | None,
    bar: Progress | None,
) -> list[float]:
    await warm_up(client, warmup, tool=tool, arguments=arguments)
    samples: list[float] = []
    for size in _blocks(calls, 20):
        samples += await time_calls(client, size, tool=tool, arguments=arguments)
        if bar is not None:
            bar.advance(size)
    if bar is not None:
        bar.finish()
    return samples


async def measure_transports(
    connections: Sequence[Connection] = CONNECTIONS,
    calls: int = 200,
    warmup: int = 50,
    *,
    block: int = 20,
    progress: Progress | bool | None = True,
) -> dict[str, list[float]]:
    """Per-call latency (ms) on several transports, measured side by side.

    All clients connect first and warm up; then blocks of ``block`` calls per
    transport alternate, the order rotating every round, until each has made
    ``calls`` timed calls. Slow moments of a shared machine hit every transport.
    """
    bar = progress_bar(progress, calls * len(connections), "tools/call")
    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for connection in connections:
            target = await stack.enter_async_context(calculator_target(connection))
            clients[connection] = await stack.enter_async_context(teaching_client(target))
        for client in clients.values():
            await warm_up(client, warmup)
        samples: dict[str, list[float]] = {connection: [] for connection in connections}
        for round_index, size in enumerate(_blocks(calls, block)):
            shift = round_index % len(connections)
            for connection in [*connections[shift:], *connections[:shift]]:
                samples[connection] += await time_calls(clients[connection], size)
                if bar is not None:
                    bar.advance(size)
    if bar is not None:
        bar.finish()
    return samples
