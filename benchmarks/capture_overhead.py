"""How much does CaptureTransport add to one ``tools/call``?

For each transport (in-memory, stdio, SSE, streamable HTTP) the script connects
side by side an uncaptured client, a captured one (on SSE and streamable HTTP
also one with ``record_http=False``) and a second uncaptured client as a
control, warms them up, then times ``calculator_add`` in alternating blocks:
R rounds of N calls per client, the order rotating every round, every capture
cleared after its block. It prints the median per call and the
captured/uncaptured ratio against the target (capture adds at most 3 %).

    python benchmarks/capture_overhead.py [--calls N] [--rounds R] [--transports memory stdio sse http]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import math
import os
import platform
import statistics
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastmcp import Client

from mcp_teach.client import teaching_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http, stdio_transport
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.messages import Capture

TARGET = 1.03  # captured / uncaptured: capture may add at most 3 % per call
TOOL, ARGUMENTS = "calculator_add", {"a": 1, "b": 2}
TRANSPORT_NAMES = ("memory", "stdio", "sse", "http")
CONTROL = "control: 2nd uncaptured"


@dataclass
class Variant:
    """One connected client of a transport and everything measured on it."""

    label: str
    client: Client
    capture: Capture | None = None
    times_ns: list[int] = field(default_factory=list)
    round_medians: list[float] = field(default_factory=list)
    messages_per_round: list[int] = field(default_factory=list)
    http_per_round: list[int] = field(default_factory=list)
    open_exchanges: dict[int, HttpExchange] = field(default_factory=dict)

    def end_round(self, times_ns: list[int]) -> None:
        """Keep one block's timings and capture size, then clear the capture."""
        self.times_ns.extend(times_ns)
        self.round_medians.append(statistics.median(times_ns))
        if self.capture is not None:
            self.messages_per_round.append(len(self.capture.messages))
            self.http_per_round.append(len(self.capture.http))
        self.clear_capture()

    def clear_capture(self) -> None:
        """Empty the capture, remembering HTTP streams still open (they keep recording after ``clear()``)."""
        if self.capture is None:
            return
        for exchange in self.capture.http:
            if exchange.ended_at is None:
                self.open_exchanges[id(exchange)] = exchange
        self.capture.clear()


@dataclass
class Row:
    """One line of the result table: a variant compared with the uncaptured client."""

    transport: str
    label: str
    plain_us: float
    captured_us: float
    round_ratios: list[float]
    note: str

    @property
    def pooled(self) -> float:
        """Median of all calls of the variant / median of all uncaptured calls."""
        return self.captured_us / self.plain_us

    @property
    def ratio(self) -> float:
        """Median of the per-round ratios: each compares two blocks run close together."""
        return statistics.median(self.round_ratios)

    @property
    def verdict(self) -> str:
        """Against the target; ``(unsure)`` when the confidence interval straddles it."""
        if self.label == CONTROL:
            return "noise floor"
        low, high = median_ci(self.round_ratios)
        if high <= TARGET:
            return "ok"
        if low > TARGET:
            return "OVER"
        return "ok (unsure)" if self.ratio <= TARGET else "over (unsure)"


def median_ci(values: list[float]) -> tuple[float, float]:
    """Distribution-free ~95 % confidence interval of the median, from order statistics."""
    ordered = sorted(values)
    count = len(ordered)
    half_width = 0.98 * math.sqrt(count)  # 1.96 * sqrt(n) / 2 ranks either side of n / 2
    low_rank = max(1, math.floor(count / 2 - half_width))
    high_rank = min(count, math.ceil(1 + count / 2 + half_width))
    return ordered[low_rank - 1], ordered[high_rank - 1]


def package_version(name: str) -> str:
    """Installed version of a distribution, or ``-``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def print_environment() -> None:
    """Python, package versions and the machine, so figures can be compared."""
    packages = ", ".join(f"{name} {package_version(name)}" for name in ("fastmcp", "mcp", "httpx2", "uvicorn", "anyio"))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "-"
    print(f"python {platform.python_version()} ({platform.python_implementation()}) on {platform.platform()}")
    print(packages)
    print(f"CPUs: {os.cpu_count()}  load average: {load}")


async def time_calls(client: Client, count: int) -> list[int]:
    """Nanoseconds of each of ``count`` sequential ``tools/call`` requests."""
    times = []
    for _ in range(count):
        start = time.perf_counter_ns()
        await client.call_tool(TOOL, ARGUMENTS)
        times.append(time.perf_counter_ns() - start)
    return times


async def warm_up(variants: list[Variant], calls: int) -> None:
    """``tools/list`` first (else the client sends its own after the first call), then untimed calls."""
    for variant in variants:
        await variant.client.list_tools()
        await time_calls(variant.client, calls)
        variant.clear_capture()


async def measure(variants: list[Variant], calls: int, rounds: int) -> None:
    """R rounds of N calls per variant; the order rotates each round so none is always first."""
    for round_index in range(rounds):
        shift = round_index % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            variant.end_round(await time_calls(variant.client, calls))


def target_factory(transport: str, url: str | None) -> Callable[[], Any]:
    """Fresh client targets: one server object, one stdio subprocess per client, or the URL."""
    if transport == "memory":
        server = build_calculator_server()
        return lambda: server
    if transport == "stdio":
        return lambda: stdio_transport(log_file=Path(os.devnull))
    return lambda: url


@contextlib.asynccontextmanager
async def server_url(transport: str) -> AsyncIterator[str | None]:
    """The loopback URL of an in-process SSE / streamable-HTTP server, else ``None``."""
    if transport in ("sse", "http"):
        async with serve_http("sse" if transport == "sse" else "streamable-http") as url:
            yield url
    else:
        yield None


def make_variants(transport: str, target: Callable[[], Any], control: bool) -> list[Variant]:
    """The uncaptured client first, then the captured ones (and the control)."""
    captured = CaptureTransport(target())
    variants = [Variant("uncaptured", teaching_client(target())), Variant("captured", teaching_client(captured))]
    variants[1].capture = captured.capture
    if transport in ("sse", "http"):
        bare = CaptureTransport(target(), record_http=False)
        variants.append(Variant("captured, record_http=False", teaching_client(bare), bare.capture))
    if control:
        variants.append(Variant(CONTROL, teaching_client(target())))
    return variants


@contextlib.asynccontextmanager
async def connected_variants(transport: str, control: bool) -> AsyncIterator[list[Variant]]:
    """All clients of one transport, connected for the duration of the block."""
    async with server_url(transport) as url, contextlib.AsyncExitStack() as stack:
        variants = make_variants(transport, target_factory(transport, url), control)
        for variant in variants:
            await stack.enter_async_context(variant.client)
        yield variants


def capture_note(variant: Variant) -> str:
    """What the capture held per round, and how much open streams kept recording after ``clear()``."""
    if variant.capture is None:
        return ""
    note = f"{statistics.median(variant.messages_per_round):.0f} msgs"
    if any(variant.http_per_round):
        note += f" + {statistics.median(variant.http_per_round):.0f} http"
    retained = sum(len(exchange.response_body) for exchange in variant.open_exchanges.values())
    if retained:
        note += f"; open stream body {retained / 1024:.0f} KiB"
    return note


def rows_for(transport: str, variants: list[Variant]) -> list[Row]:
    """Compare every other variant with the uncaptured one (``variants[0]``)."""
    plain = variants[0]
    plain_us = statistics.median(plain.times_ns) / 1000
    rows = []
    for variant in variants[1:]:
        ratios = [c / p for c, p in zip(variant.round_medians, plain.round_medians, strict=True)]
        variant_us = statistics.median(variant.times_ns) / 1000
        rows.append(Row(transport, variant.label, plain_us, variant_us, ratios, capture_note(variant)))
    return rows


async def bench_transport(transport: str, args: argparse.Namespace) -> list[Row]:
    """Connect, warm up, measure and summarise one transport."""
    started = time.perf_counter()
    async with connected_variants(transport, args.control) as variants:
        await warm_up(variants, args.warmup)
        await measure(variants, args.calls, args.rounds)
    print(f"  {transport}: {time.perf_counter() - started:.1f} s", flush=True)
    return rows_for(transport, variants)


def print_table(rows: list[Row]) -> None:
    """The result table, one line per variant compared with the uncaptured client."""
    header = (
        f"{'transport':<9} {'client':<27} {'uncaptured':>10} {'this one':>10} {'pooled':>6} "
        f"{'ratio':>6} {'95% CI':>13}  {'verdict':<13} capture per round"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        low, high = median_ci(row.round_ratios)
        print(
            f"{row.transport:<9} {row.label:<27} {row.plain_us:>7.0f} µs {row.captured_us:>7.0f} µs {row.pooled:>6.3f} "
            f"{row.ratio:>6.3f} {low:>6.3f}-{high:<6.3f}  {row.verdict:<13} {row.note}".rstrip()
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20, help="timed calls per client per round (N, default 20)")
    parser.add_argument("--rounds", type=int, default=60, help="rounds per transport (R, default 60)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls per client first (default 50)")
    parser.add_argument("--transports", nargs="+", choices=TRANSPORT_NAMES, default=list(TRANSPORT_NAMES))
    parser.add_argument("--no-control", dest="control", action="store_false", help="skip the 2nd uncaptured client")
    return parser.parse_args(argv)


async def main(argv: list[str] | None = None) -> None:
    """Print the environment, measure every transport, print the table."""
    args = parse_args(argv)
    print_environment()
    print(f"{args.rounds} rounds x {args.calls} calls per client, {args.warmup} warm-up calls; target ratio ≤ {TARGET}")
    rows = []
    for transport in args.transports:
        rows += await bench_transport(transport, args)
    print()
    print_table(rows)
    print()
    print("ratio: median over rounds of (this client's block median / uncaptured block median); 95% CI of it.")
    print("pooled: median of all this client's calls / median of all uncaptured calls.")
    print("control: a 2nd uncaptured client measured the same way; its spread is what noise alone does.")


if __name__ == "__main__":
    asyncio.run(main())
