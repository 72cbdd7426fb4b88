"""Samples summed up (lesson 06): median and percentiles, durations written short, the latency table."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from mcp_teach.display.show import table


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
