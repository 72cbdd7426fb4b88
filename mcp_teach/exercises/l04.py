"""The exercises of lesson 04 (the LLM tool loop); its check cells, ``check("04.k")``, call these.

Every check runs the student's code for real (a calculator in memory, the offline teaching model: no ``.env``, as
in CI; a real LLM may decide differently) and reads what reached the server and the model.

- 04.1: ``gated_call``, an ``execute`` step that refuses tools outside an allowlist, and ``gated``, a loop run
  through it;
- 04.2: ``remainder_result`` and ``anonymous_result``, the same question to a server whose tool says what it does
  and to one whose tool does not, and the two ``build_..._server`` functions, whose tools the check calls itself;
- 04.3: ``budget_loop``, a loop that stops when the prompt tokens sent reach a budget (budgets tried exactly at a
  sum of prompt tokens, and at a first reply's total tokens, where counting the wrong usage shows).
"""

from __future__ import annotations

import re
from typing import Any

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import said, say
from mcp_teach.llm.loop import LoopResult, ToolCall, ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

REMAINDER_QUESTION = "What is 17 mod 5?"
CHAIN_QUESTION = "multiply 3 by 4, then subtract 5"
#: The allowlist of 04.1, as the lesson's cell sets it.
ALLOWED = {"calculator_add", "calculator_subtract"}
#: Arguments whose order matters, and their remainders: a remainder typed in, or of swapped arguments, shows.
REMAINDERS = {(7, 3): 1, (3, 7): 3}


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


def _question_hint(result: LoopResult, hint: str) -> str:
    """``hint``, unless the trace is empty: then where a trace comes from."""
    return hint if result.trace.events else "store what ask(...) returns: only ask fills in the trace"


async def _remainders(build: Any, tool: str, parameters: tuple[str, str]) -> list[Any]:
    """What ``tool`` of a fresh ``build()`` server returns for the arguments of REMAINDERS."""
    async with teaching_client(build()) as client:
        return [(await client.call_tool(tool, dict(zip(parameters, case, strict=True)))).data for case in REMAINDERS]


async def _gate(gated_call: Any) -> list[tuple[Any, list[str]]]:
    """What ``gated_call`` returns for an allowed and two refused calls, and the tools/call each one sent."""
    capture = CaptureTransport(build_calculator_server())
    seen = []
    async with teaching_client(capture) as client:
        for name, arguments in (("calculator_add", '{"a": 1, "b": 2}'), ("calculator_multiply", '{"a": 3, "b": 4}'),
                                ("calculator_divide", '{"a": 1, "b": 1}')):  # fmt: skip
            before = len(capture.capture.requests("tools/call"))
            outcome = await gated_call(client, ToolCall("call_1_0", name, arguments))
            sent = [r.message["params"]["name"] for r in capture.capture.requests("tools/call")[before:]]
            seen.append((outcome, sent))
    return seen


@exercise("04.1", answers=("gated_call", "gated"))
def a_gate_before_every_call(check: Checker, gated_call: Any, gated: Any) -> None:
    check.async_function(
        gated_call,
        "gated_call",
        expected="an async function (mcp, call)",
        hint="async def gated_call(mcp: Client, call: ToolCall) -> tuple[str, bool]: ...",
    )
    (allowed, allowed_sent), *refused = run_sync(_gate(gated_call))
    check.equal(allowed, ("3.0", False), "gated_call(client, calculator_add with a=1, b=2)",
                hint="an allowed call is run as it is: return what call_tool returns for it")  # fmt: skip
    check.equal(allowed_sent, ["calculator_add"], "the tools/call requests an allowed call sent",
                hint="an allowed call goes to the server")  # fmt: skip
    for (outcome, sent), name in zip(refused, ("calculator_multiply", "calculator_divide"), strict=True):
        check.equal(sent, [], f"the tools/call requests gated_call sent for {name}",
                    hint="decide before anything is sent: a refused call never reaches the server")  # fmt: skip
        ok = isinstance(outcome, tuple) and len(outcome) == 2 and isinstance(outcome[0], str)
        check.true(ok and outcome[0].startswith("Error") and name in outcome[0] and outcome[1] is True,
                   f"gated_call(client, {name})", expected=f"(a text starting with 'Error' that names {name}, True)",
                   found=outcome, hint="the shape of call_tool's answer: (text for the model, failed)")  # fmt: skip
    check.instance(gated, LoopResult, "gated", hint="store what `await ask(..., execute=gated_call)` returns")
    check.equal(_question(gated), said(CHAIN_QUESTION), "the question in gated.trace",
                hint=_question_hint(gated, f"ask {said(CHAIN_QUESTION)!r}, word for word"))  # fmt: skip
    sent = [request["params"]["name"] for request, _ in tools_calls(gated)]
    check.true(not set(sent) - ALLOWED, "the tools/call requests in gated.trace", expected=f"only {sorted(ALLOWED)}",
               found=sent, hint="pass execute=gated_call to ask")  # fmt: skip
    told = [m["content"] for m in gated.messages if m.get("role") == "tool"]
    check.true(any(text.startswith("Error") for text in told), "the tool messages the model got",
               expected="a refusal (text starting with 'Error')", found=told,
               hint="the model first asks for calculator_multiply, which is not allowed")  # fmt: skip
    say(f"tools/call sent: {', '.join(sent) or 'none'}; the model was told: {told[0]}")


@exercise("04.2", answers=("remainder_result", "anonymous_result", "build_remainder_server", "build_anonymous_server"))
def a_tool_the_model_can_use(check: Checker, remainder_result: Any, anonymous_result: Any,
                             build_remainder_server: Any, build_anonymous_server: Any) -> None:  # fmt: skip
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
        said(REMAINDER_QUESTION),
        "the question in remainder_result.trace",
        hint=_question_hint(remainder_result, f"ask {said(REMAINDER_QUESTION)!r}, word for word"),
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
        hint="the remainder is what is left of the dividend once the divisor is taken out as often as it goes: mind "
        "which argument divides which",
    )
    check.true(
        re.search(r"\b2\b", remainder_result.answer) is not None,
        "remainder_result.answer",
        expected="an answer that gives the result 2",
        found=remainder_result.answer,
        hint="the model repeats what the tool returned",
    )
    check.equal(
        [(tool.get("name"), tool.get("description"), [*tool.get("inputSchema", {}).get("properties", {})])
         for tool in listed_tools(anonymous_result)],
        [("f", None, ["x", "y"])],
        "the tools listed in anonymous_result.trace: (name, description, parameter names)",
        hint="build_anonymous_server() has one tool, `f(x: float, y: float)`, without a docstring: parameter names "
        "like dividend would tell the model what it computes",
    )  # fmt: skip
    check.equal(
        _question(anonymous_result),
        said(REMAINDER_QUESTION),
        "the question in anonymous_result.trace",
        hint=_question_hint(anonymous_result, f"ask the same question, {said(REMAINDER_QUESTION)!r}"),
    )
    check.equal(
        [request["params"]["name"] for request, _ in tools_calls(anonymous_result)],
        [],
        "the tools/call requests in anonymous_result.trace",
        hint="with no meaningful name, parameters or description, the model should find no tool to use",
    )
    for build, tool, parameters in ((build_remainder_server, "remainder", ("dividend", "divisor")),
                                    (build_anonymous_server, "f", ("x", "y"))):  # fmt: skip
        found, expected = run_sync(_remainders(build, tool, parameters)), [*REMAINDERS.values()]
        check.equal(found, expected, f"{tool}({', '.join(parameters)}) for {' and '.join(map(str, REMAINDERS))}",
                    hint="the arguments are swapped: the first is divided by the second" if found == expected[::-1]
                    else "compute it from both arguments: a number typed in is right for 17 mod 5 alone")  # fmt: skip
    say(f"remainder: {remainder_result.answer}\nf: {anonymous_result.answer}")


async def _budget_run(budget_loop: Any, budget: int) -> tuple[Any, int, list[str]]:
    """The result of ``budget_loop`` with ``budget``, the requests that reached the model and the tools/call sent."""
    exchanges: list[Any] = []
    llm = openai_client(Settings(), on_exchange=exchanges.append)
    capture = CaptureTransport(build_calculator_server())
    async with teaching_client(capture) as client:
        result = await budget_loop(CHAIN_QUESTION, client, llm, model=model_name(Settings()), token_budget=budget)
    sent = [r.message["params"]["name"] for r in capture.capture.requests("tools/call")]
    return result, len(exchanges), sent


async def _usages() -> list[dict[str, int]]:
    """The usage of each response of the full chain (three rounds)."""
    async with teaching_client(build_calculator_server()) as client:
        full = await ask(CHAIN_QUESTION, client, openai_client(Settings()), model=model_name(Settings()))
    return [event.payload["usage"] for event in full.trace.of_kind("llm-response")]


@exercise("04.3", answers=("budget_loop",))
def a_token_budget(check: Checker, budget_loop: Any) -> None:
    check.async_function(
        budget_loop,
        "budget_loop",
        expected="an async function",
        hint="async def budget_loop(question, mcp, llm, *, model, token_budget) -> LoopResult: ...",
    )
    usages = run_sync(_usages())  # e.g. prompt_tokens 349, 410, 471; total_tokens 380, 441, 481
    tokens = [usage["prompt_tokens"] for usage in usages]
    spent = [sum(tokens[: n + 1]) for n in range(len(tokens))]
    sums = "add each response's usage.prompt_tokens; stop once the sum reaches the budget"
    at = "the prompt tokens sent so far add up to exactly this budget: a sum equal to the budget has reached it"
    total = "this budget equals the first reply's total_tokens; the budget counts the prompt tokens sent alone"
    # (budget, requests it allows, hint if more were sent, hint if fewer): the sums of prompt tokens tried exactly
    for budget, requests, more, fewer in ((spent[0], 1, at, sums), (usages[0]["total_tokens"], 2, sums, total),
                                          (spent[1], 2, at, sums), (spent[-1] * 10, 3, sums, sums)):  # fmt: skip
        result, asked, sent = run_sync(_budget_run(budget_loop, budget))
        what = f"budget_loop with token_budget={budget}"
        check.instance(result, LoopResult, f"what {what} returns", hint="return LoopResult(answer, messages, ...)")
        check.equal(asked, requests, f"the requests {what} sent to the model",
                    hint=more if asked > requests else fewer)  # fmt: skip
        check.equal(sent, ["calculator_multiply", "calculator_subtract"][: requests - 1],
                    f"the tools/call requests {what} sent",
                    hint="the calls of the reply that used up the budget are not run")  # fmt: skip
        stopped = requests < len(tokens)
        check.equal(result.stopped_early, stopped, f"stopped_early of {what}",
                    hint="True when the budget ran out while the model still wanted tools")  # fmt: skip
    check.true(re.search(r"\b7\b", result.answer) is not None, "the answer within a large budget",
               expected="the model's answer (7)", found=result.answer, hint="a text reply ends the loop")  # fmt: skip
    say(f"prompt tokens per round {tokens}: budgets {spent[0]} and {spent[1]} stop after 1 and 2 requests")
