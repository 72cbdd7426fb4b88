"""mcp_teach.lessons.l06_perspective: measured ranges and quoted figures, in the order the chart shows them."""

from __future__ import annotations

import pytest

from mcp_teach.lessons.l06_perspective import LLM_CALL_MS, QUOTED_MS, Scale, perspective, scale_of


def test_perspective_rows_in_order():
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


def test_scale_of_uses_p10_to_p90():
    scale = scale_of("x", [float(v) for v in range(1, 101)])
    assert (scale.low, scale.high, scale.measured) == (pytest.approx(10.9), pytest.approx(90.1), True)
