"""Does ``python -m mcp_teach.serve --transport stdio`` start, and answer, as fast as a plain fastmcp server?

Every stdio cell and test spawns the server, so its start is paid again and again. The yardstick is a plain
fastmcp script with the same four calculator tools (their source, names, titles and descriptions, the same
server name), served by fastmcp's own ``run("stdio", show_banner=False)``. It imports nothing of ours.

Each comparison runs in both protocol eras (2025-11-25: ``initialize`` + ``notifications/initialized``;
2026-07-28: ``server/discover``, then requests carrying the ``_meta`` envelope):

- ``raw``: spawn, open, one ``tools/call`` over raw pipes: wall time to its result, and the server's CPU by then;
- ``client``: ``teaching_client(stdio_transport())`` against a plain ``fastmcp.Client``: connect,
  ``tools/list``, one ``tools/call``;
- ``calls``: sequential ``tools/call`` in one long-lived session over raw pipes: the stdio loop's cost per call;
- ``instructions`` (not run by default, needs valgrind, ~8 min): instructions the server executes, counted by
  callgrind, to the first result and per call. They hardly depend on the machine's load, so they resolve
  differences of 0.1 %, which wall time on a shared machine cannot.

Measurements alternate ours and plain, the order swapping every round; each round's ours/plain ratio is kept
and their median printed with a 95 % confidence interval, next to the medians themselves.

    python benchmarks/server_start.py [--rounds R] [--calls N] [--call-rounds C] [--parts raw client calls]
    python benchmarks/server_start.py --parts instructions
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import importlib.util
import inspect
import json
import math
import os
import platform
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

import mcp_teach
from mcp_teach.client import teaching_client
from mcp_teach.servers import calculator
from mcp_teach.transports.in_process import stdio_transport
from mcp_teach.wire.raw_requests import raw_request

TARGET = 1.00  # ours / plain
ERAS = ("2025-11-25", "2026-07-28")
CLIENT_MODES = {"2025-11-25": "legacy", "2026-07-28": "auto"}
OURS, PLAIN = "ours", "plain"
PARTS = ("raw", "client", "calls", "instructions")
DEFAULT_PARTS = ("raw", "client", "calls")
REPLY_TIMEOUT = 600.0  # seconds; only stops a hung server (valgrind is ~50 times slower)
OURS_ARGV = [sys.executable, "-m", "mcp_teach.serve", "--transport", "stdio"]
PLAIN_TEMPLATE = """\
import math

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

{functions}

mcp = FastMCP({name!r}, instructions={instructions!r}, version={version!r})
for name, (title, description) in {tools!r}.items():
    mcp.tool(globals()[name], title=title, description=description)
mcp.run("stdio", show_banner=False)
"""
#: Lists the files of the mcp_teach modules that ``python -m mcp_teach.serve`` loads.
SERVER_MODULES_PROBE = (
    "import sys, mcp_teach.serve; "
    "print(*(m.__file__ for name, m in sys.modules.items() if name.partition('.')[0] == 'mcp_teach'))"
)


def plain_server_source() -> str:
    """The yardstick script: the calculator's tool functions, copied, on a bare ``FastMCP``."""
    functions = [calculator._finite, *calculator.TOOLS]
    return PLAIN_TEMPLATE.format(
        functions="\n\n".join(inspect.getsource(function) for function in functions),
        name=calculator.SERVER_NAME,
        instructions=calculator.SERVER_INSTRUCTIONS,
        version=calculator.SERVER_VERSION,
        tools={function.__name__: meta for function, meta in calculator.TOOLS.items()},
    )


def stale_bytecode() -> list[Path]:
    """Modules of our server whose ``.pyc`` is missing or older than the source.

    With ``PYTHONDONTWRITEBYTECODE`` set nobody rewrites it, so every spawn compiles these modules again.
    """
    files = subprocess.run([sys.executable, "-c", SERVER_MODULES_PROBE], capture_output=True, text=True, check=True)
    stale = []
    for source in map(Path, files.stdout.split()):
        cached = Path(importlib.util.cache_from_source(str(source)))
        stat = source.stat()
        expected = struct.pack("<II", int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)
        if not cached.is_file() or cached.read_bytes()[8:16] != expected:
            stale.append(source)
    return stale


def add_request(id: int, era: str, a: int = 1, b: int = 2) -> dict[str, Any]:
    """A ``tools/call`` of ``calculator_add`` as that era sends it."""
    arguments = {"name": "calculator_add", "arguments": {"a": a, "b": b}}
    return raw_request(id, "tools/call", arguments, envelope=era != "2025-11-25")


def check_sum(reply: dict[str, Any], expected: float) -> None:
    """Fail loudly unless ``reply`` is the result ``expected``: a fast wrong answer measures nothing."""
    result = reply.get("result") or {}
    if result.get("isError") or (result.get("structuredContent") or {}).get("result") != expected:
        raise RuntimeError(f"unexpected reply: {json.dumps(reply)[:300]}")


class RawSession:
    """A server process on raw pipes: one JSON line out, read lines until the reply with that id."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self._popen = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self._process = psutil.Process(self._popen.pid)

    def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line."""
        assert self._popen.stdin is not None
        self._popen.stdin.write(json.dumps(message).encode() + b"\n")
        self._popen.stdin.flush()

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request and return its reply (other lines, e.g. notifications, are skipped)."""
        assert self._popen.stdout is not None
        self.send(message)
        while line := self._popen.stdout.readline():
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                return reply
        raise RuntimeError(f"the server closed stdout before answering {message['method']}")

    def open(self, era: str) -> None:
        """The era's opening: the ``initialize`` handshake, or ``server/discover``."""
        if era == "2025-11-25":
            info = {"name": "server-start-benchmark", "version": "1"}
            params = {"protocolVersion": era, "capabilities": {}, "clientInfo": info}
            self.ask(raw_request(0, "initialize", params, envelope=False))
            self.send(raw_request(None, "notifications/initialized", envelope=False))
        else:
            self.ask(raw_request(0, "server/discover"))

    def add_calls(self, era: str, first_id: int, count: int) -> None:
        """``count`` sequential ``tools/call`` requests, each answer checked."""
        for id in range(first_id, first_id + count):
            check_sum(self.ask(add_request(id, era, id, 1)), id + 1.0)

    def cpu_seconds(self) -> float:
        """CPU the server has used so far (all its threads)."""
        times = self._process.cpu_times()
        return times.user + times.system

    def close(self) -> None:
        """Close stdin (the server's signal to stop) and wait for it."""
        assert self._popen.stdin is not None and self._popen.stdout is not None
        self._popen.stdin.close()
        try:
            self._popen.wait(timeout=REPLY_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._popen.kill()
            self._popen.wait()
        self._popen.stdout.close()


@dataclass
class Pairs:
    """One comparison in one era: ours and plain, measured in alternation."""

    label: str
    era: str
    unit: str
    scale: float
    values: dict[str, list[float]] = field(default_factory=lambda: {OURS: [], PLAIN: []})
    #: Server CPU seconds and how many results they bought (CPU is read in 10 ms ticks: only totals are precise).
    cpu: dict[str, list[tuple[float, int]]] = field(default_factory=lambda: {OURS: [], PLAIN: []})

    def add(self, server: str, value: float, cpu: tuple[float, int] | None = None) -> None:
        self.values[server].append(value)
        if cpu is not None:
            self.cpu[server].append(cpu)

    def median(self, server: str) -> float:
        return statistics.median(self.values[server])

    def cpu_per_result(self, server: str) -> float:
        """Per spawn the median; per call the total over all blocks (one block's 10 ms ticks are too coarse)."""
        samples = self.cpu[server]
        if all(count == 1 for _, count in samples):
            return statistics.median(seconds for seconds, _ in samples)
        return sum(seconds for seconds, _ in samples) / sum(count for _, count in samples)

    def round_ratios(self) -> list[float]:
        return [ours / plain for ours, plain in zip(self.values[OURS], self.values[PLAIN], strict=True)]

    def row(self) -> str:
        ratios = self.round_ratios()
        low, high = median_ci(ratios)
        ours, plain = self.median(OURS) * self.scale, self.median(PLAIN) * self.scale
        cpu = ""
        if self.cpu[OURS]:
            cpu_ours, cpu_plain = (self.cpu_per_result(name) * self.scale for name in (OURS, PLAIN))
            cpu = f"{cpu_ours:8.1f} {cpu_plain:8.1f}  {cpu_ours / cpu_plain:5.3f}"
        return (
            f"{self.label:<28} {self.era:<11} {ours:8.1f} {plain:8.1f} {self.unit:<3}"
            f" {ours / plain:6.3f}  {statistics.median(ratios):6.3f} {low:5.3f}-{high:5.3f}  {cpu}"
        )


def median_ci(values: list[float]) -> tuple[float, float]:
    """Distribution-free ~95 % confidence interval of the median, from order statistics."""
    ordered = sorted(values)
    count = len(ordered)
    half_width = 0.98 * math.sqrt(count)
    low_rank = max(1, math.floor(count / 2 - half_width))
    high_rank = min(count, math.ceil(1 + count / 2 + half_width))
    return ordered[low_rank - 1], ordered[high_rank - 1]


def in_turn(round_number: int) -> tuple[str, str]:
    """Ours first in even rounds, plain first in odd ones."""
    return (OURS, PLAIN) if round_number % 2 == 0 else (PLAIN, OURS)


def spawn_to_result(argv: list[str], era: str) -> tuple[float, tuple[float, int]]:
    """Seconds from spawn to the first ``tools/call`` result over raw pipes, and the server's CPU by then."""
    start = time.perf_counter()
    session = RawSession(argv)
    try:
        session.open(era)
        reply = session.ask(add_request(1, era))
        elapsed = time.perf_counter() - start
        cpu = session.cpu_seconds()
    finally:
        session.close()
    check_sum(reply, 3.0)
    return elapsed, (cpu, 1)


def bench_raw(argvs: dict[str, list[str]], rounds: int) -> list[Pairs]:
    """Spawn → first result over raw pipes, ``rounds`` times per server and era, after one untimed spawn each."""
    for argv in argvs.values():
        spawn_to_result(argv, ERAS[0])
    pairs = {era: Pairs("spawn → result, raw pipes", era, "ms", 1e3) for era in ERAS}
    for round_number in range(rounds):
        for era in ERAS:
            for server in in_turn(round_number):
                pairs[era].add(server, *spawn_to_result(argvs[server], era))
    return list(pairs.values())


async def client_to_result(make_client: Callable[[], Client]) -> float:
    """Seconds from ``async with client`` to the result of its first ``tools/call`` (after ``tools/list``)."""
    start = time.perf_counter()
    async with make_client() as client:
        await client.list_tools()
        result = await client.call_tool("calculator_add", {"a": 1, "b": 2})
        elapsed = time.perf_counter() - start
    if result.is_error or result.data != 3.0:
        raise RuntimeError(f"unexpected result: {result}")
    return elapsed


def client_factories(plain_script: Path, log_file: Path) -> dict[str, dict[str, Callable[[], Client]]]:
    """For each era, how to make ours (the course's client and transport) and plain (fastmcp's own)."""

    def ours(mode: str) -> Callable[[], Client]:
        return lambda: teaching_client(stdio_transport(log_file=log_file), mode=mode)

    def plain(mode: str) -> Callable[[], Client]:
        command = [str(plain_script)]
        return lambda: Client(StdioTransport(sys.executable, command, log_file=log_file, keep_alive=False), mode=mode)

    return {era: {OURS: ours(mode), PLAIN: plain(mode)} for era, mode in CLIENT_MODES.items()}


async def bench_client(factories: dict[str, dict[str, Callable[[], Client]]], rounds: int) -> list[Pairs]:
    """Connect + ``tools/list`` + first call, ``rounds`` times per server and era.

    One untimed run per era first: the benchmark's own first ``tools/call`` imports the client's schema checks.
    """
    for era in ERAS:
        await client_to_result(factories[era][PLAIN])
    pairs = {era: Pairs("spawn → result, Client", era, "ms", 1e3) for era in ERAS}
    for round_number in range(rounds):
        for era in ERAS:
            for server in in_turn(round_number):
                pairs[era].add(server, await client_to_result(factories[era][server]))
    return list(pairs.values())


def time_block(session: RawSession, era: str, calls: int, first_id: int) -> tuple[list[float], float]:
    """Seconds of each of ``calls`` sequential ``tools/call`` requests, and the server's CPU for the block."""
    times = []
    cpu_before = session.cpu_seconds()
    for id in range(first_id, first_id + calls):
        request = add_request(id, era, id, 1)
        start = time.perf_counter_ns()
        reply = session.ask(request)
        times.append((time.perf_counter_ns() - start) / 1e9)
        check_sum(reply, id + 1.0)
    return times, session.cpu_seconds() - cpu_before


def bench_calls(argvs: dict[str, list[str]], calls: int, rounds: int, warmup: int) -> list[Pairs]:
    """Per-call latency in one session per server and era, in alternating blocks of ``calls``."""
    sessions = {(era, server): RawSession(argv) for era in ERAS for server, argv in argvs.items()}
    try:
        for (era, _), session in sessions.items():
            session.open(era)
            session.add_calls(era, 1, warmup)
        pairs = {era: Pairs("per tools/call, one session", era, "µs", 1e6) for era in ERAS}
        next_id = warmup + 1
        for round_number in range(rounds):
            for era in ERAS:
                for server in in_turn(round_number):
                    times, cpu = time_block(sessions[era, server], era, calls, next_id)
                    pairs[era].add(server, statistics.median(times), (cpu, calls))
                next_id += calls
    finally:
        for session in sessions.values():
            session.close()
    return list(pairs.values())


def instructions(argv: list[str], era: str, calls: int) -> int:
    """Instructions the server executes under callgrind: start, open, ``calls`` tools/call, stop at EOF."""
    with tempfile.TemporaryDirectory(prefix="callgrind-") as folder:
        counts = Path(folder, "callgrind.out")
        valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={counts}"]
        session = RawSession([*valgrind, *argv], env={**os.environ, "PYTHONHASHSEED": "0"})
        try:
            session.open(era)
            session.add_calls(era, 1, calls)
        finally:
            session.close()
        found = re.search(r"^totals: (\d+)", counts.read_text(), re.MULTILINE)
        if found is None:
            raise RuntimeError(f"no instruction count in {counts}")
        return int(found.group(1))


def bench_instructions(argvs: dict[str, list[str]], calls: int) -> list[Pairs]:
    """Instructions to the first result (one call), and per call (the difference to a run with ``1 + calls``)."""
    rows = []
    for era in ERAS:
        start = Pairs("instructions to 1st result", era, "M", 1e-6)
        per_call = Pairs("instructions per tools/call", era, "k", 1e-3)
        for server in (OURS, PLAIN):
            first = instructions(argvs[server], era, 1)
            start.add(server, first)
            per_call.add(server, (instructions(argvs[server], era, 1 + calls) - first) / calls)
        rows += [start, per_call]
    return rows


def print_environment(plain_script: Path) -> None:
    """Python, package versions, the machine and what is compared, so figures can be compared."""
    names = ("fastmcp", "mcp", "anyio", "pydantic")
    packages = ", ".join(f"{name} {importlib.metadata.version(name)}" for name in names)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {platform.python_version()} on {platform.platform()}; {packages}")
    print(f"CPUs: {os.cpu_count()}  load average: {load}")
    print(f"ours:  {' '.join(OURS_ARGV[1:])}  (mcp_teach from {Path(mcp_teach.__file__).parent})")
    print(f"plain: {plain_script.name}, fastmcp's run('stdio'), the same tools")
    if stale := stale_bytecode():
        names = " ".join(path.name for path in stale)
        print(f"warning: no up-to-date .pyc for {names}: with PYTHONDONTWRITEBYTECODE set, every spawn of ours")
        print("compiles them again (~1 % of its start). Run: python -m compileall mcp_teach")


def print_table(rows: list[Pairs]) -> None:
    """The medians and ratios of every comparison."""
    header = (
        f"{'comparison':<28} {'era':<11} {'ours':>8} {'plain':>8} {'':<3} {'ratio':>6}  {'paired':>6} {'95% CI':>11}"
        f"  {'server CPU: ours plain ratio'}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(row.row())


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6, help="spawns per server and era (default 6)")
    parser.add_argument("--calls", type=int, default=100, help="calls per block, or per count (default 100)")
    parser.add_argument("--call-rounds", type=int, default=20, help="blocks per server and era (default 20)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls per session first (default 50)")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(DEFAULT_PARTS))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Measure the parts asked for, in a scratch folder without ``.env``, and print the table."""
    args = parse_args(argv)
    # Servers run in the scratch folder (stdio_transport() starts them in the current one): no .env found.
    with tempfile.TemporaryDirectory(prefix="server-start-") as folder, contextlib.chdir(folder):
        plain_script = Path(folder, "plain_calculator.py")
        plain_script.write_text(plain_server_source())
        argvs = {OURS: OURS_ARGV, PLAIN: [sys.executable, str(plain_script)]}
        print_environment(plain_script)
        rows: list[Pairs] = []
        if "raw" in args.parts:
            rows += bench_raw(argvs, args.rounds)
        if "client" in args.parts:
            rows += asyncio.run(bench_client(client_factories(plain_script, Path(folder, "stderr.log")), args.rounds))
        if "calls" in args.parts:
            rows += bench_calls(argvs, args.calls, args.call_rounds, args.warmup)
        if "instructions" in args.parts:
            rows += bench_instructions(argvs, args.calls)
    print()
    print_table(rows)
    print()
    print("ours, plain: medians (spawn parts: one value per spawn; per call: the median of each block of calls).")
    print("ratio: ours median / plain median. paired: median over rounds of ours / plain in the same round.")
    print("server CPU: user + system time of the server process: median per spawn; per call: total / calls.")
    print(f"target: ratio ≤ {TARGET:.2f}")


if __name__ == "__main__":
    main()
