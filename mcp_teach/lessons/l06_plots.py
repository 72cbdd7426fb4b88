"""Lesson 06's figures: box plots of call latencies, and ranges of time on one log scale."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Patch

MEASURED, TYPICAL = "#1f6feb", "#bc4c00"


def plot_call_latencies(
    results: Mapping[str, Sequence[float]], *, quoted: Mapping[str, tuple[float, float]] | None = None
) -> Figure:
    """One box per entry (whiskers at p1 and p99, every sample a faint dot), log scale; ``quoted`` ranges as bands."""
    figure = Figure(figsize=(9, 4.5), layout="constrained")
    axes = figure.add_subplot()
    for (label, (low, high)), colour in zip((quoted or {}).items(), ("#bf8700", "#8250df"), strict=False):
        axes.axhspan(low, high, color=colour, alpha=0.15, linewidth=0)
        axes.text(0.55, (low * high) ** 0.5, f"often quoted: {label} {low:g}–{high:g} ms", va="center", fontsize=9)
    names = list(results)
    data = [list(results[name]) for name in names]
    drawn = axes.boxplot(data, tick_labels=names, whis=(1, 99), showfliers=False, medianprops={"color": "#cf222e"})
    for name, box in zip(names, drawn["boxes"], strict=True):
        box.set_gid(f"box:{name}")  # lets tests (and curious students) find each box
    for position, samples in enumerate(data, start=1):
        offsets = [position + 0.25 * ((index * 0.618) % 1 - 0.5) for index in range(len(samples))]
        axes.scatter(offsets, samples, s=4, alpha=0.25, color=MEASURED, linewidths=0)
    axes.set(yscale="log", ylabel="milliseconds per call (log scale)", title="One tools/call, measured on this machine")
    axes.grid(axis="y", which="both", alpha=0.3)
    axes.tick_params(axis="x", labelrotation=15)
    return figure


def _p10_p90(samples: Sequence[float]) -> tuple[float, float]:
    if len(samples) < 2:
        return samples[0], samples[0]
    cuts = statistics.quantiles(samples, n=10, method="inclusive")
    return cuts[0], cuts[-1]


def plot_time_scales(measured: Mapping[str, Sequence[float]], typical: Mapping[str, tuple[float, float]]) -> Figure:
    """Horizontal ranges on one log axis, smallest at the top: ``measured`` samples p10–p90 in blue, ``typical``
    (low, high) figures in orange."""
    rows = [(label, *_p10_p90(samples), MEASURED) for label, samples in measured.items()]
    rows += [(label, low, high, TYPICAL) for label, (low, high) in typical.items()]
    rows.sort(key=lambda row: (row[1], row[2]), reverse=True)
    figure = Figure(figsize=(9, 0.45 * len(rows) + 1.4), layout="constrained")
    axes = figure.add_subplot()
    for number, (label, low, high, colour) in enumerate(rows):
        width = max(high - low, low * 0.15)  # a point still shows as a thin bar
        axes.barh(number, width, left=low, height=0.6, color=colour, alpha=0.8).patches[0].set_gid(f"scale:{label}")
    axes.set_yticks(range(len(rows)), [row[0] for row in rows])
    axes.set(xscale="log", xlabel="milliseconds (log scale)", title="Where the time goes, on one log scale")
    axes.set_xlim(min(row[1] for row in rows) / 3, max(row[2] for row in rows) * 3)
    axes.grid(axis="x", which="major", alpha=0.3)
    handles = [Patch(color=MEASURED, alpha=0.8, label="measured here (p10–p90)")]
    handles.append(Patch(color=TYPICAL, alpha=0.8, label="often quoted / typical"))
    axes.legend(handles=handles, loc="upper right", fontsize=9)
    return figure
