"""Lesson 06's exercise checks (mcp_teach.exercises.l06): real measurements pass, wrong answers fail with
expected / found / hint, and missing ones are "not attempted" (an error while grading). Small counts throughout;
nothing asserts how fast anything was."""

from __future__ import annotations

import re
import statistics
import time

import pytest
from exercise_support import failed_with, passed
from fastmcp import FastMCP

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.exercises import ExerciseNotAttempted, check
from mcp_teach.lessons.l06_calls import measure_calls
from mcp_teach.llm.loop import ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http, stdio_transport
from mcp_teach.wire.capture import CaptureTransport


def build_blob_server() -> FastMCP:
    """The solution's blob server."""
    server = FastMCP("blob", version="1.0.0")

    @server.tool
    def blob(size: int) -> str:
        """A text of `size` letters x."""
        return "x" * size

    return server


@pytest.fixture(scope="module")
def capture_answers():
    """06.1 solved for real, with few calls: two stdio servers, the second one captured."""
    import asyncio

    calls, warmup = 5, 1

    async def solve():
        async with teaching_client(stdio_transport()) as client:
            samples_off = await measure_calls(client, calls, warmup)
        captured = CaptureTransport(stdio_transport())
        async with teaching_client(captured) as client:
            samples_on = await measure_calls(client, calls, warmup)
        return {
            "samples_off": samples_off,
            "samples_on": samples_on,
            "captured": captured,
            "capture_ratio": statistics.median(samples_on) / statistics.median(samples_off),
            "CAPTURE_CALLS": calls,
            "CAPTURE_WARMUP": warmup,
        }

    return asyncio.run(solve())


@pytest.fixture(scope="module")
def blob_answers():
    """06.2 solved for real, with small sizes and few calls."""
    import asyncio

    sizes, calls = (10, 1000), 2

    async def solve():
        blob_samples = {}
        for size in sizes:
            options = {"tool": "blob", "arguments": {"size": size}}
            async with teaching_client(build_blob_server()) as client:
                blob_samples["in-memory", size] = await measure_calls(client, calls, 1, **options)
            async with serve_http(server=build_blob_server()) as url, teaching_client(url) as client:
                blob_samples["streamable-http", size] = await measure_calls(client, calls, 1, **options)
        extra_ms = {
            transport: statistics.median(blob_samples[transport, max(sizes)])
            - statistics.median(blob_samples[transport, min(sizes)])
            for transport in ("in-memory", "streamable-http")
        }
        return {
            "build_blob_server": build_blob_server,
            "blob_samples": blob_samples,
            "extra_ms": extra_ms,
            "BLOB_SIZES": sizes,
            "BLOB_CALLS": calls,
        }

    return asyncio.run(solve())


@pytest.fixture(scope="module")
def loop_answers():
    """06.3 solved for real with the offline teaching model."""
    import asyncio

    settings = Settings()  # the defaults: the offline model, whatever .env says

    async def solve():
        llm = openai_client(settings)
        async with teaching_client(CaptureTransport(build_calculator_server())) as client:
            start = time.perf_counter()
            timed = await ask("multiply 3 by 4, then subtract 5", client, llm, model=model_name(settings))
            loop_ms = (time.perf_counter() - start) * 1000
        mcp_events = [e for e in timed.trace if e.kind == "jsonrpc"]
        tool_call_ms = [
            (response.at - request.at) * 1000
            for request in mcp_events
            if request.payload.get("method") == "tools/call"
            for response in mcp_events
            if response.sender == "server" and response.payload.get("id") == request.payload["id"]
        ]
        pairs = zip(timed.trace.of_kind("llm-request"), timed.trace.of_kind("llm-response"), strict=True)
        llm_ms = [(response.at - request.at) * 1000 for request, response in pairs]
        return {
            "timed": timed,
            "loop_ms": loop_ms,
            "tool_call_ms": tool_call_ms,
            "llm_ms": llm_ms,
            "tool_share": sum(tool_call_ms) / loop_ms,
        }

    return asyncio.run(solve())


def test_06_1_real_measurements_pass_and_print_the_ratio(capture_answers, capsys):
    check("06.1", capture_answers)
    assert "median with the capture / without" in passed(capsys, "06.1")


def test_06_1_a_mean_instead_of_the_median_fails(capture_answers):
    on, off = capture_answers["samples_on"], capture_answers["samples_off"]
    wrong = statistics.fmean(on) / statistics.fmean(off) * 1.5
    failed_with("06.1", {**capture_answers, "capture_ratio": wrong}, "capture_ratio", "median")


def test_06_1_too_few_samples_fail(capture_answers):
    failed_with("06.1", {**capture_answers, "samples_on": capture_answers["samples_on"][:-1]}, "samples_on")


def test_06_1_a_capture_of_another_connection_fails(capture_answers):
    failed_with("06.1", {**capture_answers, "captured": CaptureTransport(build_calculator_server())}, "stdio")


def test_06_2_real_measurements_pass_and_print_the_extra_ms(blob_answers, capsys):
    check("06.2", blob_answers)
    out = passed(capsys, "06.2")
    assert re.search(r"in-memory [+-]\S+ ms, streamable-http [+-]\S+ ms", out), out  # tiny sizes: either sign


def test_06_2_a_ratio_instead_of_a_difference_fails(blob_answers):
    samples, sizes = blob_answers["blob_samples"], blob_answers["BLOB_SIZES"]
    ratio = {
        transport: statistics.median(samples[transport, max(sizes)]) / statistics.median(samples[transport, min(sizes)])
        for transport in ("in-memory", "streamable-http")
    }
    failed_with("06.2", {**blob_answers, "extra_ms": ratio}, "extra_ms", "not a ratio")


def test_06_2_a_server_whose_text_is_wrong_fails(blob_answers):
    def wrong_server() -> FastMCP:
        server = FastMCP("blob")

        @server.tool
        def blob(size: int) -> str:
            return "y" * size

        return server

    failed_with("06.2", {**blob_answers, "build_blob_server": wrong_server}, "letter x")


def test_06_2_a_missing_size_fails(blob_answers):
    samples = {key: value for key, value in blob_answers["blob_samples"].items() if key[1] != 10}
    failed_with("06.2", {**blob_answers, "blob_samples": samples}, "the keys of blob_samples")


def test_06_3_the_real_question_passes(loop_answers, capsys):
    check("06.3", loop_answers)
    assert "tools/call share" in passed(capsys, "06.3")


def test_06_3_seconds_instead_of_ms_fail(loop_answers):
    seconds = [ms / 1000 for ms in loop_answers["tool_call_ms"]]
    failed_with("06.3", {**loop_answers, "tool_call_ms": seconds}, "tool_call_ms[0]")


def test_06_3_a_wrong_share_fails(loop_answers):
    failed_with("06.3", {**loop_answers, "tool_share": 0.5 + loop_answers["tool_share"]}, "tool_share")


@pytest.mark.parametrize("exercise_id", ["06.1", "06.2", "06.3"])
def test_missing_answers_are_not_attempted(exercise_id, capsys, monkeypatch):
    given = {"CAPTURE_CALLS": 50, "CAPTURE_WARMUP": 10, "BLOB_SIZES": (10,), "BLOB_CALLS": 10}  # the cells' setup
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check(exercise_id, dict(given))
    out = capsys.readouterr().out
    assert f"Exercise {exercise_id} — not attempted yet" in out
    assert "CAPTURE_CALLS" not in out and "BLOB_SIZES" not in out  # only what is missing is named
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, dict(given))
