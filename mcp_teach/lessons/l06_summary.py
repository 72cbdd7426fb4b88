"""Lesson 06's latency table: the summaries a cell computed, written with about three significant digits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_teach.display.show import table

#: The columns of :func:`latency_table`, in order: keys of each summary.
COLUMNS = ("median", "p90", "p99", "mean")


def format_ms(value: float) -> str:
    """A duration with about three significant digits: ``0.017``, ``1.24``, ``12.5``, ``563``."""
    decimals = 0 if value >= 100 else 1 if value >= 10 else 2 if value >= 1 else 3
    return f"{value:.{decimals}f}"


def latency_table(summaries: Mapping[str, Mapping[str, float]], *, unit: str = "ms") -> Any:
    """One row per measured thing: ``count`` and the :data:`COLUMNS` of its summary (in ms; ``unit="µs"`` × 1000)."""
    scale = {"ms": 1.0, "µs": 1000.0}[unit]
    rows = [
        [name, round(stats["count"]), *(format_ms(stats[key] * scale) for key in COLUMNS)]
        for name, stats in summaries.items()
    ]
    return table(["measured", "samples", *(f"{key} {unit}" for key in COLUMNS)], rows)
