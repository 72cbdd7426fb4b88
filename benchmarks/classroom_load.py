"""Classroom load: N clients x M calls against streamable-HTTP servers on loopback, side by side, every result checked.

Each server runs as its own process (``python -m mcp_teach.serve --transport
streamable-http --port 0``), so clients and server do not share an event loop:
one worker (the classic server) and W stateless workers (the large-class mode,
``--workers W --stateless``); with legacy clients also one stateless worker, to
separate what stateless costs from what workers bring. With ``--plain``, the
classic server instead runs beside a plain fastmcp server with the same tools
(:data:`PLAIN_SERVER`, fastmcp's own ``run()``), to show what our guards cost.
For every server and client era, N clients connect at once (``teaching_client``:
``server/discover`` or the ``initialize`` handshake, then ``tools/list``) and
stay connected. Then R rounds: in each, every (server, era) in turn has all its
N clients make M/R ``tools/call`` at once, era by era, the servers of an era
taking turns going first. Throughput and latency percentiles are medians over
the rounds, and each ratio is the median of per-round ratios of rounds run
seconds apart, so load from other programs weighs little; what they used of
the CPUs meanwhile is printed. This process collects its garbage between
rounds, not during them. Calls cycle through the four tools with operands
unique to (client, call); every result is compared exactly with the same
arithmetic done here. A call that raises, returns isError or a wrong value is
an error; a call with no answer within --timeout is lost. Exit code 1 if
anything was an error or lost, or a worker outlived SIGTERM.

    python benchmarks/classroom_load.py [--clients N] [--calls M] [--rounds R] [--workers W] [--mode auto|legacy|both]
    python benchmarks/classroom_load.py --plain --mode both [--token]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import importlib.metadata
import operator
import os
import platform
import re
import secrets
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.transports.class_mode import WORKER_READY
from mcp_teach.transports.in_process import serve_http

ERAS = ("auto", "legacy")
CLASSIC = "1 worker"
OPERATIONS: tuple[tuple[str, Callable[[int, int], float]], ...] = (
    ("calculator_add", operator.add),
    ("calculator_subtract", operator.sub),
    ("calculator_multiply", operator.mul),
    ("calculator_divide", operator.truediv),
)
URL_LINE = re.compile(r"on (http://\S+)")
START_TIMEOUT = 60  # seconds a server may take to print its URL and have every worker ready
PLAIN = "plain fastmcp"
#: CPUs other programs may keep busy before the comparison is flagged as noisy (ratios then spread by +-30 %).
BUSY_CPUS = 0.25
#: What the class server may cost against plain fastmcp: calls/s at least this share of plain's, p99 at most this.
MIN_RATE_RATIO, MAX_P99_RATIO = 0.95, 1.10
#: The yardstick: fastmcp's own ``run()`` serving the calculator's tools (same functions, names, titles and
#: descriptions, same server name) with fastmcp's defaults, so without the Host/Origin guard we turn on, our
#: JSON-RPC guard, class token and tool-error middleware. It is started with the same clean environment.
PLAIN_SERVER = """\
import sys

from fastmcp import FastMCP

from mcp_teach.servers.calculator import SERVER_INSTRUCTIONS, SERVER_NAME, SERVER_VERSION, TOOLS

mcp = FastMCP(SERVER_NAME, instructions=SERVER_INSTRUCTIONS, version=SERVER_VERSION)
for function, (title, description) in TOOLS.items():
    mcp.tool(function, title=title, description=description)
mcp.run(
    transport="streamable-http",
    host="127.0.0.1",
    port=int(sys.argv[1]),
    show_banner=False,
    log_level="WARNING",
    uvicorn_config={"access_log": False},
)
"""


def operation(client: int, call: int) -> tuple[str, dict[str, int], float]:
    """Tool, arguments and exact expected result of call ``call`` of client ``client``.

    ``a`` is unique per (client, call) (calls < 1000), so an answer delivered to the wrong client or
    request shows up as a wrong value.
    """
    tool, apply = OPERATIONS[(client + call) % len(OPERATIONS)]
    a, b = client * 1000 + call, call + 1
    return tool, {"a": a, "b": b}, apply(a, b)


def free_port() -> int:
    """A loopback port free right now, for a server that cannot be told to take any (fastmcp's ``run()``)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    """One TLS context for every client: httpx2 otherwise loads the CA bundle for each one (~20 ms of CPU), even
    for a plain http:// URL, and 100 clients connecting at once would mostly measure that."""
    return ssl.create_default_context()


def check_result(result: Any, expected: float) -> str | None:
    """Why ``result`` is not exactly ``expected``, or ``None``."""
    if result.is_error:
        return f"isError: {result.content[0].text if result.content else result}"
    got = (result.structured_content or {}).get("result")
    return None if got == expected else f"expected {expected!r}, got {got!r}"


def percentile_ms(values: list[float], share: float) -> float:
    """Nearest-rank percentile, in milliseconds."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return 1000 * ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


@dataclass
class LoadResult:
    """What N clients x M calls gave: timings, and every call accounted for."""

    era: str
    clients: int
    calls: int
    connect_s: list[float] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)
    verified: int = 0
    errors: int = 0
    lost: int = 0
    samples: list[str] = field(default_factory=list)
    round_walls_s: list[float] = field(default_factory=list)
    round_latencies_s: list[list[float]] = field(default_factory=list)

    def error(self, message: str, count: int = 1) -> None:
        """Count ``count`` errors and keep the first few messages."""
        self.errors += count
        if len(self.samples) < 5:
            self.samples.append(message)

    @property
    def expected(self) -> int:
        return self.clients * self.calls

    @property
    def clean(self) -> bool:
        """Every call verified, nothing else went wrong."""
        return self.verified == self.expected and self.errors == 0 and self.lost == 0

    @property
    def round_rates(self) -> list[float]:
        """Answered calls per second, round by round."""
        return [len(times) / wall for times, wall in zip(self.round_latencies_s, self.round_walls_s, strict=True)]

    @property
    def calls_per_s(self) -> float:
        """Median over the rounds of answered calls per second: a round slowed by another program weighs little."""
        return statistics.median(self.round_rates) if self.round_rates else 0.0

    def round_latencies_ms(self, share: float) -> list[float]:
        """Each round's latency percentile ``share``."""
        return [percentile_ms(times, share) for times in self.round_latencies_s]

    def latency_ms(self, share: float) -> float:
        """Median over the rounds of each round's latency percentile ``share`` (1.0: the slowest call of all)."""
        if share == 1.0:
            return percentile_ms(self.latencies_s, 1.0)
        return statistics.median(self.round_latencies_ms(share))


class Load:
    """``clients`` connected clients of one era, each making ``calls`` checked calls, in ``rounds`` on command.

    Each client lives in its own task (an MCP client must be closed by the task that opened it)::

        async with Load(url, clients=10, calls=6, rounds=2) as load:
            await load.run_round()
            await load.run_round()
        load.result
    """

    def __init__(
        self,
        url: str,
        *,
        clients: int,
        calls: int,
        rounds: int = 1,
        mode: str = "auto",
        timeout: float = 30.0,
        token: str | None = None,
    ) -> None:
        self.url, self.mode, self.timeout, self.token = url, mode, timeout, token
        self.result = LoadResult(mode, clients, calls)
        self._slices = [range(calls * r // rounds, calls * (r + 1) // rounds) for r in range(rounds)]
        self._go = [asyncio.Event() for _ in range(rounds)]
        self._finished = [0] * rounds
        self._round_done = [asyncio.Event() for _ in range(rounds)]
        self._arrived = 0
        self._all_arrived = asyncio.Event()
        self._next_round = 0
        self._aborted = False
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> Load:
        self._tasks = [asyncio.create_task(self._client(number)) for number in range(self.result.clients)]
        await self._all_arrived.wait()
        return self

    async def run_round(self) -> None:
        """All clients make their calls of the next round at once; returns when every one is done."""
        index, answered = self._next_round, len(self.result.latencies_s)
        self._next_round += 1
        began = time.perf_counter()
        self._go[index].set()
        await self._round_done[index].wait()
        self.result.round_walls_s.append(time.perf_counter() - began)
        self.result.round_latencies_s.append(self.result.latencies_s[answered:])

    async def __aexit__(self, *exc_info: object) -> None:
        self._aborted = self._next_round < len(self._go)  # rounds not run are skipped, not counted
        for event in self._go:
            event.set()
        await asyncio.gather(*self._tasks)

    def _arrive(self) -> None:
        self._arrived += 1
        if self._arrived == self.result.clients:
            self._all_arrived.set()

    def _finish(self, index: int) -> None:
        self._finished[index] += 1
        if self._finished[index] == self.result.clients:
            self._round_done[index].set()

    async def _client(self, number: int) -> None:
        result, began, rounds_done, connected = self.result, time.perf_counter(), 0, False
        try:
            async with teaching_client(
                self.url,
                mode=self.mode,
                auth=self.token,
                timeout=self.timeout,
                init_timeout=self.timeout,
                verify=shared_tls_context(),
            ) as client:
                await client.list_tools()  # as a student's app would; else the client sends its own later
                result.connect_s.append(time.perf_counter() - began)
                connected = True
                self._arrive()
                for index, calls in enumerate(self._slices):
                    await self._go[index].wait()
                    if self._aborted:
                        break
                    for call in calls:
                        await self._call(client, number, call)
                    self._finish(index)
                    rounds_done += 1
        except Exception as error:
            if connected:
                result.error(f"client {number}: {type(error).__name__}: {error}")
            else:  # none of its calls can be made
                result.error(f"client {number} could not connect: {type(error).__name__}: {error}", result.calls)
        finally:
            if not connected:
                self._arrive()
            for index in range(rounds_done, len(self._go)):
                self._finish(index)

    async def _call(self, client: Any, number: int, call: int) -> None:
        result = self.result
        tool, arguments, expected = operation(number, call)
        sent = time.perf_counter()
        try:
            answer = await client.call_tool(tool, arguments, raise_on_error=False)
        except MCPError as error:
            if error.code == REQUEST_TIMEOUT:
                result.lost += 1
            else:
                result.error(f"client {number} call {call}: {error}")
            return
        except Exception as error:
            result.error(f"client {number} call {call}: {type(error).__name__}: {error}")
            return
        result.latencies_s.append(time.perf_counter() - sent)
        problem = check_result(answer, expected)
        if problem:
            result.error(f"client {number} call {call}: {problem}")
        else:
            result.verified += 1


async def run_load(
    url: str, *, clients: int, calls: int, mode: str = "auto", timeout: float = 30.0, token: str | None = None
) -> LoadResult:
    """``clients`` clients connect at once, then all make ``calls`` checked calls from a common start."""
    async with Load(url, clients=clients, calls=calls, mode=mode, timeout=timeout, token=token) as load:
        await load.run_round()
    return load.result


class Server:
    """A calculator server process: started, waited for (every worker ready), stopped with SIGTERM.

    ``plain``: not ours but :data:`PLAIN_SERVER`, fastmcp's own ``run()`` with the same tools, the yardstick.
    """

    def __init__(self, label: str, workers: int = 1, stateless: bool = False, plain: bool = False) -> None:
        self.label, self.workers, self.stateless, self.plain = label, workers, stateless, plain
        self.url = ""
        self.process: psutil.Process | None = None
        self.orphans: list[int] = []
        self._stderr: list[str] = []
        self._ready = threading.Event()
        self._popen: subprocess.Popen[str] | None = None
        self._folder = tempfile.TemporaryDirectory(prefix="classroom-load-")
        self._port = 0  # a plain server's: it says nothing when it listens

    def start(self, token: str | None) -> None:
        """Start it in a clean environment and a folder without ``.env``; a plain server never sees ``token``."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "OPENAI_", "LLM_", "FASTMCP_"))}
        if self.plain:
            script = Path(self._folder.name, "plain_server.py")
            script.write_text(PLAIN_SERVER)
            self._port = free_port()
            self.url = f"http://127.0.0.1:{self._port}/mcp"
            argv = [sys.executable, str(script), str(self._port)]
        else:
            argv = [sys.executable, "-m", "mcp_teach.serve", "--transport", "streamable-http", "--port", "0"]
            argv += ["--workers", str(self.workers)] * (self.workers > 1) + ["--stateless"] * self.stateless
            env.update({"MCP_AUTH_TOKEN": token} if token else {})
        self._popen = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=self._folder.name, env=env
        )
        self.process = psutil.Process(self._popen.pid)
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self) -> None:
        assert self._popen is not None and self._popen.stderr is not None
        for line in self._popen.stderr:
            self._stderr.append(line)
            if self.plain:
                continue
            if match := URL_LINE.search(line):
                self.url = match.group(1)
            ready = sum(WORKER_READY in seen for seen in self._stderr)
            if self.url and (self.workers == 1 or ready == self.workers):
                self._ready.set()
        self._ready.set()  # it ended

    def wait_ready(self) -> None:
        """Until the URL is printed and every worker said it is ready (a plain server: until its port accepts)."""
        assert self._popen is not None
        if self.plain:
            self._wait_listening()
        if not self._ready.wait(START_TIMEOUT) or self._popen.poll() is not None:
            raise RuntimeError(f"{self.label}: the server did not start:\n{''.join(self._stderr)}")

    def _wait_listening(self) -> None:
        """fastmcp's ``run()`` prints nothing at log level WARNING: poll its port."""
        assert self._popen is not None
        deadline = time.monotonic() + START_TIMEOUT
        while self._popen.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self._port), timeout=1):
                self._ready.set()
                return
            time.sleep(0.05)

    def cpu_seconds(self) -> float:
        """User + system CPU of the server process and its workers so far (0 for a server in this process)."""
        total = 0.0
        for process in [self.process, *self.process.children(recursive=True)] if self.process else []:
            with contextlib.suppress(psutil.NoSuchProcess):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    def stop(self) -> None:
        """SIGTERM, wait; workers still alive 10 s later are recorded in ``orphans`` and killed."""
        if self._popen is not None:
            family = self.process.children(recursive=True) if self._popen.poll() is None else []
            self._popen.send_signal(signal.SIGTERM)
            try:
                self._popen.wait(START_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                self._popen.wait()
            _, alive = psutil.wait_procs(family, timeout=10)
            self.orphans = [process.pid for process in alive]
            for process in alive:
                process.kill()
        self._folder.cleanup()


@dataclass
class Row:
    """One (server, era) of the table, with the CPU its rounds used."""

    server: Server
    load: Load
    cpu_s: float | None = 0.0  # None: the server runs in this process, its CPU is in client_cpu_s
    client_cpu_s: float = 0.0

    @property
    def result(self) -> LoadResult:
        return self.load.result

    def per_call_ms(self, seconds: float | None) -> float | None:
        return None if seconds is None else 1000 * seconds / max(1, len(self.result.latencies_s))


async def connect(server: Server, era: str, args: argparse.Namespace, token: str | None) -> Load:
    """A warm-up (10 clients x 5 calls, not counted), then the N clients of this (server, era), not yet connected."""
    warm = await run_load(server.url, clients=min(args.clients, 10), calls=5, mode=era, token=token)
    if not warm.clean:
        print(f"  warm-up {server.label} {era}: {warm.errors} errors, {warm.lost} lost: {warm.samples}")
    options = {"clients": args.clients, "calls": args.calls, "rounds": args.rounds, "timeout": args.timeout}
    return Load(server.url, mode=era, token=token, **options)


@dataclass
class MachineLoad:
    """What the machine did during the rounds besides this benchmark: it is shared."""

    wall_s: float = 0.0
    busy_s: float = 0.0  # CPU time of every program
    ours_s: float = 0.0  # CPU time of this process and the servers

    @property
    def others_cpus(self) -> float:
        """CPUs kept busy by other programs, on average."""
        return max(0.0, self.busy_s - self.ours_s) / self.wall_s if self.wall_s else 0.0


def busy_seconds() -> float:
    """CPU time the whole machine has spent not idle since boot."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No garbage collection in this process during a round (it runs between rounds instead).

    With a few hundred clients connected, a full collection of the clients' objects took up to 0.9 s on a
    loaded machine: it stalled every client and landed on whichever server's round was running.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def round_order(rows: list[Row], index: int) -> list[Row]:
    """Round ``index``'s order: era by era, so rows compared with each other run seconds apart; within an era
    the servers take turns going first (ours, plain; plain, ours; ...), and so do the eras."""
    eras = list(dict.fromkeys(row.result.era for row in rows))
    order: list[Row] = []
    for era in eras[index % len(eras) :] + eras[: index % len(eras)]:
        group = [row for row in rows if row.result.era == era]
        order += group[index % len(group) :] + group[: index % len(group)]
    return order


async def measure(servers: list[Server], args: argparse.Namespace, token: str | None) -> tuple[list[Row], MachineLoad]:
    """Connect every (server, era), then run the rounds in alternating order (:func:`round_order`)."""
    rows: list[Row] = []
    machine = MachineLoad()
    async with contextlib.AsyncExitStack() as stack:
        for server in servers:
            for era in args.eras:
                load = await stack.enter_async_context(await connect(server, era, args, token))
                rows.append(Row(server, load, cpu_s=None if server.process is None else 0.0))
                print(f"  {server.label:<24} {era:<6} {args.clients} clients connected", flush=True)
        print("  rounds done:", end="", flush=True)
        gc.collect()
        gc.freeze()  # the connected clients: the collections between rounds need not scan them again
        began, busy, ours = time.perf_counter(), busy_seconds(), time.process_time()
        ours += sum(server.cpu_seconds() for server in servers)
        for index in range(args.rounds):
            for row in round_order(rows, index):
                gc.collect()
                cpu, client_cpu = row.server.cpu_seconds(), time.process_time()
                with collector_paused():
                    await row.load.run_round()
                if row.cpu_s is not None:
                    row.cpu_s += row.server.cpu_seconds() - cpu
                row.client_cpu_s += time.process_time() - client_cpu
            print(f" {index + 1}", end="", flush=True)
        machine.wall_s, machine.busy_s = time.perf_counter() - began, busy_seconds() - busy
        machine.ours_s = time.process_time() + sum(server.cpu_seconds() for server in servers) - ours
        print()
    return rows, machine


def print_environment() -> None:
    """Python, package versions, CPUs and load, so figures can be compared."""
    versions = []
    for name in ("fastmcp", "mcp", "httpx2", "uvicorn"):
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} -")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "-"
    print(f"python {platform.python_version()} on {platform.platform()}; {', '.join(versions)}")
    print(f"CPUs: {os.cpu_count()}  load average: {load}")


def print_table(rows: list[Row]) -> None:
    """One line per server and era."""
    header = (
        f"{'server':<24} {'era':<6} {'calls/s':>7} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'max ms':>7} "
        f"{'connect p50/max ms':>18} {'verified':>11} {'errors':>6} {'lost':>4}  CPU ms/call: server client"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        r = row.result
        connect = f"{percentile_ms(r.connect_s, 0.5):.0f}/{percentile_ms(r.connect_s, 1.0):.0f}"
        server_ms = row.per_call_ms(row.cpu_s)
        server_cpu = "in client" if server_ms is None else f"{server_ms:.2f}"
        print(
            f"{row.server.label:<24} {r.era:<6} {r.calls_per_s:>7.0f} {r.latency_ms(0.5):>7.1f} "
            f"{r.latency_ms(0.95):>7.1f} {r.latency_ms(0.99):>7.1f} "
            f"{r.latency_ms(1.0):>7.1f} {connect:>18} {r.verified:>5}/{r.expected:<5} "
            f"{r.errors:>6} {r.lost:>4}  {server_cpu:>19} {row.per_call_ms(row.client_cpu_s):>6.2f}"
        )
    print("calls/s and p50/p95/p99: median over the rounds; max: the slowest call of all; CPU: per answered call.")


def _median_and_range(ratios: list[float]) -> tuple[float, str]:
    return statistics.median(ratios), f"({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""


def print_comparison(rows: list[Row]) -> None:
    """Every server against the plain fastmcp one if there is one, else the classic one, era by era.

    Each ratio is the median over the rounds of that round's ratio (range in brackets): rounds of the two
    servers run seconds apart, so what other programs do weighs little. Against plain fastmcp the line
    ends with the course's targets: calls/s at least x0.95, p99 at most x1.10.
    """
    base_label = PLAIN if any(row.server.plain for row in rows) else CLASSIC
    base = {row.result.era: row for row in rows if row.server.label == base_label}
    for row in rows:
        reference = base.get(row.result.era)
        if reference is None or row is reference:
            continue
        r, b = row.result, reference.result

        def ratios(mine: list[float], theirs: list[float]) -> list[float]:
            return [m / t for m, t in zip(mine, theirs, strict=True)]

        rate, rate_range = _median_and_range(ratios(r.round_rates, b.round_rates))
        p50, _ = _median_and_range(ratios(r.round_latencies_ms(0.5), b.round_latencies_ms(0.5)))
        p99, p99_range = _median_and_range(ratios(r.round_latencies_ms(0.99), b.round_latencies_ms(0.99)))
        line = (
            f"{row.server.label:<24} {r.era:<6} vs {base_label}: calls/s x{rate:.2f} {rate_range:<11} "
            f"p50 x{p50:.2f}  p99 x{p99:.2f} {p99_range:<11}"
        )
        mine, theirs = row.per_call_ms(row.cpu_s), reference.per_call_ms(reference.cpu_s)
        if mine is not None and theirs:
            line += f"  server CPU per call x{mine / theirs:.2f}"
        if base_label == PLAIN:
            line += "  targets met" if rate >= MIN_RATE_RATIO and p99 <= MAX_P99_RATIO else "  targets MISSED"
        print(line)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--clients", type=int, default=100, help="concurrent clients per server and era (N, default 100)"
    )
    parser.add_argument("--calls", type=int, default=50, help="tools/call per client (M, default 50, at most 999)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds the calls are split into (R, default 10)")
    parser.add_argument(
        "--workers",
        type=int,
        default=max(2, os.cpu_count() or 2),
        help="workers of the large-class server (default: CPUs)",
    )
    parser.add_argument(
        "--mode",
        choices=("auto", "legacy", "both"),
        default="auto",
        help="client era: auto (2026-07-28, server/discover, default), legacy (2025-11-25 handshake) or both",
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before a call counts as lost (default 30)")
    parser.add_argument("--token", action="store_true", help="serve with a class token and send it (MCP_AUTH_TOKEN)")
    parser.add_argument("--in-process", action="store_true", help="also serve in this process, sharing its event loop")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="compare our 1-worker server with a plain fastmcp server with the same tools (no large-class servers)",
    )
    args = parser.parse_args(argv)
    if args.clients < 1 or not 1 <= args.rounds <= args.calls <= 999 or args.workers < 2:
        parser.error("need --clients >= 1, 1 <= --rounds <= --calls <= 999 and --workers >= 2")
    args.eras = ERAS if args.mode == "both" else (args.mode,)
    return args


async def main(argv: list[str] | None = None) -> int:
    """Start the servers, measure, print the table and the comparison; 1 if anything went wrong."""
    args = parse_args(argv)
    token = secrets.token_urlsafe(16) if args.token else None
    print_environment()
    print(
        f"{args.clients} clients x {args.calls} calls per server and era, in {args.rounds} rounds; era {args.mode}; "
        f"call timeout {args.timeout:.0f} s{'; class token' if token else ''}"
    )
    servers = [Server(CLASSIC)]
    if args.plain:
        servers.append(Server(PLAIN, plain=True))
    else:
        if "legacy" in args.eras:  # stateless changes nothing for 2026-07-28 clients
            servers.append(Server("1 worker, stateless", stateless=True))
        servers.append(Server(f"{args.workers} workers, stateless", args.workers, stateless=True))
    try:
        for server in servers:
            server.start(token)
        for server in servers:
            server.wait_ready()
        if args.in_process:
            in_process = Server("in-process (shared loop)")
            async with serve_http("streamable-http", token=token) as in_process.url:
                rows, machine = await measure([*servers, in_process], args, token)
        else:
            rows, machine = await measure(servers, args, token)
    finally:
        for server in servers:
            server.stop()
    print(
        f"during the rounds ({machine.wall_s:.0f} s): other programs kept {machine.others_cpus:.2f} of "
        f"{os.cpu_count()} CPUs busy on average; load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print()
    print_table(rows)
    print()
    print_comparison(rows)
    if machine.others_cpus > BUSY_CPUS:
        print(
            f"other programs used {machine.others_cpus:.2f} CPUs meanwhile: the ratios carry their noise (see the "
            "ranges); compare on a quieter machine"
        )
    problems = [row for row in rows if not row.result.clean]
    for row in problems:
        print(f"{row.server.label} {row.result.era}: {row.result.samples}")
    orphans = [pid for server in servers for pid in server.orphans]
    if orphans:
        print(f"worker processes left after SIGTERM (killed): {orphans}")
    return 1 if problems or orphans else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
