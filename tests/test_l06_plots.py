"""mcp_teach.lessons.l06_plots: the figures draw one box or bar per entry, on log scales, with the quoted bands."""

from __future__ import annotations

from matplotlib.figure import Figure

from mcp_teach.lessons.l06_plots import plot_call_latencies, plot_time_scales

QUOTED_MS = {"stdio": (5, 15), "HTTP": (50, 200)}


def boxes(figure: Figure) -> list[str]:
    return [line.get_gid() for line in figure.axes[0].lines if (line.get_gid() or "").startswith("box:")]


def test_plot_call_latencies_one_box_per_entry_with_the_quoted_bands():
    figure = plot_call_latencies({"pipe echo": [0.01, 0.02], "stdio": [1.0, 2.0, 3.0]}, quoted=QUOTED_MS)
    assert isinstance(figure, Figure)
    assert boxes(figure) == ["box:pipe echo", "box:stdio"]
    axes = figure.axes[0]
    assert axes.get_yscale() == "log"
    assert [label.get_text() for label in axes.get_xticklabels()] == ["pipe echo", "stdio"]
    assert [text.get_text() for text in axes.texts] == ["often quoted: stdio 5–15 ms", "often quoted: HTTP 50–200 ms"]


def test_plot_call_latencies_without_quoted_bands():
    figure = plot_call_latencies({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    assert boxes(figure) == ["box:a", "box:b"]
    assert len(figure.axes[0].texts) == 0


def test_plot_time_scales_one_bar_per_range_smallest_on_top():
    measured = {"stdio call": [2.0, 2.1, 2.2], "pipe": [0.01, 0.02], "first call": [1300.0]}
    typical = {"one LLM call": (300, 3000), "network": (1, 150)}
    figure = plot_time_scales(measured, typical)
    axes = figure.axes[0]
    assert axes.get_xscale() == "log"
    top_down = ["pipe", "network", "stdio call", "one LLM call", "first call"]
    drawn = {patch.get_gid(): patch for patch in axes.patches if (patch.get_gid() or "").startswith("scale:")}
    assert sorted(drawn, key=lambda gid: -drawn[gid].get_y()) == [f"scale:{label}" for label in top_down]
    assert [t.get_text() for t in axes.get_yticklabels()] == list(reversed(top_down))
    colours = {gid: patch.get_facecolor()[:3] for gid, patch in drawn.items()}
    assert colours["scale:pipe"] == colours["scale:first call"] != colours["scale:network"]
    assert drawn["scale:network"].get_x() == 1 and drawn["scale:network"].get_width() == 149
