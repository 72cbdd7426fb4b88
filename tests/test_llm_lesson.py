"""The lesson-04 helpers on real loops: the offline teaching model, the calculator in memory, the openai SDK."""

from __future__ import annotations

import dataclasses
import json

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.lessons.l04_tool_loop import (
    PHASES,
    diagram,
    phases,
    show_phase,
    tool_call_exchanges,
    tool_call_table,
)
from mcp_teach.llm.loop import LoopResult, ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.llm.trace import Trace, TraceEvent
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

OFFLINE = Settings()


async def _ask(question: str, mode: str = "auto", max_rounds: int = 5) -> LoopResult:
    llm = openai_client(OFFLINE)
    async with teaching_client(CaptureTransport(build_calculator_server()), mode=mode) as client:
        return await ask(question, client, llm, model=model_name(OFFLINE), max_rounds=max_rounds, since=0)


def test_phases_of_one_question(run):
    result = run(_ask, "What is 1 + 2?")
    assert phases(result.trace) == [
        "connect",
        "connect",
        "question",
        "discovery",
        "discovery",
        "decision",
        "decision",
        "execution",
        "execution",
        "feeding back",
        "answer",
        "answer",
    ]
    assert set(phases(result.trace)) == set(PHASES)


def test_the_legacy_handshake_is_the_connect_phase(run):
    result = run(_ask, "What is 1 + 2?", "legacy")
    labels = [
        event.label for event, phase in zip(result.trace, phases(result.trace), strict=True) if phase == "connect"
    ]
    assert labels == ["initialize id=1", "result of initialize id=1", "notifications/initialized"]


def test_a_chain_alternates_decision_and_feeding_back(run):
    result = run(_ask, "multiply 3 by 4, then subtract 5")
    llm_phases = [
        phase for event, phase in zip(result.trace, phases(result.trace), strict=True) if event.kind.startswith("llm")
    ]
    assert llm_phases == ["decision", "decision", "feeding back", "decision", "feeding back", "answer"]


def test_show_phase_keeps_the_numbers_of_the_whole_trace(run):
    result = run(_ask, "What is 1 + 2?")
    text = show_phase(result.trace, "execution", expand=True, fold=["params._meta"]).text()
    headlines = [line for line in text.splitlines() if line.startswith("#")]
    assert headlines == ["#8 client → server  tools/call id=3", "#9 server → client  result of tools/call id=3"]
    two = show_phase(result.trace, "question", "answer").text()
    assert [line.split()[0] for line in two.splitlines() if line.startswith("#")] == ["#3", "#11", "#12"]
    assert "#" not in show_phase(Trace(), "execution").text()


def test_show_phase_refuses_an_unknown_phase(run):
    result = run(_ask, "What is 1 + 2?")
    with pytest.raises(ValueError, match="unknown phase 'executing'; phases are: question, connect"):
        show_phase(result.trace, "executing")


def test_diagram_draws_one_arrow_per_event(run):
    result = run(_ask, "帮我算 1+2")
    lines = repr(diagram(result.trace)).splitlines()
    assert len(lines) == 1 + len(result.trace)
    assert lines[0].split() == ["phase", "user", "client", "llm", "server"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["#1"].split()[1:3] == ["connect", "|"] and "-->|" in rows["#1"]  # client → server
    assert "|<--" in rows["#2"]  # server → client
    assert rows["#3"].endswith("帮我算 1+2")
    assert rows["#6"].split()[1:5] == ["decision", "|", "|-------->|", "|"]  # client → llm only
    lanes = [line[: line.rindex("|") + 1] for line in lines[1:]]
    assert all(lane.isascii() for lane in lanes)  # ASCII lanes stay aligned in any font
    assert len({line.index("|") for line in lines[1:]}) == 1  # the user lane is one column


def test_diagram_shortens_long_labels(run):
    result = run(_ask, "What is the capital of France?")
    last = repr(diagram(result.trace, label_width=30)).splitlines()[-1]
    assert last.endswith("I can only help with what my …")


def test_parallel_calls_pair_with_their_requests_and_tool_messages(run):
    result = run(_ask, "What is 1 + 2 and what is 3 * 4?")
    exchanges = tool_call_exchanges(result.trace)
    assert [(e.round, e.tool_call["id"], e.request["id"], e.response["id"]) for e in exchanges] == [
        (1, "call_1_0", 3, 3),
        (1, "call_1_1", 4, 4),
    ]
    assert [e.request["params"]["arguments"] for e in exchanges] == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert [e.tool_message for e in exchanges] == [
        {"role": "tool", "tool_call_id": "call_1_0", "content": "3.0"},
        {"role": "tool", "tool_call_id": "call_1_1", "content": "12.0"},
    ]


def test_tool_call_table_shows_the_string_and_the_object(run):
    result = run(_ask, "multiply 3 by 4, then subtract 5")
    lines = repr(tool_call_table(result.trace)).splitlines()
    assert lines[0].split()[:4] == ["round", "tool_call", "id", "function.name"]
    first = lines[2]
    assert first.split()[:3] == ["1", "call_1_0", "calculator_multiply"]
    assert '"{\\"a\\": 3, \\"b\\": 4}"' in first  # the arguments as the JSON string they are
    assert first.endswith('3            {"a": 3, "b": 4}')  # JSON-RPC id, the object
    assert lines[3].split()[:3] == ["2", "call_2_0", "calculator_subtract"]


def test_a_tool_error_reaches_the_model_as_text(run):
    result = run(_ask, "What is 7 divided by 0?")
    (exchange,) = tool_call_exchanges(result.trace)
    assert exchange.response["result"]["isError"] is True
    assert exchange.tool_message["content"] == "Error: Cannot divide by zero: argument 'b' must not be 0."


def test_a_call_asked_for_in_the_last_round_is_not_run(run):
    result = run(_ask, "multiply 3 by 4, then subtract 5", "auto", 2)
    assert result.stopped_early
    done, skipped = tool_call_exchanges(result.trace)
    assert done.request is not None and done.response is not None and done.tool_message is not None
    assert skipped.tool_call["function"]["name"] == "calculator_subtract"
    assert skipped.request is None and skipped.response is None and skipped.tool_message is None
    assert "(not sent)" in repr(tool_call_table(result.trace)).splitlines()[-1]


def test_a_call_with_arguments_that_are_not_json_sends_no_tools_call(run):
    """The loop sends no tools/call for such a call: a trace without one (as the loop would record it)."""
    result = run(_ask, "What is 1 + 2?")
    events = []
    for event in result.trace:
        if event.kind == "jsonrpc" and event.label.endswith("tools/call id=3"):
            continue  # the request and its result are never sent
        if event.kind == "llm-response" and "tool_calls" in event.payload["choices"][0]["message"]:
            payload = json.loads(json.dumps(event.payload))
            payload["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{a: 1"
            event = dataclasses.replace(event, payload=payload)
        events.append(event)
    (exchange,) = tool_call_exchanges(Trace(events))
    assert exchange.request is None and exchange.response is None
    assert exchange.tool_message["tool_call_id"] == "call_1_0"
    assert "(not sent)" in repr(tool_call_table(Trace(events))).splitlines()[2]


def test_events_of_other_kinds_are_the_question_or_the_answer():
    trace = Trace([TraceEvent(0.0, "user", "client", "question", "hi", {"content": "hi"})])
    trace.events.append(TraceEvent(1.0, "client", "user", "answer", "hello", {"content": "hello"}))
    assert phases(trace) == ["question", "answer"]
    assert tool_call_exchanges(trace) == []


def test_a_protocol_error_is_paired_and_shown_in_place_of_a_result(run):
    """An unknown tool gets a JSON-RPC error, not a result (server/tools, Error Handling): a trace with one."""
    result = run(_ask, "What is 1 + 2?")
    error = {"code": -32602, "message": "Unknown tool: 'calculator_add'. This server has: nothing."}
    events = []
    for event in result.trace:
        if event.kind == "jsonrpc" and event.label == "result of tools/call id=3":
            event = dataclasses.replace(
                event, label="error of tools/call id=3", payload={"jsonrpc": "2.0", "id": 3, "error": error}
            )
        events.append(event)
    trace = Trace(events)
    assert phases(trace) == phases(result.trace)  # the error answers the tools/call: still the execution phase
    (exchange,) = tool_call_exchanges(trace)
    assert exchange.response["error"] == error
