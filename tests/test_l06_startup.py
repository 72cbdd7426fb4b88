"""mcp_teach.lessons.l06_startup: connect times and a fresh process's first call, measured; never timing limits."""

from __future__ import annotations

import pytest
from l06_support import all_positive

from mcp_teach.client import CONNECTIONS
from mcp_teach.lessons.l06_startup import first_call_in_fresh_process, measure_connect, measure_connects


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
