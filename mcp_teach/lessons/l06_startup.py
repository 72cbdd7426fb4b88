"""What starting costs (lesson 06): connecting fresh clients on each transport, and a new process's first call.

Every figure is in milliseconds, timed with ``time.perf_counter_ns``.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from mcp_teach.client import CONNECTIONS, Connection, teaching_client
from mcp_teach.lessons.l06_calls import CALL_ARGUMENTS, CALL_TOOL
from mcp_teach.lessons.l06_progress import Progress, progress_bar
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http, stdio_transport


@contextlib.asynccontextmanager
async def _fresh_targets(connection: Connection) -> AsyncIterator[Callable[[], Any]]:
    """A factory of targets for new connections: one server kept running, or one stdio process per client."""
    if connection in ("sse", "streamable-http"):
        async with serve_http(connection) as url:
            yield lambda: url
    elif connection == "stdio":
        yield stdio_transport
    elif connection == "in-memory":
        server = build_calculator_server()
        yield lambda: server
    else:
        raise ValueError(f"unknown connection {connection!r}: choose one of {', '.join(CONNECTIONS)}")


async def _time_connect(target: Any) -> float:
    """Milliseconds from opening a client until it can send its first request (the close is not timed)."""
    client = teaching_client(target)
    start = time.perf_counter_ns()
    async with client:
        elapsed = (time.perf_counter_ns() - start) / 1e6
    return elapsed


async def measure_connect(
    connection: Connection, times: int = 5, *, progress: Progress | bool | None = None
) -> list[float]:
    """Connect time (ms) of ``times`` fresh clients, one after the other.

    Timed: everything before the first request can go out (stdio: spawning the
    server process and its imports; HTTP: the TCP connection; always the first
    exchange, ``server/discover`` or ``initialize``). HTTP servers are started once, before timing.
    """
    bar = progress_bar(progress, times, f"connect {connection}")
    samples = []
    async with _fresh_targets(connection) as target:
        for _ in range(times):
            samples.append(await _time_connect(target()))
            if bar is not None:
                bar.advance()
    if bar is not None:
        bar.finish()
    return samples


async def measure_connects(
    connections: Sequence[Connection] = CONNECTIONS, times: int = 5, *, progress: Progress | bool | None = True
) -> dict[str, list[float]]:
    """Connect time (ms) on several transports, one connection of each per round, ``times`` rounds."""
    bar = progress_bar(progress, times * len(connections), "connect")
    samples: dict[str, list[float]] = {connection: [] for connection in connections}
    async with contextlib.AsyncExitStack() as stack:
        targets = {c: await stack.enter_async_context(_fresh_targets(c)) for c in connections}
        for _ in range(times):
            for connection in connections:
                samples[connection].append(await _time_connect(targets[connection]()))
                if bar is not None:
                    bar.advance()
    if bar is not None:
        bar.finish()
    return samples


def first_call_in_fresh_process(timeout: float = 120) -> dict[str, float]:
    """What a brand-new Python process pays, step by step (ms): imports, connect, first and second call.

    Runs a child ``python`` that imports fastmcp and the course, connects in-memory,
    lists the tools and calls ``calculator_add`` twice. ``whole process`` is the
    parent's wall-clock time from start to exit, interpreter start-up included.
    """
    script = _FIRST_CALL_SCRIPT.format(tool=CALL_TOOL, arguments=CALL_ARGUMENTS)
    start = time.perf_counter_ns()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, check=False)
    whole = (time.perf_counter_ns() - start) / 1e6
    if done.returncode != 0:
        raise RuntimeError(f"the child process failed:\n{done.stderr}")
    steps: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    steps["whole process"] = whole
    return steps


_FIRST_CALL_SCRIPT = """
import time
started = time.perf_counter_ns()
import asyncio, json
import fastmcp
imported_fastmcp = time.perf_counter_ns()
from mcp_teach.client import teaching_client
from mcp_teach.servers.calculator import build_calculator_server
imported = time.perf_counter_ns()

def ms(a, b):
    return (b - a) / 1e6

async def main():
    server = build_calculator_server()
    t0 = time.perf_counter_ns()
    async with teaching_client(server) as client:
        t1 = time.perf_counter_ns()
        await client.list_tools()
        t2 = time.perf_counter_ns()
        await client.call_tool({tool!r}, {arguments!r})
        t3 = time.perf_counter_ns()
        await client.call_tool({tool!r}, {arguments!r})
        t4 = time.perf_counter_ns()
    print(json.dumps({{
        "import fastmcp": ms(started, imported_fastmcp),
        "import the course's server and client": ms(imported_fastmcp, imported),
        "connect (in-memory)": ms(t0, t1),
        "tools/list": ms(t1, t2),
        "first tools/call": ms(t2, t3),
        "second tools/call": ms(t3, t4),
    }}))

asyncio.run(main())
"""
