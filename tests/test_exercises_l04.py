"""Lesson 04's exercise checks (mcp_teach.exercises.l04) on answers run for real: the loop, the offline model."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client, FastMCP

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.exercises import ExerciseFailed, ExerciseNotAttempted, check
from mcp_teach.exercises.catalogue import GRADING_VARIABLE, expectations
from mcp_teach.llm.loop import ChatCompletions, LoopResult, ToolCall, ask, call_tool, system_text, tool_loop
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

OFFLINE = Settings()
EXERCISES = ("04.1", "04.2", "04.3")
ALLOWED = {"calculator_add", "calculator_subtract"}
CHAIN = "multiply 3 by 4, then subtract 5"


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


async def _ask(question: str, server: FastMCP | None = None, execute: Any = call_tool) -> LoopResult:
    llm = openai_client(OFFLINE)
    async with teaching_client(CaptureTransport(server or build_calculator_server())) as client:
        return await ask(question, client, llm, model=model_name(OFFLINE), execute=execute)


async def gated_call(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    if call.name not in ALLOWED:
        return f"Error: the user does not allow the tool {call.name}.", True
    return await call_tool(mcp, call)


async def budget_loop(question: str, mcp: Client, llm: Any, *, model: str, token_budget: int) -> LoopResult:
    api = ChatCompletions()
    tools = api.tools(await mcp.list_tools())
    system = system_text(mcp)
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    spent, rounds = 0, 0
    while True:
        response = await api.send(llm, api.request(model, system, messages, tools))
        rounds += 1
        spent += response["usage"]["prompt_tokens"]
        messages.append(api.reply(response))
        calls = api.tool_calls(response)
        if not calls:
            return LoopResult(api.text(response), messages, rounds, stopped_early=False)
        if spent >= token_budget:
            return LoopResult(f"Stopped: {spent} prompt tokens spent.", messages, rounds, stopped_early=True)
        messages += api.results(calls, [await call_tool(mcp, call) for call in calls])


async def no_budget(question: str, mcp: Client, llm: Any, *, model: str, token_budget: int) -> LoopResult:
    return await tool_loop(question, mcp, llm, model=model)


async def late_budget(question: str, mcp: Client, llm: Any, *, model: str, token_budget: int) -> LoopResult:
    """Runs the calls of the reply that used up the budget before it stops: one tools/call too many."""
    spent = 0
    api = ChatCompletions()
    tools = api.tools(await mcp.list_tools())
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for rounds in range(1, 10):
        response = await api.send(llm, api.request(model, system_text(mcp), messages, tools))
        spent += response["usage"]["prompt_tokens"]
        messages.append(api.reply(response))
        calls = api.tool_calls(response)
        if not calls:
            return LoopResult(api.text(response), messages, rounds, stopped_early=False)
        messages += api.results(calls, [await call_tool(mcp, call) for call in calls])
        if spent >= token_budget:
            return LoopResult("stopped", messages, rounds, stopped_early=True)
    raise AssertionError("unreachable")


async def run_everything(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    return await call_tool(mcp, call)


def gate_without_async(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    return f"Error: {call.name} is not allowed.", True


async def refuse_everything(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    return f"Error: {call.name} is not allowed.", True


async def refuse_quietly(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    if call.name not in ALLOWED:
        return "no", True
    return await call_tool(mcp, call)


@pytest.fixture(scope="module")
def asked(run) -> dict[str, LoopResult]:
    """The loops the lesson's solutions run, and some wrong ones."""
    return {
        "gated": run(_ask, CHAIN, None, gated_call),
        "ungated": run(_ask, CHAIN),
        "other_question": run(_ask, "What is 1 + 2?", None, gated_call),
        "remainder": run(_ask, "What is 17 mod 5?", build_remainder_server()),
        "anonymous": run(_ask, "What is 17 mod 5?", build_anonymous_server()),
    }


def solutions(asked: dict[str, LoopResult]) -> dict[str, dict[str, Any]]:
    """Each exercise's answers, as the lesson's solution cells compute them."""
    return {
        "04.1": {"gated_call": gated_call, "gated": asked["gated"]},
        "04.2": {"remainder_result": asked["remainder"], "anonymous_result": asked["anonymous"]},
        "04.3": {"budget_loop": budget_loop},
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
    assert "tools/call sent: none; the model was told: Error: the user does not allow the tool calculator_mu" in out
    assert "remainder: 17 mod 5 = 2.\nf: None of my tools can do remainders" in out
    assert "prompt tokens per round [349, 410, 471]: budgets 348 and 758 stop after 1 and 2 requests" in out


def _wrong(asked: dict[str, LoopResult]) -> list[tuple[str, dict[str, Any], str]]:
    """(exercise, one answer replaced by a wrong one, what the message must name)."""
    return [
        ("04.1", {"gated_call": "not a function"}, "gated_call"),
        ("04.1", {"gated_call": gate_without_async}, "gated_call: expected an async function"),
        ("04.1", {"gated_call": run_everything}, "the tools/call requests gated_call sent for calculator_multiply"),
        ("04.1", {"gated_call": refuse_everything}, "gated_call(client, calculator_add with a=1, b=2)"),
        ("04.1", {"gated_call": refuse_quietly}, "gated_call(client, calculator_multiply)"),
        ("04.1", {"gated": asked["other_question"]}, "the question in gated.trace"),
        ("04.1", {"gated": asked["ungated"]}, "the tools/call requests in gated.trace"),
        ("04.1", {"gated": "not a result"}, "gated: expected a LoopResult"),
        ("04.2", {"remainder_result": asked["anonymous"]}, "the tools listed in remainder_result.trace"),
        ("04.2", {"anonymous_result": asked["remainder"]}, "the tools listed in anonymous_result.trace"),
        ("04.3", {"budget_loop": None}, "budget_loop"),
        ("04.3", {"budget_loop": len}, "budget_loop: expected an async function"),
        ("04.3", {"budget_loop": no_budget}, "the requests budget_loop with token_budget=348 sent to the model"),
        ("04.3", {"budget_loop": late_budget}, "the tools/call requests budget_loop with token_budget=348 sent"),
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
