"""Measure what MCP costs in time: per-call latency, connect time, and the baselines around them.

Lesson 06 (the latency lab) calls these. Every sample is in **milliseconds**,
timed on the client with ``time.perf_counter_ns``; nothing here asserts how fast
anything must be. The measuring follows ``benchmarks/capture_overhead.py``:

- ``tools/list`` first (else the client sends its own after the first call),
  then untimed warm-up calls: the first ``tools/call`` of a process imports
  ``jsonschema`` (about a second), which is not what a call costs afterwards;
- several transports are measured in **interleaved blocks** (a few calls each, the
  order rotating), so load from other programs hits all of them alike.

::

    calls = await measure_transports(CONNECTIONS, calls=200, warmup=50)
    latency_table(calls)
    plot_call_latencies(calls)
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import json
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import mcp_types
import uvicorn
from fastmcp import Client
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from mcp_teach.client import CONNECTIONS, Connection, calculator_target, teaching_client
from mcp_teach.display.show import table
from mcp_teach.servers.calculator import build_calculator_server, calculator_add
from mcp_teach.transports.in_process import serve_http, stdio_transport, stop_in_process_server
from mcp_teach.transports.sockets import bind_socket, server_url
from mcp_teach.wire.capture import CaptureTransport

#: The call every sample makes: tiny arguments and result, so what is measured is overhead, not work.
CALL_TOOL = "calculator_add"
CALL_ARGUMENTS: dict[str, Any] = {"a": 1, "b": 2}
#: Per-call figures often quoted for MCP servers (ms), shown beside what was measured.
QUOTED_MS: dict[str, tuple[float, float]] = {"stdio": (5.0, 15.0), "HTTP": (50.0, 200.0)}
#: What one LLM call (one model turn) typically takes (ms).
LLM_CALL_MS = (300.0, 3000.0)
#: A network round trip, from a server in the same region to one on another continent (ms).
NETWORK_RTT_MS = (1.0, 150.0)

#: The echo child of :func:`pipe_echo_baseline`: copies each line from stdin to stdout, nothing else.
_ECHO_SCRIPT = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"""


# --------------------------------------------------------------------------- progress


class Progress:
    """A progress bar for a notebook cell (an ipywidgets ``IntProgress``); silent outside a kernel.

    The bar is displayed once at its starting state and then only its value
    changes, so a saved notebook's text output (``IntProgress(value=0, ...)``)
    is the same on every run.
    """

    def __init__(self, total: int, description: str) -> None:
        self.total = total
        self.done = 0
        self._bar = _display_bar(total, description)

    def advance(self, count: int = 1) -> None:
        """Move the bar ``count`` steps on."""
        self.done += count
        if self._bar is not None:
            self._bar.value = min(self.done, self.total)

    def finish(self) -> None:
        """Fill the bar and colour it green."""
        self.done = self.total
        if self._bar is not None:
            self._bar.value = self.total
            self._bar.bar_style = "success"


def _display_bar(total: int, description: str) -> Any:
    """An ``IntProgress`` shown in the current cell, or ``None`` when not inside a Jupyter kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    import ipywidgets
    from IPython.display import display

    bar = ipywidgets.IntProgress(value=0, min=0, max=total, description=description)
    display(bar)
    return bar


def _progress(progress: Progress | bool | None, total: int, description: str) -> Progress | None:
    """``True`` makes a bar, a :class:`Progress` is used as is, ``False``/``None`` means none."""
    if progress is True:
        return Progress(total, description)
    return progress or None


# --------------------------------------------------------------------------- tools/call


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
    bar = _progress(progress, calls, f"{connection}" if isinstance(connection, str) else "tools/call")
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
    bar = _progress(progress, calls * len(connections), "tools/call")
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


# --------------------------------------------------------------------------- connecting


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
    bar = _progress(progress, times, f"connect {connection}")
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
    bar = _progress(progress, times * len(connections), "connect")
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


# --------------------------------------------------------------------------- baselines


def pipe_echo_baseline(lines: int = 2000, *, warmup: int = 200, line: str | None = None) -> list[float]:
    """Milliseconds for one JSON line to go through a pipe to a plain Python process and back.

    The child only copies stdin to stdout: no MCP, no JSON parsing, no asyncio.
    This is the floor under stdio: pipes and two process switches. ``line`` defaults
    to a ``tools/call`` request like the one the client sends.
    """
    payload = ((line or _sample_request_line()).rstrip("\n") + "\n").encode()
    child = subprocess.Popen([sys.executable, "-c", _ECHO_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        samples = []
        for index in range(warmup + lines):
            start = time.perf_counter_ns()
            child.stdin.write(payload)
            child.stdin.flush()
            echoed = child.stdout.readline()
            elapsed = (time.perf_counter_ns() - start) / 1e6
            if echoed != payload:
                raise RuntimeError(f"the echo process sent back {echoed[:80]!r}")
            if index >= warmup:
                samples.append(elapsed)
        child.stdin.close()
        child.wait(timeout=10)
        return samples
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()


def _sample_request_line() -> str:
    """A ``tools/call`` request shaped like the one fastmcp sends (compact JSON, one line)."""
    message = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": CALL_TOOL, "arguments": CALL_ARGUMENTS, "_meta": {"progressToken": 3}},
    }
    return json.dumps(message, separators=(",", ":"))


async def _echo_app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """The smallest useful ASGI app: answers every POST with its own body."""
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _QuietServer(uvicorn.Server):
    """uvicorn that leaves signal handling to the host (kernel, test runner)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def _serve_echo() -> AsyncIterator[str]:
    """Serve :func:`_echo_app` on 127.0.0.1 inside the current event loop; yields its URL."""
    sock = bind_socket()
    config = uvicorn.Config(_echo_app, log_level="warning", access_log=False, lifespan="off")
    server = _QuietServer(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the echo server stopped before it accepted connections")
            await asyncio.sleep(0.005)
        yield server_url("127.0.0.1", sock.getsockname()[1], "/echo")
    finally:
        await stop_in_process_server(server, task, sock)


async def http_echo_baseline(requests: int = 200, *, warmup: int = 50, line: str | None = None) -> list[float]:
    """Milliseconds for one JSON POST to a trivial HTTP server on 127.0.0.1 and back: HTTP without MCP.

    Same HTTP client library (``httpx2``) and server (uvicorn, in this process) as
    the course's SSE and streamable-HTTP connections; the app just echoes the body.
    """
    payload = (line or _sample_request_line()).encode()
    headers = {"content-type": "application/json", "accept": "application/json"}
    samples = []
    async with _serve_echo() as url, httpx2.AsyncClient() as client:
        for index in range(warmup + requests):
            start = time.perf_counter_ns()
            response = await client.post(url, content=payload, headers=headers)
            elapsed = (time.perf_counter_ns() - start) / 1e6
            if response.content != payload:
                raise RuntimeError(f"the echo server answered {response.status_code} {response.content[:80]!r}")
            if index >= warmup:
                samples.append(elapsed)
    return samples


# --------------------------------------------------------------------------- the pieces of one call


async def measure_pieces(repeat: int = 1000) -> dict[str, list[float]]:
    """Milliseconds of each building block one ``tools/call`` goes through, timed on its own ``repeat`` times.

    The messages are the real request and result of ``calculator_add`` (captured
    in-memory first) and the schema is the tool's real output schema.
    """
    probe = CaptureTransport(build_calculator_server())
    async with teaching_client(probe) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        await client.call_tool(CALL_TOOL, CALL_ARGUMENTS)
    request = probe.capture.requests("tools/call")[0]
    response = probe.capture.response_to(request)
    request_line = json.dumps(request.message, separators=(",", ":"))
    parsed = mcp_types.jsonrpc_message_adapter.validate_json(request_line, by_name=False)
    validator = _validator(tools[CALL_TOOL].output_schema)
    structured = response.message["result"]["structuredContent"]
    arguments = (float(CALL_ARGUMENTS["a"]), float(CALL_ARGUMENTS["b"]))

    def timed(operation: Callable[[], Any]) -> list[float]:
        samples = []
        for _ in range(repeat):
            start = time.perf_counter_ns()
            operation()
            samples.append((time.perf_counter_ns() - start) / 1e6)
        return samples

    pieces = {
        "the tool function itself": timed(lambda: calculator_add(*arguments)),
        "json: parse + write the request line": timed(lambda: json.dumps(json.loads(request_line))),
        "pydantic: JSON line → JSON-RPC message": timed(
            lambda: mcp_types.jsonrpc_message_adapter.validate_json(request_line, by_name=False)
        ),
        "pydantic: JSON-RPC message → JSON line": timed(
            lambda: parsed.model_dump_json(by_alias=True, exclude_unset=True)
        ),
        "jsonschema: check the result's structuredContent": timed(lambda: list(validator.iter_errors(structured))),
    }
    pieces["asyncio: a message to another task and back"] = await _time_task_hops(repeat)
    pieces["a worker thread runs the (sync) tool"] = await _time_thread_hops(repeat, arguments)
    return pieces


#: What :func:`count_steps` counts, by the name of the profiled function.
_STEP_NAMES: dict[str, tuple[str, ...]] = {
    "event-loop turns": ("_run_once",),
    "pydantic validations": ("'validate_python' of", "'validate_json' of", "'validate_strings' of"),
    "pydantic serialisations": ("'to_python' of", "'to_json' of"),
}


async def count_steps(calls: int = 100) -> dict[str, float]:
    """Per in-memory ``tools/call``: Python function calls, event-loop turns, pydantic validations and serialisations.

    Counted with ``cProfile`` in this thread (client and in-memory server both run
    here; the tool itself runs in a worker thread and is not counted). cProfile
    counts every resumption of a coroutine as a call, hence "function calls and
    coroutine steps". Counts, not times: they depend on the library versions, not the machine.
    """
    async with teaching_client(build_calculator_server()) as client:
        await warm_up(client, 20)
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            await time_calls(client, calls)
        finally:
            profiler.disable()
    stats = pstats.Stats(profiler)
    counts = {"Python function calls and coroutine steps": stats.total_calls / calls}
    for label, names in _STEP_NAMES.items():
        found = sum(
            entry[1]
            for (_, _, function), entry in stats.stats.items()  # type: ignore[attr-defined]
            if any(function == name or function.startswith(f"<method {name}") for name in names)
        )
        counts[label] = found / calls
    return counts


def _validator(schema: dict[str, Any]) -> Any:
    """A compiled jsonschema validator, as the MCP client session keeps one per tool."""
    from jsonschema.validators import validator_for

    return validator_for(schema)(schema)


async def _time_task_hops(repeat: int) -> list[float]:
    """Round trips through two anyio memory streams to an echo task: what each internal hop of a call costs."""
    to_echo, echo_inbox = anyio.create_memory_object_stream[Any](1)
    echo_outbox, from_echo = anyio.create_memory_object_stream[Any](1)

    async def echo() -> None:
        async with echo_inbox, echo_outbox:
            async for item in echo_inbox:
                await echo_outbox.send(item)

    samples = []
    async with anyio.create_task_group() as group:
        group.start_soon(echo)
        async with to_echo, from_echo:
            for _ in range(repeat):
                start = time.perf_counter_ns()
                await to_echo.send("ping")
                await from_echo.receive()
                samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


async def _time_thread_hops(repeat: int, arguments: tuple[float, float]) -> list[float]:
    """fastmcp runs a plain ``def`` tool in a worker thread: the hand-over there and back, timed."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        await anyio.to_thread.run_sync(calculator_add, *arguments)
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


# --------------------------------------------------------------------------- summaries and tables


def summarise(samples: Sequence[float]) -> dict[str, float]:
    """``count``, ``median``, ``p90``, ``p99``, ``mean``, ``min`` and ``max`` of some samples."""
    if not samples:
        raise ValueError("no samples to summarise")
    ordered = sorted(samples)
    if len(ordered) == 1:
        p90 = p99 = ordered[0]
    else:
        cuts = statistics.quantiles(ordered, n=100, method="inclusive")
        p90, p99 = cuts[89], cuts[98]
    return {
        "count": len(ordered),
        "median": statistics.median(ordered),
        "p90": p90,
        "p99": p99,
        "mean": statistics.fmean(ordered),
        "min": ordered[0],
        "max": ordered[-1],
    }


def format_ms(value: float) -> str:
    """A duration in ms with about three significant digits: ``0.017``, ``1.24``, ``12.5``, ``563``."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def latency_table(results: Mapping[str, Sequence[float]], *, unit: str = "ms") -> Any:
    """One row per measured thing: samples, median, p90, p99, mean; ``unit`` is ``"ms"`` or ``"µs"``."""
    scale = {"ms": 1.0, "µs": 1000.0}[unit]
    rows = []
    for name, samples in results.items():
        stats = summarise(samples)
        values = [format_ms(stats[key] * scale) for key in ("median", "p90", "p99", "mean")]
        rows.append([name, stats["count"], *values])
    return table(["measured", "samples", f"median {unit}", f"p90 {unit}", f"p99 {unit}", f"mean {unit}"], rows)


def line_bytes(message: Mapping[str, Any]) -> int:
    """Size in bytes of a message written as one compact JSON line (as on the stdio wire, newline excluded)."""
    return len(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode())


def medians(results: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """The median of each entry."""
    return {name: statistics.median(samples) for name, samples in results.items()}


# --------------------------------------------------------------------------- plots


def _box_axes(axes: Any, results: Mapping[str, Sequence[float]], ylabel: str) -> None:
    """One box per entry on a log scale (whiskers at p1 and p99), with every sample as a faint dot."""
    names = list(results)
    data = [list(results[name]) for name in names]
    drawn = axes.boxplot(data, tick_labels=names, whis=(1, 99), showfliers=False, medianprops={"color": "#cf222e"})
    for name, box in zip(names, drawn["boxes"], strict=True):
        box.set_gid(f"box:{name}")  # lets tests (and curious students) find each box
    for position, samples in enumerate(data, start=1):
        offsets = [position + 0.25 * ((index * 0.618) % 1 - 0.5) for index in range(len(samples))]
        axes.scatter(offsets, samples, s=4, alpha=0.25, color="#1f6feb", linewidths=0)
    axes.set_yscale("log")
    axes.set_ylabel(ylabel)
    axes.grid(axis="y", which="both", alpha=0.3)
    axes.tick_params(axis="x", labelrotation=15)


def plot_call_latencies(
    results: Mapping[str, Sequence[float]],
    *,
    quoted: Mapping[str, tuple[float, float]] | None = QUOTED_MS,
    title: str = "One tools/call, measured on this machine",
) -> Figure:
    """Box plot of per-call latency, one box per entry of ``results``, log scale.

    ``quoted`` ranges (default: the figures often quoted for stdio and HTTP) are
    drawn as shaded bands behind the boxes; ``None`` leaves them out.
    """
    figure = Figure(figsize=(9, 4.5), layout="constrained")
    axes = figure.add_subplot()
    for (label, (low, high)), colour in zip((quoted or {}).items(), ("#bf8700", "#8250df"), strict=False):
        axes.axhspan(low, high, color=colour, alpha=0.15, linewidth=0)
        axes.text(0.55, (low * high) ** 0.5, f"often quoted: {label} {low:g}–{high:g} ms", va="center", fontsize=9)
    _box_axes(axes, results, "milliseconds per call (log scale)")
    axes.set_title(title)
    return figure


def plot_connect_times(
    results: Mapping[str, Sequence[float]], *, title: str = "Connecting a new client, measured on this machine"
) -> Figure:
    """Box plot of connect times, one box per entry of ``results``, log scale."""
    figure = Figure(figsize=(9, 4), layout="constrained")
    axes = figure.add_subplot()
    _box_axes(axes, results, "milliseconds per connect (log scale)")
    axes.set_title(title)
    return figure


@dataclass(frozen=True)
class Scale:
    """One bar of :func:`plot_time_scales`: a range in ms, measured here or quoted."""

    label: str
    low: float
    high: float
    measured: bool


def scale_of(label: str, samples: Sequence[float]) -> Scale:
    """A measured :class:`Scale` from samples: p10 to p90 (a single sample gives a point)."""
    ordered = sorted(samples)
    if len(ordered) < 2:
        return Scale(label, ordered[0], ordered[0], True)
    cuts = statistics.quantiles(ordered, n=10, method="inclusive")
    return Scale(label, cuts[0], cuts[-1], True)


def plot_time_scales(scales: Sequence[Scale], *, title: str = "Where the time goes, on one log scale") -> Figure:
    """Horizontal ranges on a log axis: measured ones in blue, quoted ones in orange."""
    figure = Figure(figsize=(9, 0.45 * len(scales) + 1.4), layout="constrained")
    axes = figure.add_subplot()
    for row, scale in enumerate(reversed(scales)):
        colour = "#1f6feb" if scale.measured else "#bc4c00"
        width = max(scale.high - scale.low, scale.low * 0.15)  # a point still shows as a thin bar
        bars = axes.barh(row, width, left=scale.low, height=0.6, color=colour, alpha=0.8)
        bars.patches[0].set_gid(f"scale:{scale.label}")
    axes.set_yticks(range(len(scales)), [scale.label for scale in reversed(scales)])
    axes.set_xscale("log")
    axes.set_xlim(min(scale.low for scale in scales) / 3, max(scale.high for scale in scales) * 3)
    axes.set_xlabel("milliseconds (log scale)")
    axes.grid(axis="x", which="major", alpha=0.3)
    axes.set_title(title)
    handles = [
        Patch(color="#1f6feb", alpha=0.8, label="measured here (p10–p90)"),
        Patch(color="#bc4c00", alpha=0.8, label="often quoted / typical"),
    ]
    axes.legend(handles=handles, loc="upper right", fontsize=9)
    return figure


def perspective(
    calls: Mapping[str, Sequence[float]],
    connects: Mapping[str, Sequence[float]] | None = None,
    *,
    pipe: Sequence[float] | None = None,
    http_echo: Sequence[float] | None = None,
    first_call_ms: float | None = None,
) -> list[Scale]:
    """The rows of :func:`plot_time_scales`: what was measured here beside the figures often quoted."""
    scales = []
    if pipe:
        scales.append(scale_of("a JSON line through a pipe (plain Python)", pipe))
    if http_echo:
        scales.append(scale_of("an HTTP POST on 127.0.0.1 (no MCP)", http_echo))
    scales += [scale_of(f"tools/call, {name}", samples) for name, samples in calls.items()]
    scales += [Scale(f"often quoted: tools/call over {name}", *QUOTED_MS[name], False) for name in QUOTED_MS]
    scales.append(Scale("network round trip (same region … other continent)", *NETWORK_RTT_MS, False))
    scales += [scale_of(f"connect, {name}", samples) for name, samples in (connects or {}).items()]
    if first_call_ms is not None:
        scales.append(Scale("first tools/call of a new process", first_call_ms, first_call_ms, True))
    scales.append(Scale("one LLM call", *LLM_CALL_MS, False))
    return scales
