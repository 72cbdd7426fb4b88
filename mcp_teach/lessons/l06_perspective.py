"""Measured ranges beside the figures often quoted (lesson 06): the rows of the one-log-scale chart."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Per-call figures often quoted for MCP servers (ms), shown beside what was measured.
QUOTED_MS: dict[str, tuple[float, float]] = {"stdio": (5.0, 15.0), "HTTP": (50.0, 200.0)}
#: What one LLM call (one model turn) typically takes (ms).
LLM_CALL_MS = (300.0, 3000.0)
#: A network round trip, from a server in the same region to one on another continent (ms).
NETWORK_RTT_MS = (1.0, 150.0)


@dataclass(frozen=True)
class Scale:
    """One bar of :func:`~mcp_teach.lessons.l06_plots.plot_time_scales`: a range in ms, measured here or quoted."""

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


def perspective(
    calls: Mapping[str, Sequence[float]],
    connects: Mapping[str, Sequence[float]] | None = None,
    *,
    pipe: Sequence[float] | None = None,
    http_echo: Sequence[float] | None = None,
    first_call_ms: float | None = None,
) -> list[Scale]:
    """Rows for :func:`~mcp_teach.lessons.l06_plots.plot_time_scales`: what was measured here beside what is quoted."""
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
