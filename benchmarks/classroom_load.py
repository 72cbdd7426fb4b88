"""Classroom load: N clients x M calls against one streamable-HTTP server on loopback, every result checked.

Each server runs as its own process (``python -m mcp_teach.server --transport
streamable-http --port 0``), so clients and server do not share an event loop:
one worker (the classic server) and W stateless workers (the large-class mode,
``--workers W --stateless``); with legacy clients also one stateless worker, to
separate what stateless costs from what workers bring. For every server and
client era, N clients connect at once (``teaching_client``: ``server/discover``
or the ``initialize`` handshake, then ``tools/list``) and stay connected. Then
R rounds: in each, every (server, era) in turn has all its N clients make M/R
``tools/call`` at once, the order rotating every round. Throughput and latency
percentiles are medians over the rounds and the ratios compare rounds run
seconds apart, so load from other programs weighs little. Calls cycle through
the four tools with operands unique to (client, call); every result is
compared exactly with the same arithmetic done here. A call that raises,
returns isError or a wrong value is an error; a call with no answer within
--timeout is lost. Exit code 1 if anything was an error or lost, or a worker
outlived SIGTERM.

    python benchmarks/classroom_load.py [--clients N] [--calls M] [--rounds R] [--workers W] [--mode auto|legacy|both]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib.metadata
import operator
import os
import platform
import re
import secrets
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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


def operation(client: int, call: int) -> tuple[str, dict[str, int], float]:
    """Tool, arguments and exact expected result of call ``call`` of client ``client``.

    ``a`` is unique per (client, call) (calls < 1000), so an answer delivered to the wrong client or
    request shows up as a wrong value.
    """
    tool, apply = OPERATIONS[(client + call) % len(OPERATIONS)]
    a, b = client * 1000 + call, call + 1
    return tool, {"a": a, "b": b}, apply(a, b)


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

    def latency_ms(self, share: float) -> float:
        """Median over the rounds of each round's latency percentile ``share`` (1.0: the slowest call of all)."""
        if share == 1.0:
            return percentile_ms(self.latencies_s, 1.0)
        return statistics.median(percentile_ms(times, share) for times in self.round_latencies_s)


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
    """A calculator server process: started, waited for (every worker ready), stopped with SIGTERM."""

    def __init__(self, label: str, workers: int, stateless: bool) -> None:
        self.label, self.workers, self.stateless = label, workers, stateless
        self.url = ""
        self.process: psutil.Process | None = None
        self.orphans: list[int] = []
        self._stderr: list[str] = []
        self._ready = threading.Event()
        self._popen: subprocess.Popen[str] | None = None

    def start(self, token: str | None) -> None:
        """Start it in a clean environment and a folder without ``.env``."""
        argv = [sys.executable, "-m", "mcp_teach.server", "--transport", "streamable-http", "--port", "0"]
        argv += ["--workers", str(self.workers)] * (self.workers > 1) + ["--stateless"] * self.stateless
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "OPENAI_", "LLM_"))}
        env.update({"MCP_AUTH_TOKEN": token} if token else {})
        self._popen = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir(), env=env
        )
        self.process = psutil.Process(self._popen.pid)
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self) -> None:
        assert self._popen is not None and self._popen.stderr is not None
        for line in self._popen.stderr:
            self._stderr.append(line)
            if match := URL_LINE.search(line):
                self.url = match.group(1)
            ready = sum(WORKER_READY in seen for seen in self._stderr)
            if self.url and (self.workers == 1 or ready == self.workers):
                self._ready.set()
        self._ready.set()  # it ended

    def wait_ready(self) -> None:
        """Until the URL is printed and every worker said it is ready."""
        assert self._popen is not None
        if not self._ready.wait(START_TIMEOUT) or self._popen.poll() is not None:
            raise RuntimeError(f"{self.label}: the server did not start:\n{''.join(self._stderr)}")

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
        if self._popen is None:
            return
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


async def measure(servers: list[Server], args: argparse.Namespace, token: str | None) -> list[Row]:
    """Connect every (server, era), then run the rounds in rotating order."""
    rows: list[Row] = []
    async with contextlib.AsyncExitStack() as stack:
        for server in servers:
            for era in args.eras:
                load = await stack.enter_async_context(await connect(server, era, args, token))
                rows.append(Row(server, load, cpu_s=None if server.process is None else 0.0))
                print(f"  {server.label:<24} {era:<6} {args.clients} clients connected", flush=True)
        print("  rounds done:", end="", flush=True)
        for index in range(args.rounds):
            shift = index % len(rows)
            for row in rows[shift:] + rows[:shift]:
                cpu, client_cpu = row.server.cpu_seconds(), time.process_time()
                await row.load.run_round()
                if row.cpu_s is not None:
                    row.cpu_s += row.server.cpu_seconds() - cpu
                row.client_cpu_s += time.process_time() - client_cpu
            print(f" {index + 1}", end="", flush=True)
        print()
    return rows


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


def print_comparison(rows: list[Row]) -> None:
    """Every server against the classic one-worker server, era by era (median of per-round calls/s ratios)."""
    base = {row.result.era: row for row in rows if row.server.label == CLASSIC}
    for row in rows:
        reference = base.get(row.result.era)
        if reference is None or row is reference:
            continue
        r, b = row.result, reference.result
        ratios = [mine / theirs for mine, theirs in zip(r.round_rates, b.round_rates, strict=True)]
        spread = f"(rounds {min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""
        line = (
            f"{row.server.label:<24} {r.era:<6} vs {CLASSIC}: calls/s x{statistics.median(ratios):.2f} {spread:<18} "
            f"p50 x{r.latency_ms(0.5) / b.latency_ms(0.5):.2f}  p99 x{r.latency_ms(0.99) / b.latency_ms(0.99):.2f}"
        )
        mine, theirs = row.per_call_ms(row.cpu_s), reference.per_call_ms(reference.cpu_s)
        if mine is not None and theirs:
            line += f"  server CPU per call x{mine / theirs:.2f}"
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
    servers = [Server(CLASSIC, 1, False)]
    if "legacy" in args.eras:  # stateless changes nothing for 2026-07-28 clients
        servers.append(Server("1 worker, stateless", 1, True))
    servers.append(Server(f"{args.workers} workers, stateless", args.workers, True))
    try:
        for server in servers:
            server.start(token)
        for server in servers:
            server.wait_ready()
        if args.in_process:
            in_process = Server("in-process (shared loop)", 1, False)
            async with serve_http("streamable-http", token=token) as in_process.url:
                rows = await measure([*servers, in_process], args, token)
        else:
            rows = await measure(servers, args, token)
    finally:
        for server in servers:
            server.stop()
    print()
    print_table(rows)
    print()
    print_comparison(rows)
    problems = [row for row in rows if not row.result.clean]
    for row in problems:
        print(f"{row.server.label} {row.result.era}: {row.result.samples}")
    orphans = [pid for server in servers for pid in server.orphans]
    if orphans:
        print(f"worker processes left after SIGTERM (killed): {orphans}")
    return 1 if problems or orphans else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
