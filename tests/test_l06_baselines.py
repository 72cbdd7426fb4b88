"""mcp_teach.lessons.l06_baselines: the pipe and HTTP echo floors, measured with small counts."""

from __future__ import annotations

from l06_support import all_positive

from mcp_teach.lessons.l06_baselines import http_echo_baseline, pipe_echo_baseline


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
