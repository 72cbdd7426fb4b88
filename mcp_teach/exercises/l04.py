"""The exercises of lesson 04 (the LLM tool loop); its check cells, ``check("04.k")``, call these.

Every check reads the real :class:`~mcp_teach.llm.loop.LoopResult` traces the student's code produced, and
expects the offline teaching model's decisions (no ``.env``, as in CI): a real LLM may decide differently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.llm.loop import LoopResult

PARALLEL_QUESTION = "What is 1 + 2 and what is 3 * 4?"
REMAINDER_QUESTION = "What is 17 mod 5?"
#: (sender, receiver) -> events in the trace of "multiply 3 by 4, then subtract 5" (lesson 04, section 10).
CHAIN_PAIRS = {
    ("user", "client"): 1,
    ("client", "server"): 3,
    ("server", "client"): 3,
    ("client", "llm"): 3,
    ("llm", "client"): 3,
    ("client", "user"): 1,
}
#: What a "set of ..." answer may be.
COLLECTIONS = (set, frozenset, list, tuple)
NEVER_PAIRS = {
    ("user", "llm"),
    ("llm", "user"),
    ("user", "server"),
    ("server", "user"),
    ("llm", "server"),
    ("server", "llm"),
}


def listed_tools(result: LoopResult) -> list[dict[str, Any]]:
    """The tools of the ``tools/list`` results in a trace."""
    results = [event.payload.get("result") or {} for event in result.trace if event.kind == "jsonrpc"]
    return [tool for listed in results for tool in listed.get("tools", [])]


def tools_calls(result: LoopResult) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(request, response) of every ``tools/call`` in a trace; the response is ``None`` if none came."""
    messages = [event.payload for event in result.trace if event.kind == "jsonrpc"]
    requests = [m for m in messages if m.get("method") == "tools/call"]
    return [(r, next((m for m in messages if "method" not in m and m.get("id") == r["id"]), None)) for r in requests]


def _question(result: LoopResult) -> str | None:
    questions = result.trace.of_kind("question")
    return questions[0].payload.get("content") if questions else None


@exercise("04.1", answers=("one_round", "unrun_calls"))
def stop_after_one_round(check: Checker, one_round: Any, unrun_calls: Any) -> None:
    check.instance(one_round, LoopResult, "one_round", hint="store what `await ask_calculator(...)` returns")
    check.equal(
        _question(one_round),
        PARALLEL_QUESTION,
        "the question in one_round.trace",
        hint="ask the parallel question of section 10, word for word",
    )
    check.equal(
        len(one_round.trace.of_kind("llm-request")),
        1,
        "the number of llm-request events (requests to the model)",
        hint="max_rounds is how many requests the loop may send to the model: pass max_rounds=1",
    )
    check.equal(
        one_round.stopped_early,
        True,
        "one_round.stopped_early",
        hint="the model's only reply asked for tools, so the loop had to stop without an answer",
    )
    sent = [e.payload["params"]["name"] for e in one_round.trace if e.payload.get("method") == "tools/call"]
    check.equal(
        sent,
        [],
        "the tools/call requests on the wire",
        hint="with no round left to show the model any result, the loop does not run the calls (section 10)",
    )
    check.equal(
        unrun_calls,
        ["calculator_add", "calculator_multiply"],
        "unrun_calls",
        hint="the last llm-response event's payload has choices[0].message.tool_calls; take each call's function.name",
    )
    print(f"The model asked for {', '.join(unrun_calls)}; the loop ran none of them.")


@exercise("04.2", answers=("remainder_result", "anonymous_result"))
def a_tool_the_model_can_use(check: Checker, remainder_result: Any, anonymous_result: Any) -> None:
    for name, value in (("remainder_result", remainder_result), ("anonymous_result", anonymous_result)):
        check.instance(value, LoopResult, name, hint="store what `await ask(...)` returns")
    tools = listed_tools(remainder_result)
    check.equal(
        [tool.get("name") for tool in tools],
        ["remainder"],
        "the tools listed in remainder_result.trace (tools/list)",
        hint="ask through a connection to build_remainder_server(), a server with the one tool `remainder`",
    )
    check.true(
        bool(tools[0].get("description")),
        "the description of `remainder`",
        expected="a description (FastMCP takes it from the docstring)",
        found=tools[0].get("description"),
        hint="give the function a docstring that says what it computes",
    )
    check.equal(
        _question(remainder_result),
        REMAINDER_QUESTION,
        "the question in remainder_result.trace",
        hint=f"ask {REMAINDER_QUESTION!r}, word for word",
    )
    calls = tools_calls(remainder_result)
    check.equal(
        [(request["params"]["name"], request["params"].get("arguments")) for request, _ in calls],
        [("remainder", {"dividend": 17, "divisor": 5})],
        "the tools/call requests in remainder_result.trace",
        hint="name the parameters dividend and divisor, and ask 'What is 17 mod 5?'",
    )
    response = calls[0][1] or {}
    check.equal(
        (response.get("result") or {}).get("structuredContent"),
        {"result": 2},
        "the structuredContent of the server's tools/call result",
        hint="17 mod 5 is 2: return dividend % divisor",
    )
    check.true(
        re.search(r"\b2\b", remainder_result.answer) is not None,
        "remainder_result.answer",
        expected="an answer that gives the result 2",
        found=remainder_result.answer,
        hint="the model repeats what the tool returned",
    )
    check.equal(
        [(tool.get("name"), tool.get("description")) for tool in listed_tools(anonymous_result)],
        [("f", None)],
        "the tools listed in anonymous_result.trace: (name, description)",
        hint="build_anonymous_server() has one tool, `f(x: float, y: float)`, without a docstring",
    )
    check.equal(
        _question(anonymous_result),
        REMAINDER_QUESTION,
        "the question in anonymous_result.trace",
        hint=f"ask the same question, {REMAINDER_QUESTION!r}",
    )
    check.equal(
        [request["params"]["name"] for request, _ in tools_calls(anonymous_result)],
        [],
        "the tools/call requests in anonymous_result.trace",
        hint="with no meaningful name, parameters or description, the model should find no tool to use",
    )
    print(f"remainder: {remainder_result.answer}\nf: {anonymous_result.answer}")


@exercise("04.3", answers=("by_pair", "llm_received", "server_received", "never_pairs"))
def who_talks_to_whom(check: Checker, by_pair: Any, llm_received: Any, server_received: Any, never_pairs: Any) -> None:
    check.instance(by_pair, Mapping, "by_pair", hint="a collections.Counter of (event.sender, event.receiver)")
    check.equal(
        dict(by_pair),
        CHAIN_PAIRS,
        "by_pair, the events of chain.trace per (sender, receiver)",
        hint="count one tuple (event.sender, event.receiver) per event of chain.trace",
    )
    check.equal(llm_received, 3, "llm_received", hint="the LLM receives one chat.completions request per round")
    check.equal(
        server_received,
        3,
        "server_received",
        hint="the server receives the JSON-RPC requests: one tools/list and one tools/call per step",
    )
    check.instance(never_pairs, COLLECTIONS, "never_pairs", hint="a set of (sender, receiver) tuples")
    check.equal(
        set(never_pairs),
        NEVER_PAIRS,
        "never_pairs, the (sender, receiver) pairs without any event",
        hint="take the 12 ordered pairs of two different actors and keep those that are not in by_pair",
    )
    print("Every event has the client at one end.")


@exercise("04.4", answers=("call_actors", "rpc_actors", "rpc_id_of"))
def follow_the_ids(check: Checker, call_actors: Any, rpc_actors: Any, rpc_id_of: Any) -> None:
    check.instance(call_actors, COLLECTIONS, "call_actors", hint="a set of actor names")
    check.instance(rpc_actors, COLLECTIONS, "rpc_actors", hint="a set of actor names")
    check.equal(
        set(call_actors),
        {"client", "llm"},
        "call_actors, who sends or receives call_1_1",
        hint="take sender and receiver of every event whose json.dumps(event.payload) contains 'call_1_1'",
    )
    check.equal(
        set(rpc_actors),
        {"client", "server"},
        "rpc_actors, who sends or receives JSON-RPC id 4",
        hint="only events of kind 'jsonrpc' carry JSON-RPC ids (a chat completion's `id` is something else)",
    )
    check.equal(
        rpc_id_of,
        {"call_1_0": 3, "call_1_1": 4},
        "rpc_id_of",
        hint="keys: the `id` of each tool_call in the model's reply; values: the `id` of its tools/call request",
    )
    print(f"tool_call id -> JSON-RPC id: {rpc_id_of}")
