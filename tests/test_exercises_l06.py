"""Lesson 06's exercise checks (mcp_teach.exercises.l06): real measurements pass, wrong answers fail with
expected / found / hint, and missing ones are "not attempted" (an error while grading). 06.1 and 06.2 are solved by
the lesson's own solution cells, run with its measuring functions; nothing asserts how fast anything was."""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from typing import Any

import nbformat
import pytest
from exercise_support import SolvedLesson, failed_with, passed
from fastmcp import FastMCP

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.exercises import ExerciseNotAttempted, check
from mcp_teach.llm.loop import ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http, stdio_transport
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import WireMessage

#: The lesson's measuring functions that the exercises use.
MEASURING = ("time_calls", "take_turns")


def lesson_names() -> dict[str, Any]:
    """What the lesson has defined when its exercises start: its measuring cells, run, and the names they import."""
    notebook = nbformat.read(LESSON.path, as_version=4)
    namespace: dict[str, Any] = {}
    for cell in notebook.cells:
        if cell.cell_type == "code" and any(f"async def {name}(" in cell.source for name in MEASURING):
            exec(cell.source, namespace)
    return {
        **namespace,
        "statistics": statistics,
        "teaching_client": teaching_client,
        "stdio_transport": stdio_transport,
        "serve_http": serve_http,
        "CaptureTransport": CaptureTransport,
    }


LESSON = SolvedLesson("06_latency_lab.ipynb", lesson_names)


@pytest.fixture(scope="module")
def capture_answers():
    """06.1 solved for real by the lesson's own solution cell: two stdio servers side by side, one captured."""
    return asyncio.run(LESSON.run_solution("06.1"))


def without_turns(captured: CaptureTransport) -> CaptureTransport:
    """What ``captured`` would have recorded had its calls run back to back: every pause closed up."""
    replay = CaptureTransport(stdio_transport())  # never connected: no process starts
    shift, previous_at = 0.0, None
    for wire in captured.capture:
        if wire.method == "tools/call" and previous_at is not None:
            shift += max(0.0, wire.at - shift - previous_at - 1e-5)
        replay.capture.messages.append(WireMessage(wire.direction, wire.message, wire.at - shift))
        previous_at = wire.at - shift
    return replay


@pytest.fixture(scope="module")
def blob_answers():
    """06.2 solved for real by the lesson's own solution cell."""
    return asyncio.run(LESSON.run_solution("06.2"))


@pytest.fixture(scope="module")
def loop_answers():
    """06.3 solved for real with the offline teaching model (the solution cell would read .env)."""
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


def test_the_answers_are_defined_only_in_the_exercises():
    assert LESSON.assert_answers_defined_nowhere_else() == ["06.1", "06.2", "06.3"]


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


def test_06_1_a_capture_that_did_not_carry_the_calls_fails(capture_answers):
    failed_with("06.1", {**capture_answers, "captured": CaptureTransport(stdio_transport())}, "tools/list")


def test_06_1_seconds_instead_of_ms_fail(capture_answers):
    seconds = [sample / 1000 for sample in capture_answers["samples_on"]]
    ratio = statistics.median(seconds) / statistics.median(capture_answers["samples_off"])
    failed_with("06.1", {**capture_answers, "samples_on": seconds, "capture_ratio": ratio}, "samples_on[0]", "1e6")


def test_06_1_microseconds_instead_of_ms_fail(capture_answers):
    micro = [sample * 1000 for sample in capture_answers["samples_on"]]
    ratio = statistics.median(micro) / statistics.median(capture_answers["samples_off"])
    failed_with("06.1", {**capture_answers, "samples_on": micro, "capture_ratio": ratio}, "sum of samples_on")


def test_06_1_calls_back_to_back_instead_of_taking_turns_fail(capture_answers):
    replay = without_turns(capture_answers["captured"])
    failed_with("06.1", {**capture_answers, "captured": replay}, "longest pause", "take turns")


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
    given = {"CAPTURE_CALLS": 40, "CAPTURE_WARMUP": 10, "CAPTURE_BLOCK": 10, "BLOB_SIZES": (10,), "BLOB_CALLS": 10}
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check(exercise_id, dict(given))
    out = capsys.readouterr().out
    assert f"Exercise {exercise_id} — not attempted yet" in out
    assert "CAPTURE_CALLS" not in out and "BLOB_SIZES" not in out  # only what is missing is named (not the setup)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, dict(given))
