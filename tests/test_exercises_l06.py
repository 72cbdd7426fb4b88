"""Lesson 06's exercise checks (mcp_teach.exercises.l06): real measurements pass, wrong answers fail with
expected / found / hint, and missing ones are "not attempted" (an error while grading). 06.1 and 06.2 are solved by
the lesson's own solution cells, run with its measuring functions; nothing asserts how fast anything was."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import statistics
import time
from itertools import pairwise
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
from mcp_teach.llm.trace import Trace
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


def without_warm_up(captured: CaptureTransport, calls: int, *, keep_tools_list: bool) -> CaptureTransport:
    """What ``captured`` would have recorded had the client on it skipped its ``calls`` warm-up calls (and
    ``tools/list``)."""
    warm_up = captured.capture.requests("tools/call")[:calls]
    if not keep_tools_list:
        warm_up += captured.capture.requests("tools/list")
    skipped = {request.id for request in warm_up}
    replay = CaptureTransport(stdio_transport())  # never connected: no process starts
    replay.capture.messages.extend(wire for wire in captured.capture if wire.id is None or wire.id not in skipped)
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


@pytest.mark.wrong_answer("06.1")
def test_06_1_a_mean_instead_of_the_median_fails(capture_answers):
    on, off = capture_answers["samples_on"], capture_answers["samples_off"]
    wrong = statistics.fmean(on) / statistics.fmean(off) * 1.5
    failed_with("06.1", {**capture_answers, "capture_ratio": wrong}, "capture_ratio", "median")


@pytest.mark.wrong_answer("06.1")
def test_06_1_too_few_samples_fail(capture_answers):
    failed_with("06.1", {**capture_answers, "samples_on": capture_answers["samples_on"][:-1]}, "samples_on")


@pytest.mark.wrong_answer("06.1")
def test_06_1_a_capture_of_another_connection_fails(capture_answers):
    failed_with("06.1", {**capture_answers, "captured": CaptureTransport(build_calculator_server())}, "stdio")


@pytest.mark.wrong_answer("06.1")
def test_06_1_a_capture_that_did_not_carry_the_calls_fails(capture_answers):
    failed_with("06.1", {**capture_answers, "captured": CaptureTransport(stdio_transport())}, "tools/list")


@pytest.mark.wrong_answer("06.1")
def test_06_1_seconds_instead_of_ms_fail(capture_answers):
    seconds = [sample / 1000 for sample in capture_answers["samples_on"]]
    ratio = statistics.median(seconds) / statistics.median(capture_answers["samples_off"])
    failed_with("06.1", {**capture_answers, "samples_on": seconds, "capture_ratio": ratio}, "samples_on[0]", "1e6")


@pytest.mark.wrong_answer("06.1")
def test_06_1_microseconds_instead_of_ms_fail(capture_answers):
    micro = [sample * 1000 for sample in capture_answers["samples_on"]]
    ratio = statistics.median(micro) / statistics.median(capture_answers["samples_off"])
    failed_with("06.1", {**capture_answers, "samples_on": micro, "capture_ratio": ratio}, "sum of samples_on")


@pytest.mark.wrong_answer("06.1")
def test_06_1_calls_back_to_back_instead_of_taking_turns_fail(capture_answers):
    replay = without_turns(capture_answers["captured"])  # its samples: each call's time on the wire, back to back
    timed = replay.capture.requests("tools/call")[-len(capture_answers["samples_on"]) :]
    samples_on = [(replay.capture.response_to(request).at - request.at) * 1000 for request in timed]
    ratio = statistics.median(samples_on) / statistics.median(capture_answers["samples_off"])
    answers = {**capture_answers, "captured": replay, "samples_on": samples_on, "capture_ratio": ratio}
    failed_with("06.1", answers, "longest pause", "take turns")


def _ratio(on: list[float], off: list[float], how: str) -> float:
    """capture_ratio as a student might compute it (``how``), from the two lists."""
    on_median, off_median = statistics.median(on), statistics.median(off)
    return {
        "hard-coded": 1.05,
        "inverted": off_median / on_median,
        "percent-overhead": (on_median / off_median - 1) * 100,
        "same-list": 1.0,
    }[how]


@pytest.mark.wrong_answer("06.1")
@pytest.mark.parametrize(
    ("mistake", "fragments"),
    [
        ("no-warm-up-at-all", ("tools/list before the first tools/call", "warm_up(client, calls) lists the tools")),
        ("warm-up-calls-skipped", ("the tools/call requests recorded by captured", "CAPTURE_WARMUP warm-up calls")),
        ("same-list", ("samples_off and samples_on", "the plain connection's")),
        ("hard-coded", ("capture_ratio", "of your own two lists")),
        ("inverted", ("capture_ratio", "on divided by off")),
        ("percent-overhead", ("capture_ratio", "on divided by off")),
    ],
)
def test_06_1_a_skipped_warm_up_or_a_ratio_not_computed_from_the_samples_fails(capture_answers, mistake, fragments):
    answers = dict(capture_answers)
    if mistake.startswith(("no-warm-up", "warm-up")):
        keep = mistake == "warm-up-calls-skipped"
        warm_up_calls = answers["CAPTURE_WARMUP"]
        answers["captured"] = without_warm_up(answers["captured"], warm_up_calls, keep_tools_list=keep)
    else:
        if mistake == "same-list":
            answers["samples_off"] = list(answers["samples_on"])
        answers["capture_ratio"] = _ratio(answers["samples_on"], answers["samples_off"], mistake)
    hint = failed_with("06.1", answers, *fragments).split("Hint:")[1]
    assert f"{statistics.median(answers['samples_on']) / statistics.median(answers['samples_off']):.3f}" not in hint


def test_06_2_real_measurements_pass_and_print_the_extra_ms(blob_answers, capsys):
    check("06.2", blob_answers)
    out = passed(capsys, "06.2")
    assert re.search(r"in-memory [+-]\S+ ms, streamable-http [+-]\S+ ms", out), out  # tiny sizes: either sign


@pytest.mark.wrong_answer("06.2")
def test_06_2_a_ratio_instead_of_a_difference_fails(blob_answers):
    samples, sizes = blob_answers["blob_samples"], blob_answers["BLOB_SIZES"]
    ratio = {
        transport: statistics.median(samples[transport, max(sizes)]) / statistics.median(samples[transport, min(sizes)])
        for transport in ("in-memory", "streamable-http")
    }
    failed_with("06.2", {**blob_answers, "extra_ms": ratio}, "extra_ms", "not a ratio")


@pytest.mark.wrong_answer("06.2")
def test_06_2_a_server_whose_text_is_wrong_fails(blob_answers):
    def wrong_server() -> FastMCP:
        server = FastMCP("blob")

        @server.tool
        def blob(size: int) -> str:
            return "y" * size

        return server

    failed_with("06.2", {**blob_answers, "build_blob_server": wrong_server}, "letter x")


@pytest.mark.wrong_answer("06.2")
def test_06_2_a_missing_size_fails(blob_answers):
    samples = {key: value for key, value in blob_answers["blob_samples"].items() if key[1] != 10}
    failed_with("06.2", {**blob_answers, "blob_samples": samples}, "the keys of blob_samples")


def _extra(samples: dict, sizes: tuple[int, ...], large: int, small: int, average=statistics.median) -> dict:
    return {
        transport: average(samples[transport, large]) - average(samples[transport, small])
        for transport in ("in-memory", "streamable-http")
    }


def _blob_mistake(answers: dict[str, Any], mistake: str) -> dict[str, Any]:
    """06.2's answers with one mistake a student might make."""
    samples, sizes = dict(answers["blob_samples"]), answers["BLOB_SIZES"]
    largest, smallest = max(sizes), min(sizes)
    if mistake == "size-ignored":

        def build_blob_server() -> FastMCP:
            server = FastMCP("blob")

            @server.tool
            def blob(size: int) -> str:
                return "x" * 10

            return server

        return {**answers, "build_blob_server": build_blob_server}
    if mistake == "http-samples-reused":  # the in-memory samples stored under both keys
        samples.update({("streamable-http", size): list(samples["in-memory", size]) for size in sizes})
    if mistake == "warm-up-timed-too":
        samples = {key: value[:2] + value for key, value in samples.items()}
    if mistake == "http-key-misspelt":
        samples = {("http" if key[0] == "streamable-http" else key[0], key[1]): value for key, value in samples.items()}
        return {**answers, "blob_samples": samples}
    extra = {
        "smallest-minus-largest": lambda: _extra(samples, sizes, smallest, largest),
        "means": lambda: _extra(samples, sizes, largest, smallest, statistics.fmean),
        "middle-size": lambda: _extra(samples, sizes, sorted(sizes)[1], smallest),
        "predicted": lambda: {"in-memory": 20.0, "streamable-http": 60.0},
    }.get(mistake, lambda: _extra(samples, sizes, largest, smallest))()
    return {**answers, "blob_samples": samples, "extra_ms": extra}


@pytest.mark.wrong_answer("06.2")
@pytest.mark.parametrize(
    ("mistake", "fragments"),
    [
        ("size-ignored", ("the length of the text blob(size=1234) returns",)),
        ("http-samples-reused", ("the samples of streamable-http", "teaching_client(url)")),
        ("warm-up-timed-too", ("the number of samples in blob_samples", "BLOB_CALLS timed calls")),
        ("http-key-misspelt", ("the keys of blob_samples", "both transports")),
        ("smallest-minus-largest", ("extra_ms['in-memory']", "largest size minus smallest")),
        ("means", ("extra_ms['in-memory']", "statistics.median")),
        ("middle-size", ("extra_ms['in-memory']", "the median for the largest size")),
        ("predicted", ("extra_ms['in-memory']", "of your own samples")),
    ],
)
def test_06_2_a_fixed_size_a_skipped_connection_or_another_difference_fails(blob_answers, mistake, fragments):
    failed_with("06.2", _blob_mistake(blob_answers, mistake), *fragments)


def _loop_mistake(answers: dict[str, Any], mistake: str) -> dict[str, Any]:
    """06.3's answers with one mistake a student might make."""
    timed, tool_call_ms, llm_ms = answers["timed"], answers["tool_call_ms"], answers["llm_ms"]
    events, loop_ms = list(timed.trace), answers["loop_ms"]
    if mistake == "another-question":
        events = [
            dataclasses.replace(e, payload={**e.payload, "content": "what is 3 times 4?"})
            if e.kind == "question"
            else e
            for e in events
        ]
    if mistake == "no-capture-transport":
        events, tool_call_ms = [e for e in events if e.kind != "jsonrpc"], []
    if mistake == "loop-ms-from-the-parts":
        loop_ms = sum(tool_call_ms) + sum(llm_ms)
    if mistake == "loop-in-seconds":
        loop_ms /= 1000
    if mistake == "tools-list-counted":
        jsonrpc = [e for e in events if e.kind == "jsonrpc"]
        tool_call_ms = [
            (later.at - earlier.at) * 1000 for earlier, later in zip(jsonrpc[::2], jsonrpc[1::2], strict=True)
        ]
    if mistake == "llm-ms-round-to-round":
        starts = [e.at for e in timed.trace.of_kind("llm-request")] + [timed.trace.of_kind("answer")[0].at]
        llm_ms = [(later - earlier) * 1000 for earlier, later in pairwise(starts)]
    share = {
        "share-in-percent": 100 * sum(tool_call_ms) / loop_ms,
        "share-of-model-time": sum(tool_call_ms) / sum(llm_ms),
    }
    return {
        "timed": dataclasses.replace(timed, trace=Trace(events=events)),
        "loop_ms": loop_ms,
        "tool_call_ms": tool_call_ms,
        "llm_ms": llm_ms,
        "tool_share": share.get(mistake, sum(tool_call_ms) / loop_ms),
    }


@pytest.mark.wrong_answer("06.3")
@pytest.mark.parametrize(
    ("mistake", "fragments"),
    [
        ("another-question", ("the question in timed.trace", "word for word")),
        ("no-capture-transport", ("the tools/call requests in timed.trace", "CaptureTransport")),
        ("loop-ms-from-the-parts", ("loop_ms", "not its parts")),
        ("loop-in-seconds", ("loop_ms", "× 1000")),
        ("tools-list-counted", ("len(tool_call_ms)", "one entry per tools/call request")),
        ("llm-ms-round-to-round", ("llm_ms[0] (round 1)", "pair each llm-request event with the llm-response")),
        ("share-in-percent", ("tool_share", "between 0 and 1")),
        ("share-of-model-time", ("tool_share", "a share of the whole question")),
    ],
)
def test_06_3_a_question_not_timed_as_a_whole_or_taken_apart_wrongly_fails(loop_answers, mistake, fragments):
    failed_with("06.3", _loop_mistake(loop_answers, mistake), *fragments)


def test_06_3_the_real_question_passes(loop_answers, capsys):
    check("06.3", loop_answers)
    assert "tools/call share" in passed(capsys, "06.3")


@pytest.mark.wrong_answer("06.3")
def test_06_3_seconds_instead_of_ms_fail(loop_answers):
    seconds = [ms / 1000 for ms in loop_answers["tool_call_ms"]]
    failed_with("06.3", {**loop_answers, "tool_call_ms": seconds}, "tool_call_ms[0]")


@pytest.mark.wrong_answer("06.3")
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
