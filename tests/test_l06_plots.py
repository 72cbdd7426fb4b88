"""mcp_teach.lessons.l06_plots: the figures draw one box or bar per entry, on log scales, with the quoted bands."""

from __future__ import annotations

from matplotlib.figure import Figure

from mcp_teach.client import CONNECTIONS
from mcp_teach.lessons.l06_baselines import pipe_echo_baseline
from mcp_teach.lessons.l06_calls import measure_transports
from mcp_teach.lessons.l06_perspective import QUOTED_MS, perspective
from mcp_teach.lessons.l06_plots import plot_call_latencies, plot_connect_times, plot_time_scales


def boxes(figure: Figure) -> list[str]:
    return [line.get_gid() for line in figure.axes[0].lines if (line.get_gid() or "").startswith("box:")]


def test_plot_call_latencies_one_box_per_transport(run):
    results = run(lambda: measure_transports(CONNECTIONS, 5, 1, progress=False))
    figure = plot_call_latencies({"pipe echo": pipe_echo_baseline(10, warmup=0), **results})
    assert isinstance(figure, Figure)
    assert boxes(figure) == ["box:pipe echo", *(f"box:{c}" for c in CONNECTIONS)]
    axes = figure.axes[0]
    assert axes.get_yscale() == "log"
    assert [label.get_text() for label in axes.get_xticklabels()] == ["pipe echo", *CONNECTIONS]
    quoted = [text.get_text() for text in axes.texts]
    assert quoted == [f"often quoted: {name} {low:g}–{high:g} ms" for name, (low, high) in QUOTED_MS.items()]


def test_plot_call_latencies_without_quoted_bands():
    figure = plot_call_latencies({"a": [1.0, 2.0], "b": [3.0, 4.0]}, quoted=None)
    assert boxes(figure) == ["box:a", "box:b"]
    assert len(figure.axes[0].texts) == 0


def test_plot_connect_times_one_box_per_transport():
    figure = plot_connect_times({"in-memory": [1.0, 1.5], "stdio": [600.0, 700.0]})
    assert boxes(figure) == ["box:in-memory", "box:stdio"]
    assert figure.axes[0].get_yscale() == "log"


def test_plot_time_scales_one_bar_per_scale_top_down():
    calls = {"in-memory": [1.0, 1.1, 1.2], "stdio": [2.0, 2.1]}
    scales = perspective(calls, {"stdio": [600.0]}, pipe=[0.01, 0.02], http_echo=[0.6, 0.7], first_call_ms=1300.0)
    labels = [scale.label for scale in scales]
    figure = plot_time_scales(scales)
    axes = figure.axes[0]
    assert axes.get_xscale() == "log"
    drawn = [patch.get_gid() for patch in axes.patches if (patch.get_gid() or "").startswith("scale:")]
    assert drawn == [f"scale:{label}" for label in reversed(labels)]
    assert [t.get_text() for t in axes.get_yticklabels()] == list(reversed(labels))
