"""Lesson 04's exercise checks (mcp_teach.exercises.l04) on answers run for real: the loop, the offline model."""

from __future__ import annotations

import asyncio
import itertools
import operator
from collections.abc import Callable
from typing import Any

import pytest
from exercise_support import build_anonymous_server, build_remainder_server, failed_with
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
        "04.2": {
            "remainder_result": asked["remainder"],
            "anonymous_result": asked["anonymous"],
            "build_remainder_server": build_remainder_server,
            "build_anonymous_server": build_anonymous_server,
        },
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
    assert "prompt tokens per round [349, 410, 471]: budgets 349 and 759 stop after 1 and 2 requests" in out


#: (exercise, one answer replaced by one of another kind, what the message must name).
OF_ANOTHER_KIND = [
    ("04.1", {"gated_call": "not a function"}, "gated_call"),
    ("04.1", {"gated": "not a result"}, "gated: expected a LoopResult"),
    ("04.3", {"budget_loop": None}, "budget_loop"),
    ("04.3", {"budget_loop": len}, "budget_loop: expected an async function"),
]


def test_an_answer_of_another_kind_fails_with_expected_found_and_hint(asked) -> None:
    right = solutions(asked)
    for exercise_id, wrong, what in OF_ANOTHER_KIND:
        with pytest.raises(ExerciseFailed) as failed:
            check(exercise_id, {**right[exercise_id], **wrong})
        message = str(failed.value)
        assert message.startswith(f"Exercise {exercise_id} — {what}"), message
        assert "expected" in message and "found" in message and "Hint:" in message, message


#: A line of each solution that no feedback may show.
ANSWER_LINES = {
    "04.1": "if call.name not in ALLOWED",
    "04.2": "dividend % divisor",
    "04.3": "spent >= token_budget",
}


def failed_without_the_answer(exercise_id: str, namespace: dict[str, Any], *fragments: str) -> str:
    """The feedback of a wrong answer: expected, found, hint and ``fragments``; no traceback, not the answer."""
    message = failed_with(exercise_id, namespace, *fragments)
    assert "Traceback" not in message and ANSWER_LINES[exercise_id] not in message, message
    return message


async def refuse_after_running(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    outcome = await call_tool(mcp, call)
    return (f"Error: {call.name} is not allowed.", True) if call.name not in ALLOWED else outcome


async def refuse_as_a_success(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    if call.name not in ALLOWED:
        return f"Error: the user does not allow the tool {call.name}.", False
    return await call_tool(mcp, call)


async def raise_for_a_refused_tool(mcp: Client, call: ToolCall) -> tuple[str, bool]:
    if call.name not in ALLOWED:
        raise PermissionError(f"{call.name} is not allowed")
    return await call_tool(mcp, call)


def without_trace(result: LoopResult) -> LoopResult:
    """What ``tool_loop`` returns for the same run: ``ask`` alone fills in the trace."""
    return LoopResult(result.answer, result.messages, result.rounds, result.stopped_early)


@pytest.mark.wrong_answer("04.1")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (lambda asked: {"gated_call": gate_without_async}, ("gated_call: expected an async function",)),
        (
            lambda asked: {"gated_call": run_everything},
            ("the tools/call requests gated_call sent for calculator_multiply", "a refused call never reaches"),
        ),
        (
            lambda asked: {"gated_call": refuse_after_running},
            ("the tools/call requests gated_call sent for calculator_multiply", "decide before anything is sent"),
        ),
        (lambda asked: {"gated_call": refuse_everything}, ("gated_call(client, calculator_add with a=1, b=2)",)),
        (
            lambda asked: {"gated_call": refuse_quietly},
            ("gated_call(client, calculator_multiply)", "found ('no', True)", "(text for the model, failed)"),
        ),
        (
            lambda asked: {"gated_call": refuse_as_a_success},
            (
                "gated_call(client, calculator_multiply)",
                "the user does not allow the tool calculator_multiply.', False",
            ),
        ),
        (
            lambda asked: {"gated_call": raise_for_a_refused_tool},
            ("it raised PermissionError: calculator_multiply is not allowed in raise_for_a_refused_tool, line",),
        ),
        (lambda asked: {"gated": asked["other_question"]}, ("the question in gated.trace", "word for word")),
        (lambda asked: {"gated": asked["ungated"]}, ("the tools/call requests in gated.trace", "execute=gated_call")),
        (
            lambda asked: {"gated": without_trace(asked["gated"])},
            ("the question in gated.trace", "found None", "only ask fills in the trace"),
        ),
    ],
    ids=[
        "plain-def",
        "runs-every-call",
        "refuses-after-running",
        "refuses-every-call",
        "refusal-without-the-tool-name",
        "refusal-marked-as-a-success",
        "raises-for-a-refused-tool",
        "another-question",
        "loop-without-the-gate",
        "tool_loop-instead-of-ask",
    ],
)
def test_a_wrong_gate_fails_04_1(asked, wrong: Callable[..., dict[str, Any]], fragments: tuple[str, ...]) -> None:
    failed_without_the_answer("04.1", {**solutions(asked)["04.1"], **wrong(asked)}, *fragments)


def tool_server(tool: Callable[..., float], name: str = "remainder") -> Callable[[], FastMCP]:
    """A builder of a server whose one tool is ``tool``, called ``name``: a student's build_..._server."""

    def build() -> FastMCP:
        server = FastMCP("student-tools", version="1.0.0")
        server.tool(tool, name=name)
        return server

    return build


def remainder_swapped(dividend: float, divisor: float) -> float:
    """The remainder of dividend divided by divisor (dividend mod divisor)."""
    return divisor % dividend


def remainder_typed_in(dividend: float, divisor: float) -> float:
    """The remainder of dividend divided by divisor (dividend mod divisor)."""
    return 2


def remainder_floor_division(dividend: float, divisor: float) -> float:
    """The remainder of dividend divided by divisor (dividend mod divisor)."""
    return dividend // divisor


def remainder_undocumented(dividend: float, divisor: float) -> float:
    return dividend % divisor


def f_with_named_parameters(dividend: float, divisor: float) -> float:
    return dividend % divisor


def f_documented(x: float, y: float) -> float:
    """The remainder of x divided by y."""
    return x % y


def f_swapped(x: float, y: float) -> float:
    return y % x


@pytest.mark.wrong_answer("04.2")
@pytest.mark.parametrize(
    ("remainder", "anonymous", "fragments"),
    [
        (
            remainder_swapped,
            None,
            (
                "the structuredContent of the server's tools/call result",
                "found {'result': 5.0}",
                "which argument divides which",
            ),
        ),
        (
            remainder_typed_in,
            None,
            ("remainder(dividend, divisor) for (7, 3) and (3, 7)", "found [2.0, 2.0]", "a number typed in"),
        ),
        (
            remainder_floor_division,
            None,
            ("the structuredContent of the server's tools/call result", "expected {'result': 2}, found {'result': 3"),
        ),
        (remainder_undocumented, None, ("the description of `remainder`", "docstring")),
        (
            None,
            f_with_named_parameters,
            ("the tools listed in anonymous_result.trace", "['dividend', 'divisor']", "parameter names"),
        ),
        (None, f_documented, ("the tools listed in anonymous_result.trace", "without a docstring")),
        (None, f_swapped, ("f(x, y) for (7, 3) and (3, 7)", "found [3.0, 1.0]", "the arguments are swapped")),
    ],
    ids=[
        "remainder-arguments-swapped",
        "remainder-typed-in",
        "remainder-floor-division",
        "remainder-without-docstring",
        "f-with-meaningful-parameter-names",
        "f-with-a-docstring",
        "f-arguments-swapped",
    ],
)
def test_a_wrong_server_fails_04_2(run, asked, remainder: Any, anonymous: Any, fragments: tuple[str, ...]) -> None:
    answers = dict(solutions(asked)["04.2"])
    for name, tool in (("remainder", remainder), ("anonymous", anonymous)):
        if tool is not None:
            build = tool_server(tool, "remainder" if name == "remainder" else "f")
            answers |= {f"build_{name}_server": build, f"{name}_result": run(_ask, "What is 17 mod 5?", build())}
    failed_without_the_answer("04.2", answers, *fragments)


@pytest.mark.wrong_answer("04.2")
def test_the_two_results_swapped_fail_04_2(asked) -> None:
    swapped = {"remainder_result": asked["anonymous"], "anonymous_result": asked["remainder"]}
    failed_without_the_answer("04.2", {**solutions(asked)["04.2"], **swapped}, "the tools listed in remainder_result")


def budget_loop_that(
    *,
    counts: str = "prompt_tokens",
    reached: Callable[[int, int], bool] = operator.ge,
    adds_up: bool = True,
    flags: bool = True,
    raises: bool = False,
) -> Callable[..., Any]:
    """budget_loop with one mistake: the usage it counts, how it compares with the budget, the last response's
    count alone instead of the sum, stopped_early left False, or an exception where it should stop."""

    async def budget_loop(question: str, mcp: Client, llm: Any, *, model: str, token_budget: int) -> LoopResult:
        api = ChatCompletions()
        tools = api.tools(await mcp.list_tools())
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        spent = 0
        for rounds in itertools.count(1):
            response = await api.send(llm, api.request(model, system_text(mcp), messages, tools))
            spent = (spent if adds_up else 0) + response["usage"][counts]
            messages.append(api.reply(response))
            calls = api.tool_calls(response)
            if not calls:
                return LoopResult(api.text(response), messages, rounds, stopped_early=False)
            if reached(spent, token_budget):
                if raises:
                    raise RuntimeError(f"the token budget is used up: {spent} tokens")
                return LoopResult("Stopped.", messages, rounds, stopped_early=flags)
            messages += api.results(calls, [await call_tool(mcp, call) for call in calls])
        raise AssertionError("unreachable")

    return budget_loop


def plain_budget_loop(question: str, mcp: Client, llm: Any, *, model: str, token_budget: int) -> LoopResult:
    return asyncio.run(budget_loop(question, mcp, llm, model=model, token_budget=token_budget))


@pytest.mark.wrong_answer("04.3")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (
            budget_loop_that(reached=operator.gt),
            ("the requests budget_loop with token_budget=349 sent to the model", "a sum equal to the budget"),
        ),
        (
            budget_loop_that(counts="total_tokens"),
            (
                "the requests budget_loop with token_budget=380 sent to the model",
                "first reply's total_tokens",
                "counts the prompt tokens",
            ),
        ),
        (
            budget_loop_that(adds_up=False),
            ("the requests budget_loop with token_budget=759 sent to the model", "add up"),
        ),
        (budget_loop_that(flags=False), ("stopped_early of budget_loop with token_budget=349",)),
        (
            budget_loop_that(raises=True),
            ("it raised RuntimeError: the token budget is used up: 349 tokens in budget_loop, line",),
        ),
        (no_budget, ("the requests budget_loop with token_budget=349 sent to the model",)),
        (late_budget, ("the tools/call requests budget_loop with token_budget=349 sent", "are not run")),
        (plain_budget_loop, ("budget_loop: expected an async function",)),
    ],
    ids=[
        "stops-only-above-the-budget",
        "counts-total-tokens",
        "counts-the-last-response-alone",
        "stopped_early-left-false",
        "raises-at-the-budget",
        "no-budget",
        "runs-the-calls-that-used-it-up",
        "plain-def",
    ],
)
def test_a_wrong_budget_loop_fails_04_3(wrong: Callable[..., Any], fragments: tuple[str, ...]) -> None:
    failed_without_the_answer("04.3", {"budget_loop": wrong}, *fragments)


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
