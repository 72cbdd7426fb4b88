"""Lesson 06's exercises (the latency lab): what each one expects, for the one-line check cells ``check("06.k")``
of ``notebooks/06_latency_lab.ipynb``.

- 06.1: the measurement of stdio calls with and without a ``CaptureTransport``, taking turns; their median ratio;
- 06.2: a tool whose result grows from a few characters to a megabyte, and its measurement in-memory and over
  streamable HTTP;
- 06.3: one question of the tool loop timed as a whole and taken apart with its trace.

Timings depend on the machine, so no check judges how fast anything was: they check that the student measured
what the exercise asks for (the right calls, the right number of samples, the right connection) and that the
results are computed from the student's own samples. The answers are read from the lesson's globals by
:func:`mcp_teach.exercises.catalogue.check`; on success each check prints one line of what it found.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from mcp_teach.exercises.answers import result_text, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import said, say
from mcp_teach.lessons.l06_summary import format_ms

#: The two connections of 06.2.
BLOB_TRANSPORTS = ("in-memory", "streamable-http")
#: How far two readings of the clocks may disagree (ms): a tick of ``time.monotonic`` and a little more.
CLOCK_SLACK_MS = time.get_clock_info("monotonic").resolution * 1000 + 0.05


def _check_samples(check: Checker, samples: Any, count: int, name: str, count_hint: str) -> None:
    """``samples`` is a list of ``count`` positive durations (ms), as ``time_calls`` returns them."""
    check.instance(samples, list, name, hint="keep the lists of ms that time_calls (or take_turns) returns")
    check.equal(len(samples), count, f"the number of samples in {name}", hint=count_hint)
    check.true(
        all(isinstance(sample, float) and sample > 0 for sample in samples),
        f"the samples in {name}",
        expected="durations in ms, all positive",
        found=samples[:5],
        hint="keep the lists of ms that time_calls (or take_turns) returns",
    )


@exercise(
    "06.1",
    answers=(
        "samples_off",
        "samples_on",
        "captured",
        "capture_ratio",
        "CAPTURE_CALLS",
        "CAPTURE_WARMUP",
        "CAPTURE_BLOCK",
    ),
)
def capture_on_and_off(
    check: Checker,
    samples_off: Any,
    samples_on: Any,
    captured: Any,
    capture_ratio: Any,
    capture_calls: int,
    capture_warmup: int,
    capture_block: int,
) -> None:
    """Two stdio connections, the second through ``captured``, warmed up and taking turns; their median ratio.

    What ``captured`` recorded is the real behaviour checked: ``tools/list`` first, every warm-up and timed call,
    each sample at least as long as its exchange on the wire, and a pause in the captured calls where the plain
    connection took its turn.
    """
    from fastmcp.client.transports import StdioTransport

    from mcp_teach.wire.capture import CaptureTransport

    count_hint = "CAPTURE_CALLS timed calls on each connection: take_turns(..., CAPTURE_CALLS, CAPTURE_BLOCK)"
    for name, samples in [("samples_off", samples_off), ("samples_on", samples_on)]:
        _check_samples(check, samples, capture_calls, name, count_hint)
    check.true(
        samples_off != samples_on,
        "samples_off and samples_on",
        expected="the samples of two connections, which never come out equal",
        found="the same samples twice",
        hint="samples_off are the plain connection's, samples_on those of the client on captured",
    )
    check.instance(captured, CaptureTransport, "captured", hint="captured = CaptureTransport(stdio_transport())")
    check.instance(
        captured.inner, StdioTransport, "the transport inside captured", hint="wrap stdio_transport(): this is stdio"
    )
    methods = [wire.method for wire in captured.capture.requests()]
    check.true(
        "tools/list" in methods and methods.index("tools/list") < [*methods, "tools/call"].index("tools/call"),
        "the requests recorded by captured",
        expected="tools/list before the first tools/call",
        found=methods[:4],
        hint="warm_up(client, calls) lists the tools first; connect samples_on through captured",
    )
    requests = captured.capture.requests("tools/call")
    check.equal(
        len(requests),
        capture_warmup + capture_calls,
        "the tools/call requests recorded by captured",
        hint="CAPTURE_WARMUP warm-up calls, then CAPTURE_CALLS timed ones, all through a client on captured",
    )
    exchanges = [(request, captured.capture.response_to(request)) for request in requests[capture_warmup:]]
    wire_ms = [(response.at - request.at) * 1000 for request, response in exchanges]
    for number, (sample, on_the_wire) in enumerate(zip(samples_on, wire_ms, strict=True)):
        check.true(
            sample >= on_the_wire - CLOCK_SLACK_MS,
            f"samples_on[{number}]",
            expected=f"at least {on_the_wire:.3f} ms, the time its request and response took on the wire",
            found=sample,
            hint="one sample per timed call, in ms: (time.perf_counter_ns() after - before) / 1e6",
        )
    span_ms = (exchanges[-1][1].at - exchanges[0][0].at) * 1000
    check.true(
        sum(samples_on) <= 1.1 * span_ms + 50,
        "the sum of samples_on",
        expected=f"at most the {span_ms:.0f} ms from the first timed call on captured to the last",
        found=sum(samples_on),
        hint="the samples are milliseconds: divide nanoseconds by 1e6",
    )
    pauses = [(later[0].at - earlier[1].at) * 1000 for earlier, later in pairwise(exchanges)]
    turn_ms = 0.5 * capture_block * min(samples_off)
    check.true(
        capture_calls // capture_block < 3 or max(pauses, default=0) >= turn_ms,  # 2 rounds may run back to back
        "the longest pause between two timed calls on captured",
        expected=f"at least {turn_ms:.1f} ms (half a block of plain calls): the plain connection took its turn",
        found=max(pauses, default=0),
        hint="take turns: CAPTURE_BLOCK calls on one connection, then CAPTURE_BLOCK on the other (take_turns)",
    )
    expected = statistics.median(samples_on) / statistics.median(samples_off)
    check.true(
        isinstance(capture_ratio, int | float) and math.isclose(capture_ratio, expected),
        "capture_ratio",
        expected=f"{expected:.3f}, the median of samples_on divided by the median of samples_off",
        found=capture_ratio,
        hint="statistics.median of your own two lists (not the mean), on divided by off",
    )
    say(f"found: median with the capture / without = {capture_ratio:.2f}")


async def _blob_reply(build_blob_server: Callable[[], Any], size: int) -> tuple[list[str], Any]:
    from mcp_teach.client import teaching_client

    async with teaching_client(build_blob_server()) as client:
        tools = [tool.name for tool in await client.list_tools()]
        reply = await client.call_tool("blob", {"size": size}) if tools == ["blob"] else None
    return tools, reply


@exercise("06.2", answers=("build_blob_server", "blob_samples", "extra_ms", "BLOB_SIZES", "BLOB_CALLS"))
def larger_result(
    check: Checker, build_blob_server: Any, blob_samples: Any, extra_ms: Any, blob_sizes: Any, blob_calls: int
) -> None:
    """A ``blob`` tool that returns ``"x" * size``, measured per transport and size; the extra ms of the largest."""
    from fastmcp import FastMCP

    check.function(build_blob_server, "build_blob_server")
    check.instance(build_blob_server(), FastMCP, "what build_blob_server() returns", hint="return the FastMCP server")
    tools, reply = run_sync(_blob_reply(build_blob_server, 1234))
    check.equal(tools, ["blob"], "the tools of build_blob_server()", hint="one tool, a function named blob")
    text = result_text(reply)
    check.equal(len(text), 1234, "the length of the text blob(size=1234) returns", hint="return 'x' * size")
    check.equal(
        set(text), {"x"}, "the characters in the text blob returns", hint="the text is made of the letter x only"
    )
    check.instance(blob_samples, dict, "blob_samples", hint="a dict keyed by (transport, size)")
    check.equal(
        sorted(blob_samples),
        sorted((transport, size) for transport in BLOB_TRANSPORTS for size in blob_sizes),
        "the keys of blob_samples",
        hint="one (transport, size) key per measurement: both transports, every size in BLOB_SIZES",
    )
    for key, samples in blob_samples.items():
        _check_samples(check, samples, blob_calls, f"blob_samples[{key}]", "BLOB_CALLS timed calls per measurement")
    check.true(
        all(blob_samples["streamable-http", size] != blob_samples["in-memory", size] for size in blob_sizes),
        "the samples of streamable-http in blob_samples",
        expected="samples of their own: two connections never time the same",
        found="the in-memory samples again",
        hint="measure streamable-http on a connection of its own: teaching_client(url), with the url serve_http gives",
    )
    check.instance(extra_ms, dict, "extra_ms", hint="a dict from each transport to a number of ms")
    check.equal(sorted(extra_ms), sorted(BLOB_TRANSPORTS), "the keys of extra_ms", hint="one entry per transport")
    largest, smallest = max(blob_sizes), min(blob_sizes)
    for transport in BLOB_TRANSPORTS:
        expected = statistics.median(blob_samples[transport, largest]) - statistics.median(
            blob_samples[transport, smallest]
        )
        check.true(
            isinstance(extra_ms[transport], int | float) and math.isclose(extra_ms[transport], expected),
            f"extra_ms[{transport!r}]",
            expected=f"{expected:.3f}, the median for the largest size minus the median for the smallest (ms)",
            found=extra_ms[transport],
            hint="statistics.median of your own samples, largest size minus smallest: a difference, not a ratio",
        )
    found = ", ".join(
        f"{transport} {'+' if extra_ms[transport] >= 0 else '-'}{format_ms(abs(extra_ms[transport]))} ms"
        for transport in BLOB_TRANSPORTS
    )
    say(f"found: {largest:,} characters instead of {smallest:,} cost {found}")


@exercise("06.3", answers=("timed", "loop_ms", "tool_call_ms", "llm_ms", "tool_share"))
def tool_loop_on_the_scale(
    check: Checker, timed: Any, loop_ms: Any, tool_call_ms: Any, llm_ms: Any, tool_share: Any
) -> None:
    """One question of the tool loop: its whole time, each ``tools/call`` and each LLM round, the tools' share."""
    from mcp_teach.llm.loop import LoopResult

    check.instance(timed, LoopResult, "timed", hint="store what `await ask(...)` returns")
    check.equal(
        timed.trace.of_kind("question")[0].payload["content"],
        said("multiply 3 by 4, then subtract 5"),
        "the question in timed.trace",
        hint="ask the chain of lesson 04, word for word",
    )
    events = [e for e in timed.trace if e.kind == "jsonrpc"]
    requests = [e for e in events if e.payload.get("method") == "tools/call"]
    check.true(
        len(requests) > 0,
        "the tools/call requests in timed.trace",
        expected="at least one",
        found=len(requests),
        hint="connect through a CaptureTransport: only captured MCP messages join the trace",
    )
    span_ms = (timed.trace.events[-1].at - timed.trace.events[0].at) * 1000
    check.true(
        isinstance(loop_ms, int | float) and loop_ms > 0 and loop_ms >= span_ms - CLOCK_SLACK_MS,
        "loop_ms",
        expected=f"at least {span_ms:.1f} ms, from the trace's first event to its last: ask(...) holds them all",
        found=loop_ms,
        hint="time the whole await ask(...), not its parts: (time.perf_counter() after - before) × 1000",
    )
    check.instance(tool_call_ms, list, "tool_call_ms", hint="a list: one duration per tools/call")
    check.instance(llm_ms, list, "llm_ms", hint="a list: one duration per round")
    check.equal(len(tool_call_ms), len(requests), "len(tool_call_ms)", hint="one entry per tools/call request")
    check.equal(len(llm_ms), timed.rounds, "len(llm_ms)", hint="one entry per round: each llm-request and its response")
    responses = {e.payload.get("id"): e for e in events if e.sender == "server"}
    for number, (request, found) in enumerate(zip(requests, tool_call_ms, strict=True)):
        expected = (responses[request.payload["id"]].at - request.at) * 1000
        check.true(
            isinstance(found, int | float) and math.isclose(found, expected, rel_tol=1e-6),
            f"tool_call_ms[{number}] (tools/call id={request.payload['id']})",
            expected=f"{expected:.4f} ms, from the request's `at` to its response's `at`",
            found=found,
            hint="subtract the `at` of the request from the `at` of the response with the same id; seconds × 1000",
        )
    rounds = zip(timed.trace.of_kind("llm-request"), timed.trace.of_kind("llm-response"), strict=True)
    for number, ((request, response), found) in enumerate(zip(rounds, llm_ms, strict=True), start=1):
        expected = (response.at - request.at) * 1000
        check.true(
            isinstance(found, int | float) and math.isclose(found, expected, rel_tol=1e-6),
            f"llm_ms[{number - 1}] (round {number})",
            expected=f"{expected:.4f} ms, from the llm-request's `at` to the llm-response's `at`",
            found=found,
            hint="pair each llm-request event with the llm-response that follows it; seconds × 1000",
        )
    check.true(
        isinstance(tool_share, int | float) and math.isclose(tool_share, sum(tool_call_ms) / loop_ms),
        "tool_share",
        expected="sum(tool_call_ms) / loop_ms",
        found=tool_share,
        hint="a share of the whole question, between 0 and 1",
    )
    say(
        f"found: the whole ask(...) {format_ms(loop_ms)} ms; {len(tool_call_ms)} tools/call "
        f"{format_ms(sum(tool_call_ms))} ms; {len(llm_ms)} model rounds {format_ms(sum(llm_ms))} ms; "
        f"tools/call share {tool_share:.0%}"
    )
