"""Lesson 04's exercise checks (mcp_teach.exercises.l04) on answers computed for real: the loop, the offline model."""

from __future__ import annotations

import json
from collections import Counter
from itertools import permutations
from typing import Any

import pytest
from fastmcp import FastMCP

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.exercises import ExerciseFailed, ExerciseNotAttempted, check
from mcp_teach.exercises.catalogue import GRADING_VARIABLE, expectations
from mcp_teach.llm.loop import LoopResult, ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.llm.trace import ACTORS
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

OFFLINE = Settings()
EXERCISES = ("04.1", "04.2", "04.3", "04.4")


def build_remainder_server() -> FastMCP:
    server = FastMCP("remainder-tools", version="1.0.0")

    @server.tool
    def remainder(dividend: float, divisor: float) -> float:
        """The remainder of dividend divided by divisor (dividend mod divisor)."""
        return dividend % divisor

    return server


def build_anonymous_server() -> FastMCP:
    server = FastMCP("anonymous-tools", version="1.0.0")

    @server.tool
    def f(x: float, y: float) -> float:
        return x % y

    return server


async def _ask(question: str, server: FastMCP | None = None, max_rounds: int = 5) -> LoopResult:
    llm = openai_client(OFFLINE)
    async with teaching_client(CaptureTransport(server or build_calculator_server())) as client:
        return await ask(question, client, llm, model=model_name(OFFLINE), max_rounds=max_rounds)


@pytest.fixture(scope="module")
def asked(run) -> dict[str, LoopResult]:
    """The loops the lesson and its solutions run."""
    return {
        "one_round": run(_ask, "What is 1 + 2 and what is 3 * 4?", None, 1),
        "chain": run(_ask, "multiply 3 by 4, then subtract 5"),
        "parallel": run(_ask, "What is 1 + 2 and what is 3 * 4?"),
        "remainder": run(_ask, "What is 17 mod 5?", build_remainder_server()),
        "anonymous": run(_ask, "What is 17 mod 5?", build_anonymous_server()),
        "other_question": run(_ask, "What is 1 + 2?"),
    }


def solutions(asked: dict[str, LoopResult]) -> dict[str, dict[str, Any]]:
    """Each exercise's answers, computed as the lesson's solution cells compute them."""
    one_round = asked["one_round"]
    last_reply = one_round.trace.of_kind("llm-response")[-1].payload["choices"][0]["message"]
    chain, parallel = asked["chain"], asked["parallel"]
    by_pair = Counter((event.sender, event.receiver) for event in chain.trace)
    tool_calls = parallel.trace.of_kind("llm-response")[0].payload["choices"][0]["message"]["tool_calls"]
    requests = [e.payload for e in parallel.trace if e.kind == "jsonrpc" and e.payload.get("method") == "tools/call"]
    return {
        "04.1": {
            "one_round": one_round,
            "unrun_calls": [call["function"]["name"] for call in last_reply["tool_calls"]],
        },
        "04.2": {"remainder_result": asked["remainder"], "anonymous_result": asked["anonymous"]},
        "04.3": {
            "by_pair": by_pair,
            "llm_received": sum(n for (_, receiver), n in by_pair.items() if receiver == "llm"),
            "server_received": sum(n for (_, receiver), n in by_pair.items() if receiver == "server"),
            "never_pairs": {pair for pair in permutations(ACTORS, 2) if pair not in by_pair},
        },
        "04.4": {
            "call_actors": {
                actor for e in parallel.trace if "call_1_1" in json.dumps(e.payload) for actor in (e.sender, e.receiver)
            },
            "rpc_actors": {
                actor
                for e in parallel.trace
                if e.kind == "jsonrpc" and e.payload.get("id") == 4
                for actor in (e.sender, e.receiver)
            },
            "rpc_id_of": {
                call["id"]: request["id"]
                for call in tool_calls
                for request in requests
                if request["params"]["name"] == call["function"]["name"]
                and request["params"]["arguments"] == json.loads(call["function"]["arguments"])
            },
        },
    }


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_the_solution_passes(asked, capsys, exercise_id: str) -> None:
    answers = solutions(asked)[exercise_id]
    assert set(answers) == set(expectations(exercise_id).answers)
    check(exercise_id, answers)
    out = capsys.readouterr().out
    assert out.endswith(f"✔ Exercise {exercise_id} passed\n")


def test_the_checks_say_what_they_found(asked, capsys) -> None:
    for exercise_id, answers in solutions(asked).items():
        check(exercise_id, answers)
    out = capsys.readouterr().out
    assert "The model asked for calculator_add, calculator_multiply; the loop ran none of them." in out
    assert "remainder: 17 mod 5 = 2.\nf: None of my tools can do remainders" in out
    assert "tool_call id -> JSON-RPC id: {'call_1_0': 3, 'call_1_1': 4}" in out


def _wrong(asked: dict[str, LoopResult]) -> list[tuple[str, dict[str, Any], str]]:
    """(exercise, one answer replaced by a wrong one, what the message must name)."""
    right = solutions(asked)
    by_pair = Counter(right["04.3"]["by_pair"])
    by_pair["client", "server"] += 1
    return [
        ("04.1", {"one_round": asked["other_question"]}, "the question in one_round.trace"),
        ("04.1", {"one_round": asked["parallel"]}, "the number of llm-request events"),
        ("04.1", {"one_round": "not a result"}, "one_round: expected a LoopResult"),
        ("04.1", {"unrun_calls": ["calculator_add"]}, "unrun_calls"),
        ("04.2", {"remainder_result": asked["anonymous"]}, "the tools listed in remainder_result.trace"),
        ("04.2", {"anonymous_result": asked["remainder"]}, "the tools listed in anonymous_result.trace"),
        ("04.3", {"by_pair": by_pair}, "by_pair, the events of chain.trace"),
        ("04.3", {"llm_received": 4}, "llm_received"),
        ("04.3", {"server_received": 2}, "server_received"),
        ("04.3", {"never_pairs": set()}, "never_pairs"),
        ("04.3", {"never_pairs": None}, "never_pairs: expected a set or frozenset or list or tuple"),
        ("04.4", {"call_actors": {"client", "llm", "server"}}, "call_actors"),
        ("04.4", {"rpc_actors": {"client", "llm"}}, "rpc_actors"),
        ("04.4", {"rpc_id_of": {"call_1_0": 4, "call_1_1": 3}}, "rpc_id_of"),
    ]


def test_a_wrong_answer_fails_with_expected_found_and_hint(asked) -> None:
    right = solutions(asked)
    for exercise_id, wrong, what in _wrong(asked):
        with pytest.raises(ExerciseFailed) as failed:
            check(exercise_id, {**right[exercise_id], **wrong})
        message = str(failed.value)
        assert message.startswith(f"Exercise {exercise_id} — {what}"), message
        assert "expected" in message and "found" in message and "Hint:" in message, message


def test_a_remainder_tool_that_computes_something_else_fails(run, asked) -> None:
    server = FastMCP("remainder-tools", version="1.0.0")

    @server.tool
    def remainder(dividend: float, divisor: float) -> float:
        """The remainder of dividend divided by divisor (dividend mod divisor)."""
        return dividend // divisor

    wrong = run(_ask, "What is 17 mod 5?", server)
    with pytest.raises(ExerciseFailed, match=r"structuredContent .* expected \{'result': 2\}, found \{'result': 3"):
        check("04.2", {"remainder_result": wrong, "anonymous_result": asked["anonymous"]})


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_missing_answers_are_not_attempted(asked, capsys, monkeypatch, exercise_id: str) -> None:
    monkeypatch.delenv(GRADING_VARIABLE, raising=False)
    answers = dict(solutions(asked)[exercise_id])
    first = next(iter(answers))
    del answers[first]
    check(exercise_id, answers)
    out = capsys.readouterr().out
    assert f"Exercise {exercise_id} — not attempted yet" in out and f"`{first}`" in out
    assert "passed" not in out
    monkeypatch.setenv(GRADING_VARIABLE, "autograde")
    with pytest.raises(ExerciseNotAttempted, match=f"defines `{first}`"):
        check(exercise_id, answers)
