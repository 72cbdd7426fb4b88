"""Lesson 06's figures: box plots of call and connect latencies, and ranges of time on one log scale."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from mcp_teach.lessons.l06_perspective import QUOTED_MS, Scale


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
