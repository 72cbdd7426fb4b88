"""mcp_teach.lessons.l06_summary: summaries of known and of measured samples, short durations, the latency table."""

from __future__ import annotations

import pytest

from mcp_teach.lessons.l06_calls import measure_calls
from mcp_teach.lessons.l06_summary import format_ms, latency_table, summarise

SUMMARY_KEYS = {"count", "median", "p90", "p99", "mean", "min", "max"}


def assert_consistent(stats: dict[str, float]) -> None:
    assert set(stats) == SUMMARY_KEYS
    assert stats["min"] <= stats["median"] <= stats["p90"] <= stats["p99"] <= stats["max"]
    assert stats["min"] <= stats["mean"] <= stats["max"]


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
