"""mcp_teach.lessons.l06_latency: real measurements with small counts; shapes and sanity, never timing limits."""

from __future__ import annotations

import math

import pytest
from fastmcp import FastMCP
from matplotlib.figure import Figure

from mcp_teach.client import CONNECTIONS, teaching_client
from mcp_teach.lessons.l06_latency import (
    CALL_ARGUMENTS,
    CALL_TOOL,
    LLM_CALL_MS,
    QUOTED_MS,
    Progress,
    Scale,
    count_steps,
    first_call_in_fresh_process,
    format_ms,
    http_echo_baseline,
    latency_table,
    line_bytes,
    measure_calls,
    measure_connect,
    measure_connects,
    measure_pieces,
    measure_transports,
    medians,
    perspective,
    pipe_echo_baseline,
    plot_call_latencies,
    plot_connect_times,
    plot_time_scales,
    scale_of,
    summarise,
)
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

SUMMARY_KEYS = {"count", "median", "p90", "p99", "mean", "min", "max"}


def all_positive(samples: list[float]) -> bool:
    return all(isinstance(x, float) and x > 0 and math.isfinite(x) for x in samples)


def assert_consistent(stats: dict[str, float]) -> None:
    assert set(stats) == SUMMARY_KEYS
    assert stats["min"] <= stats["median"] <= stats["p90"] <= stats["p99"] <= stats["max"]
    assert stats["min"] <= stats["mean"] <= stats["max"]


# --------------------------------------------------------------------------- tools/call


@pytest.mark.parametrize("connection", CONNECTIONS)
def test_measure_calls_by_name_returns_one_positive_sample_per_call(run, connection):
    samples = run(measure_calls, connection, 7, 2)
    assert len(samples) == 7
    assert all_positive(samples)


def test_measure_calls_on_a_connected_client_lists_tools_warms_up_then_times(run):
    async def main():
        capture = CaptureTransport(build_calculator_server())
        async with teaching_client(capture) as client:
            samples = await measure_calls(client, 25, 3)
        return samples, capture.capture

    samples, capture = run(main)
    assert len(samples) == 25  # 25 timed calls, in blocks of 20 and 5
    assert all_positive(samples)
    assert capture.methods().count("tools/list") == 1
    calls = capture.requests("tools/call")
    assert len(calls) == 3 + 25
    assert {(c.message["params"]["name"], str(c.message["params"]["arguments"])) for c in calls} == {
        (CALL_TOOL, str(CALL_ARGUMENTS))
    }


def test_measure_calls_with_capture_and_other_arguments(run):
    samples = run(lambda: measure_calls("in-memory", 4, 1, capture=True, arguments={"a": 10**6, "b": 0.5}))
    assert len(samples) == 4
    assert all_positive(samples)


def test_measure_calls_any_tool_on_any_server(run):
    server = FastMCP("blob")

    @server.tool
    def blob(size: int) -> str:
        return "x" * size

    async def main():
        capture = CaptureTransport(server)
        async with teaching_client(capture) as client:
            samples = await measure_calls(client, 3, 1, tool="blob", arguments={"size": 1000})
        return samples, capture.capture

    samples, capture = run(main)
    assert len(samples) == 3
    assert all_positive(samples)
    results = [capture.response_to(r).message["result"] for r in capture.requests("tools/call")]
    assert len(results) == 4
    assert all(result["content"][0]["text"] == "x" * 1000 for result in results)


def test_measure_calls_rejects_an_unknown_connection(run):
    with pytest.raises(ValueError, match="unknown connection"):
        run(measure_calls, "carrier-pigeon", 1, 0)


def test_measure_transports_interleaves_all_four_and_counts_right(run):
    samples = run(lambda: measure_transports(CONNECTIONS, 7, 1, block=3))
    assert list(samples) == list(CONNECTIONS)
    for connection in CONNECTIONS:
        assert len(samples[connection]) == 7
        assert all_positive(samples[connection])


def test_measure_transports_subset_in_the_given_order(run):
    samples = run(lambda: measure_transports(["streamable-http", "in-memory"], 3, 0, progress=False))
    assert list(samples) == ["streamable-http", "in-memory"]
    assert [len(s) for s in samples.values()] == [3, 3]


# --------------------------------------------------------------------------- connecting


def test_measure_connect_in_memory(run):
    samples = run(measure_connect, "in-memory", 3)
    assert len(samples) == 3
    assert all_positive(samples)


def test_measure_connects_one_round_on_every_transport(run):
    samples = run(measure_connects, CONNECTIONS, 1)
    assert list(samples) == list(CONNECTIONS)
    assert all(len(s) == 1 and all_positive(s) for s in samples.values())


def test_measure_connect_rejects_an_unknown_connection(run):
    with pytest.raises(ValueError, match="unknown connection"):
        run(measure_connect, "telegraph", 1)


def test_first_call_in_fresh_process_reports_every_step():
    steps = first_call_in_fresh_process()
    assert list(steps) == [
        "import fastmcp",
        "import the course's server and client",
        "connect (in-memory)",
        "tools/list",
        "first tools/call",
        "second tools/call",
        "whole process",
    ]
    assert all_positive(list(steps.values()))
    assert steps["whole process"] >= sum(v for k, v in steps.items() if k != "whole process")


# --------------------------------------------------------------------------- baselines and pieces


def test_pipe_echo_baseline_counts_lines_and_leaves_no_process():
    samples = pipe_echo_baseline(50, warmup=5)
    assert len(samples) == 50
    assert all_positive(samples)  # the module fixture checks that the echo process has gone


def test_pipe_echo_baseline_with_own_line():
    assert len(pipe_echo_baseline(3, warmup=0, line='{"jsonrpc":"2.0","id":1,"method":"ping"}')) == 3


def test_http_echo_baseline_counts_requests(run):
    samples = run(lambda: http_echo_baseline(20, warmup=2))
    assert len(samples) == 20
    assert all_positive(samples)


def test_measure_pieces_times_every_piece(run):
    pieces = run(measure_pieces, 20)
    assert len(pieces) == 7
    assert any("pydantic" in name for name in pieces)
    assert any("jsonschema" in name for name in pieces)
    for samples in pieces.values():
        assert len(samples) == 20
        assert all_positive(samples)


def test_count_steps_counts_per_call(run):
    counts = run(count_steps, 5)
    assert list(counts) == [
        "Python function calls and coroutine steps",
        "event-loop turns",
        "pydantic validations",
        "pydantic serialisations",
    ]
    assert all(value >= 1 for value in counts.values())
    assert counts["Python function calls and coroutine steps"] > counts["event-loop turns"]


# --------------------------------------------------------------------------- summaries and tables


def test_summarise_known_values():
    stats = summarise([float(x) for x in range(1, 101)])
    assert_consistent(stats)
    assert stats["count"] == 100
    assert stats["median"] == pytest.approx(50.5)
    assert stats["mean"] == pytest.approx(50.5)
    assert stats["p90"] == pytest.approx(90.1)
    assert stats["p99"] == pytest.approx(99.01)
    assert (stats["min"], stats["max"]) == (1.0, 100.0)


def test_summarise_single_sample_and_empty():
    stats = summarise([2.5])
    assert_consistent(stats)
    assert {stats[k] for k in SUMMARY_KEYS - {"count"}} == {2.5}
    with pytest.raises(ValueError):
        summarise([])


def test_summarise_real_samples_is_consistent(run):
    samples = run(measure_calls, "in-memory", 30, 2)
    stats = summarise(samples)
    assert_consistent(stats)
    assert stats["count"] == 30


@pytest.mark.parametrize(
    ("value", "text"), [(0.0171, "0.017"), (1.236, "1.24"), (12.54, "12.5"), (563.4, "563"), (1234.0, "1234")]
)
def test_format_ms(value, text):
    assert format_ms(value) == text


def test_latency_table_rows_and_units():
    results = {"pipe": [0.01, 0.02, 0.03], "stdio": [1.0, 2.0, 3.0]}
    lines = repr(latency_table(results)).splitlines()
    assert lines[0].split() == ["measured", "samples", "median", "ms", "p90", "ms", "p99", "ms", "mean", "ms"]
    assert [line.split()[:3] for line in lines[2:]] == [["pipe", "3", "0.020"], ["stdio", "3", "2.00"]]
    micro = repr(latency_table({"pipe": [0.01, 0.02, 0.03]}, unit="µs")).splitlines()
    assert "median µs" in micro[0]
    assert micro[2].split()[:3] == ["pipe", "3", "20.0"]
    assert "<table>" in latency_table(results)._repr_html_()


def test_medians_and_line_bytes():
    assert medians({"a": [3.0, 1.0, 2.0]}) == {"a": 2.0}
    assert line_bytes({"jsonrpc": "2.0", "id": 1}) == len('{"jsonrpc":"2.0","id":1}')
    assert line_bytes({"text": "×"}) == len('{"text":""}') + 2  # counted in UTF-8 bytes


def test_progress_outside_a_kernel_counts_silently(capsys):
    progress = Progress(10, "calls")
    progress.advance(4)
    assert progress.done == 4
    progress.finish()
    assert progress.done == 10
    assert capsys.readouterr().out == ""


# --------------------------------------------------------------------------- plots


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


def test_perspective_and_time_scales():
    calls = {"in-memory": [1.0, 1.1, 1.2], "stdio": [2.0, 2.1]}
    scales = perspective(calls, {"stdio": [600.0]}, pipe=[0.01, 0.02], http_echo=[0.6, 0.7], first_call_ms=1300.0)
    labels = [scale.label for scale in scales]
    assert labels[:4] == [
        "a JSON line through a pipe (plain Python)",
        "an HTTP POST on 127.0.0.1 (no MCP)",
        "tools/call, in-memory",
        "tools/call, stdio",
    ]
    assert labels[-1] == "one LLM call"
    assert Scale("one LLM call", *LLM_CALL_MS, False) in scales
    assert Scale("connect, stdio", 600.0, 600.0, True) in scales
    assert all(scale.low <= scale.high for scale in scales)
    assert [s.measured for s in scales].count(False) == len(QUOTED_MS) + 2  # quoted, network, LLM

    figure = plot_time_scales(scales)
    axes = figure.axes[0]
    assert axes.get_xscale() == "log"
    drawn = [patch.get_gid() for patch in axes.patches if (patch.get_gid() or "").startswith("scale:")]
    assert drawn == [f"scale:{label}" for label in reversed(labels)]
    assert [t.get_text() for t in axes.get_yticklabels()] == list(reversed(labels))


def test_scale_of_uses_p10_to_p90():
    scale = scale_of("x", [float(v) for v in range(1, 101)])
    assert (scale.low, scale.high, scale.measured) == (pytest.approx(10.9), pytest.approx(90.1), True)
