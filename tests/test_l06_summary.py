"""mcp_teach.lessons.l06_summary: short durations, and the latency table of the summaries a cell computed."""

from __future__ import annotations

import pytest

from mcp_teach.lessons.l06_summary import format_ms, latency_table


@pytest.mark.parametrize(
    ("value", "text"), [(0.0171, "0.017"), (1.236, "1.24"), (12.54, "12.5"), (563.4, "563"), (1234.0, "1234")]
)
def test_format_ms(value, text):
    assert format_ms(value) == text


def test_latency_table_rows_and_units():
    pipe = {"count": 3, "median": 0.02, "p90": 0.028, "p99": 0.0298, "mean": 0.02}
    stdio = {"count": 3, "median": 2.0, "p90": 2.8, "p99": 2.98, "mean": 2.0}
    lines = repr(latency_table({"pipe": pipe, "stdio": stdio})).splitlines()
    assert lines[0].split() == ["measured", "samples", "median", "ms", "p90", "ms", "p99", "ms", "mean", "ms"]
    assert [line.split() for line in lines[2:]] == [
        ["pipe", "3", "0.020", "0.028", "0.030", "0.020"],
        ["stdio", "3", "2.00", "2.80", "2.98", "2.00"],
    ]
    micro = repr(latency_table({"pipe": pipe}, unit="µs")).splitlines()
    assert "median µs" in micro[0]
    assert micro[2].split()[:3] == ["pipe", "3", "20.0"]
    assert "<table>" in latency_table({"pipe": pipe})._repr_html_()
