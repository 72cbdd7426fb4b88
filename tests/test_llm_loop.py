"""The LLM tool loop end to end: real openai SDK, the offline model in-process and over HTTP, every transport.

Also: the server's instructions in the system message, and a tool the server does not have.

For each (transport, backend) one connection asks a fixed list of questions (computed once, on first use);
the tests then read the answers, the traces and the captured wire messages.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from fastmcp import FastMCP

from mcp_teach.client import CONNECTIONS, calculator_target, teaching_client
from mcp_teach.config import Settings
from mcp_teach.llm.loop import SYSTEM_PROMPT, LoopResult, ask
from mcp_teach.llm.provider import OFFLINE_BASE_URL, model_name, openai_client
from mcp_teach.llm.teaching_model import MODEL_NAME, complete
from mcp_teach.llm.trace import ACTORS, TraceEvent
from mcp_teach.servers.calculator import SERVER_INSTRUCTIONS, SERVER_NAME, build_calculator_server
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture

MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
BACKENDS = ("in-process", "http")
COMBINATIONS = [(connection, backend) for connection in CONNECTIONS for backend in BACKENDS]
IDS = [f"{connection}-{backend}" for connection, backend in COMBINATIONS]

#: name: (question, extra arguments for ``ask``), asked in this order on one connection.
QUESTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "english": ("What is 1 + 2?", {"since": 0}),
    "chinese": ("帮我算 1+2", {}),
    "chain": ("multiply 3 by 4, then subtract 5", {}),
    "parallel": ("What is 1 + 2 and 3 * 4?", {}),
    "error": ("divide 1 by 0", {}),
    "unanswerable": ("What is the capital of France?", {}),
    "limit 1": ("multiply 3 by 4, then subtract 5", {"max_rounds": 1}),
    "limit 2": ("multiply 3 by 4, then subtract 5", {"max_rounds": 2}),
}


@dataclass
class Asked:
    """One question: the result, the slice of the capture it produced, and what ``on_event`` saw."""

    result: LoopResult
    capture: Capture
    start: int
    end: int
    #: (event, how many wire messages this question had produced when ``on_event`` got it)
    live: list[tuple[TraceEvent, int]] = field(default_factory=list)

    @property
    def wire(self) -> list[dict[str, Any]]:
        """The MCP messages of this question (from ``start``: the connection's opening for ``since=0``)."""
        return [w.message for w in self.capture.messages[self.start : self.end]]

    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        """The tools/call requests on the wire: (name, arguments)."""
        return [(m["params"]["name"], m["params"]["arguments"]) for m in self.wire if m.get("method") == "tools/call"]

    def tool_results(self) -> list[dict[str, Any]]:
        """The results of the tools/call requests, in order."""
        ids = {m["id"] for m in self.wire if m.get("method") == "tools/call"}
        return [m["result"] for m in self.wire if "result" in m and m.get("id") in ids]

    def of_kind(self, kind: str) -> list[TraceEvent]:
        return self.result.trace.of_kind(kind)


@pytest.fixture(scope="module")
def model_url(cli_server) -> Iterator[str]:
    """``mcp-teach model serve --port 0``: the offline model over real HTTP on loopback."""
    server = cli_server([MCP_TEACH, "model", "serve", "--port", "0"])
    yield server.url
    code, _, stderr = server.stop(signal.SIGTERM)
    assert code == 0, stderr


async def _ask_all(connection: str, settings: Settings) -> dict[str, Asked]:
    asked: dict[str, Asked] = {}
    async with (
        openai_client(settings) as llm,
        calculator_target(connection) as target,
        teaching_client(CaptureTransport(target)) as client,
    ):
        capture = client.transport.capture
        for name, (question, extra) in QUESTIONS.items():
            live: list[tuple[TraceEvent, int]] = []
            before = len(capture)
            result = await ask(
                question,
                client,
                llm,
                model=model_name(settings),
                on_event=lambda event, live=live, before=before: live.append((event, len(capture) - before)),
                **extra,
            )
            asked[name] = Asked(result, capture, extra.get("since", before), len(capture), live)
    return asked


@pytest.fixture(scope="module")
def sessions(run, model_url: str) -> Callable[[str, str], dict[str, Asked]]:
    """``sessions(connection, backend)``: every question of QUESTIONS asked on one connection (cached)."""
    cache: dict[tuple[str, str], dict[str, Asked]] = {}
    over_http = Settings(openai_base_url=model_url, openai_model=MODEL_NAME, openai_api_key="anything")

    def get(connection: str, backend: str) -> dict[str, Asked]:
        if (connection, backend) not in cache:
            settings = Settings() if backend == "in-process" else over_http
            cache[connection, backend] = run(_ask_all, connection, settings)
        return cache[connection, backend]

    return get


combinations = pytest.mark.parametrize(("connection", "backend"), COMBINATIONS, ids=IDS)


def tool_messages(event: TraceEvent) -> list[dict[str, Any]]:
    """The ``role: "tool"`` messages at the end of an llm-request."""
    messages = event.payload["messages"]
    end = len(messages)
    while end and messages[end - 1]["role"] == "tool":
        end -= 1
    return messages[end:]


# --- Answers -----------------------------------------------------------------------------------------------------


@combinations
def test_answers_come_in_the_language_of_the_question(sessions, connection: str, backend: str) -> None:
    asked = sessions(connection, backend)
    assert asked["english"].result.answer == "1 + 2 = 3."
    assert asked["chinese"].result.answer == "计算结果：1 + 2 = 3。"
    for name in ("english", "chinese"):
        assert asked[name].calls() == [("calculator_add", {"a": 1, "b": 2})]
        assert (asked[name].result.rounds, asked[name].result.stopped_early) == (2, False)


@combinations
def test_a_chain_takes_one_round_per_step_and_feeds_each_result_back(sessions, connection: str, backend: str) -> None:
    asked = sessions(connection, backend)["chain"]
    assert asked.result.answer == "3 × 4 = 12, 12 − 5 = 7. The answer is 7."
    assert (asked.result.rounds, asked.result.stopped_early) == (3, False)
    assert asked.calls() == [("calculator_multiply", {"a": 3, "b": 4}), ("calculator_subtract", {"a": 12, "b": 5})]
    requests, responses = asked.of_kind("llm-request"), asked.of_kind("llm-response")
    assert [len(r.payload["choices"][0]["message"].get("tool_calls", [])) for r in responses] == [1, 1, 0]
    assert tool_messages(requests[0]) == []
    for request, response, result in zip(requests[1:], responses[:-1], asked.tool_results(), strict=True):
        [call] = response.payload["choices"][0]["message"]["tool_calls"]
        assert tool_messages(request) == [
            {"role": "tool", "tool_call_id": call["id"], "content": result["content"][0]["text"]}
        ]
    assert [m["content"] for m in asked.result.messages if m["role"] == "tool"] == ["12.0", "7.0"]


@combinations
def test_parallel_calls_are_all_executed_and_all_fed_back(sessions, connection: str, backend: str) -> None:
    asked = sessions(connection, backend)["parallel"]
    first = asked.of_kind("llm-response")[0].payload["choices"][0]["message"]
    assert [call["function"]["name"] for call in first["tool_calls"]] == ["calculator_add", "calculator_multiply"]
    assert asked.calls() == [("calculator_add", {"a": 1, "b": 2}), ("calculator_multiply", {"a": 3, "b": 4})]
    fed_back = tool_messages(asked.of_kind("llm-request")[1])
    assert [(m["tool_call_id"], m["content"]) for m in fed_back] == [
        (first["tool_calls"][0]["id"], "3.0"),
        (first["tool_calls"][1]["id"], "12.0"),
    ]
    assert (asked.result.answer, asked.result.rounds) == ("1 + 2 = 3. 3 × 4 = 12.", 2)


@combinations
def test_a_tool_error_goes_back_to_the_model_and_is_explained(sessions, connection: str, backend: str) -> None:
    asked = sessions(connection, backend)["error"]
    [result] = asked.tool_results()
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text == "Cannot divide by zero: argument 'b' must not be 0."
    assert tool_messages(asked.of_kind("llm-request")[1])[0]["content"] == f"Error: {text}"
    assert asked.result.answer == f"I could not compute 1 ÷ 0: the tool calculator_divide said: {text}"
    assert (asked.result.rounds, asked.result.stopped_early) == (2, False)


@combinations
def test_a_question_without_a_tool_gets_a_plain_reply(sessions, connection: str, backend: str) -> None:
    asked = sessions(connection, backend)["unanswerable"]
    assert asked.calls() == []
    assert (asked.result.rounds, asked.result.stopped_early) == (1, False)
    assert asked.result.answer.startswith("I can only help with what my tools do: calculator_add")
    assert asked.of_kind("llm-response")[0].label.startswith("answer: ")


@pytest.mark.parametrize(
    ("limit", "ran", "wanted"), [(1, [], "calculator_multiply"), (2, ["calculator_multiply"], "calculator_subtract")]
)
@combinations
def test_the_round_limit_stops_the_loop_and_says_so(
    sessions, connection: str, backend: str, limit: int, ran: list[str], wanted: str
) -> None:
    """Calls asked for in the last allowed round are not run: no round is left to show the model their results."""
    asked = sessions(connection, backend)[f"limit {limit}"]
    assert (asked.result.rounds, asked.result.stopped_early) == (limit, True)
    assert [name for name, _ in asked.calls()] == ran
    assert len(asked.of_kind("llm-request")) == limit
    last = asked.result.messages[-1]
    assert last["role"] == "assistant" and [c["function"]["name"] for c in last["tool_calls"]] == [wanted]
    answer = asked.result.answer
    assert answer.startswith(f"Stopped after {limit} round")
    assert f"the model still asked for {wanted}, which was not run" in answer


# --- The trace ---------------------------------------------------------------------------------------------------

ENGLISH_KINDS = [
    ("user", "client", "question"),
    ("client", "server", "jsonrpc"),  # tools/list
    ("server", "client", "jsonrpc"),
    ("client", "llm", "llm-request"),
    ("llm", "client", "llm-response"),  # tool_calls
    ("client", "server", "jsonrpc"),  # tools/call
    ("server", "client", "jsonrpc"),
    ("client", "llm", "llm-request"),
    ("llm", "client", "llm-response"),  # the answer
    ("client", "user", "answer"),
]


@combinations
def test_the_trace_is_in_time_order_with_all_four_actors(sessions, connection: str, backend: str) -> None:
    asked = sessions(connection, backend)
    for one in asked.values():
        times = [event.at for event in one.result.trace]
        assert times == sorted(times)
    english = list(asked["english"].result.trace)
    opening = len(english) - len(ENGLISH_KINDS)
    assert opening > 0 and all(event.kind == "jsonrpc" for event in english[:opening])
    assert [(e.sender, e.receiver, e.kind) for e in english[opening:]] == ENGLISH_KINDS
    assert {actor for e in english for actor in (e.sender, e.receiver)} == set(ACTORS)
    assert [e.label for e in english if e.kind == "jsonrpc"][-4:] == [
        f"tools/list id={english[opening + 1].payload['id']}",
        f"result of tools/list id={english[opening + 1].payload['id']}",
        f"tools/call id={english[opening + 5].payload['id']}",
        f"result of tools/call id={english[opening + 5].payload['id']}",
    ]


@combinations
def test_mcp_events_are_exactly_the_captured_wire_messages(sessions, connection: str, backend: str) -> None:
    for one in sessions(connection, backend).values():
        events = one.of_kind("jsonrpc")
        assert [event.payload for event in events] == one.wire
        assert [event.at for event in events] == [w.at for w in one.capture.messages[one.start : one.end]]
        for event, wire in zip(events, one.capture.messages[one.start : one.end], strict=True):
            assert (event.sender, event.receiver) == tuple(wire.direction.split("->"))


@combinations
def test_since_zero_starts_with_the_connections_first_message(sessions, connection: str, backend: str) -> None:
    asked = sessions(connection, backend)
    english = asked["english"]
    first = english.result.trace.events[0]
    assert english.start == 0 and first.payload == english.capture[0].message
    assert first.payload["method"] == ("initialize" if connection == "sse" else "server/discover")
    for name in QUESTIONS.keys() - {"english"}:  # by default only the question's own messages
        assert asked[name].wire[0]["method"] == "tools/list"
        assert asked[name].result.trace.events[0].kind == "question"


@combinations
def test_on_event_sees_each_event_as_it_happens(sessions, connection: str, backend: str) -> None:
    """Each callback comes before the next step: e.g. the tool_calls response before its tools/call is sent."""
    asked = sessions(connection, backend)
    for one in asked.values():
        assert [event for event, _ in one.live] == [e for e in one.result.trace if e.kind != "jsonrpc"]
    english = asked["english"].live
    assert [(event.kind, produced) for event, produced in english] == [
        ("question", 0),
        ("llm-request", 2),  # after tools/list and its result
        ("llm-response", 2),  # tool_calls: not executed yet
        ("llm-request", 4),  # after tools/call and its result
        ("llm-response", 4),
        ("answer", 4),
    ]


@combinations
def test_the_model_is_asked_with_the_tools_and_the_whole_conversation(sessions, connection: str, backend: str) -> None:
    chain = sessions(connection, backend)["chain"]
    requests = [event.payload for event in chain.of_kind("llm-request")]
    assert {request["model"] for request in requests} == {MODEL_NAME}
    tools = [tool["function"]["name"] for tool in requests[0]["tools"]]
    assert tools == ["calculator_add", "calculator_subtract", "calculator_multiply", "calculator_divide"]
    assert [m["role"] for m in requests[-1]["messages"]] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert requests[-1]["messages"][1:] == chain.result.messages[:-1]  # the system message is sent, not kept
    assert chain.result.messages[-1] == {"role": "assistant", "content": chain.result.answer}


# --- The server's instructions -----------------------------------------------------------------------------------


@combinations
def test_the_servers_instructions_are_in_the_system_message(sessions, connection: str, backend: str) -> None:
    """From the initialize result (SSE: 2025-11-25) or the server/discover result (2026-07-28), as sent on the wire."""
    asked = sessions(connection, backend)
    opening = asked["english"].wire[1]["result"]
    assert opening["instructions"] == SERVER_INSTRUCTIONS
    expected = f"{SYSTEM_PROMPT}\n\nInstructions from the MCP server {SERVER_NAME}:\n{SERVER_INSTRUCTIONS}"
    for one in asked.values():
        for request in one.of_kind("llm-request"):
            assert request.payload["messages"][0] == {"role": "system", "content": expected}
        assert one.result.messages[0]["role"] == "user"


def test_a_server_without_instructions_adds_nothing_to_the_system_prompt(run) -> None:
    server = FastMCP("plain-tools", version="1.0.0")

    @server.tool
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    async def main() -> tuple[LoopResult, str | None]:
        async with teaching_client(CaptureTransport(server)) as client:
            result = await ask("What is 1 + 2?", client, openai_client(Settings()), model=MODEL_NAME)
            return result, client.instructions

    result, instructions = run(main)
    assert instructions is None
    request = result.trace.of_kind("llm-request")[0].payload
    assert request["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert result.answer == "1 + 2 = 3."


def test_the_offline_model_answers_the_same_without_the_instructions(run) -> None:
    """The teaching model does not read system messages: the server's instructions change no decision."""

    async def main(system_prompt: str) -> LoopResult:
        async with teaching_client(CaptureTransport(build_calculator_server())) as client:
            llm = openai_client(Settings())
            return await ask(
                "multiply 3 by 4, then subtract 5", client, llm, model=MODEL_NAME, system_prompt=system_prompt
            )

    with_instructions = run(main, SYSTEM_PROMPT)
    other = run(main, "Never call a tool.")
    replies = [[e.payload["choices"] for e in r.trace.of_kind("llm-response")] for r in (with_instructions, other)]
    assert replies[0] == replies[1]
    assert with_instructions.answer == other.answer == "3 × 4 = 12, 12 − 5 = 7. The answer is 7."


def test_max_rounds_must_allow_one_request(run) -> None:
    async def main() -> None:
        async with teaching_client(CaptureTransport(build_calculator_server())) as client:
            await ask("What is 1 + 2?", client, openai_client(Settings()), model=MODEL_NAME, max_rounds=0)

    with pytest.raises(ValueError, match="max_rounds must be at least 1, not 0"):
        run(main)


# --- A tool the server does not have -----------------------------------------------------------------------------

#: Offered to the model although no server has it: the offline model calls it for "2 to the power of 10".
MADE_UP_TOOL = {
    "type": "function",
    "function": {
        "name": "calculator_power",
        "description": "Raise a to the power of b (a ** b).",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
}


def model_with_a_made_up_tool() -> openai.AsyncOpenAI:
    """The offline model, shown one tool more than the client sent: like a real model that invents a tool name."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        return httpx2.Response(200, json=complete({**body, "tools": [*body["tools"], MADE_UP_TOOL]}))

    http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler), base_url=OFFLINE_BASE_URL)
    return openai.AsyncOpenAI(base_url=OFFLINE_BASE_URL, api_key="offline", http_client=http_client, max_retries=0)


async def _ask_for_a_made_up_tool(connection: str) -> tuple[LoopResult, Capture]:
    async with (
        model_with_a_made_up_tool() as llm,
        calculator_target(connection) as target,
        teaching_client(CaptureTransport(target)) as client,
    ):
        result = await ask("What is 2 to the power of 10?", client, llm, model=MODEL_NAME)
        return result, client.transport.capture


@pytest.mark.parametrize("connection", CONNECTIONS)
def test_an_unknown_tool_is_a_protocol_error_that_goes_back_to_the_model(run, connection: str) -> None:
    """JSON-RPC -32602 instead of a result (server/tools, Error Handling); the loop goes on and feeds it back."""
    result, capture = run(_ask_for_a_made_up_tool, connection)
    [call] = capture.requests("tools/call")
    params = call.message["params"]
    assert (params["name"], params["arguments"]) == ("calculator_power", {"a": 2, "b": 10})
    error = capture.response_to(call).message["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Unknown tool: 'calculator_power'. This server has: calculator_add")
    tool_message = result.messages[2]
    fed_back = f"Error: the MCP server answered with JSON-RPC error -32602: {error['message']}"
    assert tool_message == {"role": "tool", "tool_call_id": "call_1_0", "content": fed_back}
    assert (result.rounds, result.stopped_early) == (2, False)
    assert result.answer.startswith("I could not compute 2 ^ 10: the tool calculator_power said: the MCP server")
    assert f"error of tools/call id={call.id}" in [event.label for event in result.trace]
    assert len(capture.requests("tools/list")) == 1  # the error makes the client list nothing again
