"""mcp_teach.lessons.l06_calls: real tools/call measurements with small counts; shapes and sanity, no timing limits."""

from __future__ import annotations

import pytest
from fastmcp import FastMCP
from l06_support import all_positive

from mcp_teach.client import CONNECTIONS, teaching_client
from mcp_teach.lessons.l06_calls import CALL_ARGUMENTS, CALL_TOOL, line_bytes, measure_calls, measure_transports
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport


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


def test_line_bytes():
    assert line_bytes({"jsonrpc": "2.0", "id": 1}) == len('{"jsonrpc":"2.0","id":1}')
    assert line_bytes({"text": "×"}) == len('{"text":""}') + 2  # counted in UTF-8 bytes
