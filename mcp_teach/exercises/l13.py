"""Lesson 13's exercises (the capstone server): what each one expects, for ``check("13.k")``.

Four of the steps are exercises, each one step function of the capstone server (``add_content_tools(mcp)``...);
the others are worked examples, shown complete in the lesson. An exercise's check builds
the package's capstone server (:mod:`mcp_teach.servers.capstone`) with the student's function in place of that
step's own, serves it on 127.0.0.1 and runs the official conformance suite's scenarios for the step: the suite is
the judge, and a failure names each failing scenario with the suite's own messages and a hint.

- 13.1 ``add_content_tools``: audio, an embedded resource, mixed content, a tool error (2026-07-28);
- 13.2 ``add_more_input_required``: sampling, roots, three questions at once, three rounds (2026-07-28); then,
  in memory, a client that declared no capability gets -32021 rather than a question, and a round-2 retry
  without its answer is asked again (the suite's client declares every capability, so it cannot see either);
- 13.3 ``add_watched_resources``: a template, subscribe and unsubscribe (2025-11-25);
- 13.4 ``add_rich_prompts``: an embedded resource, an image, completion (2026-07-28).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types
from fastmcp import Client, FastMCP
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY

from mcp_teach.conformance import WIDTH, ConformanceError, ScenarioResult, SuiteReport, check_server_at
from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import GRADING_VARIABLE, exercise
from mcp_teach.exercises.check import Checker, ExerciseFailed, ExerciseNotAttempted, described
from mcp_teach.servers import capstone

#: The capstone's steps in the order :func:`~mcp_teach.servers.capstone.build_capstone_server` adds them.
STEPS: tuple[Callable[..., None], ...] = (
    capstone.add_simple_content,
    capstone.add_content_tools,
    capstone.add_progress,
    capstone.add_logging,
    capstone.add_sampling,
    capstone.add_elicitation,
    capstone.add_input_required,
    capstone.add_more_input_required,
    capstone.add_static_resources,
    capstone.add_watched_resources,
    capstone.add_simple_prompts,
    capstone.add_rich_prompts,
    capstone.add_tool_changes,
    capstone.add_prompt_changes,
)
#: The steps that also take the server's subscription bus.
WITH_BUS = {"add_watched_resources", "add_tool_changes", "add_prompt_changes"}

#: What to look at when a scenario fails: the fixture it calls and where the lesson shows the pattern.
HINTS = {
    "tools-call-audio": "test_audio_content returns Audio(data=WAV_TINY, format='wav'), as step 1 returns an Image",
    "tools-call-embedded-resource": "return mcp_types.EmbeddedResource(type='resource', resource=TextResource"
    "Contents(uri='test://embedded-resource', mime_type='text/plain', text=...)) with the suite's exact text",
    "tools-call-mixed-content": "return a list: the text, an Image, an EmbeddedResource (application/json), in order",
    "tools-call-error": "raise ToolError(...): a tool execution error is a result with isError: true, not a "
    "JSON-RPC error",
    "input-required-result-basic-sampling": "first call: InputRequiredResult(input_requests={'capital_question': "
    "sampling_request(SAMPLING_PROMPT)}); the retry finds a CreateMessageResult in ctx.input_responses",
    "input-required-result-basic-list-roots": "ask {'client_roots': mcp_types.ListRootsRequest()}; the retry finds "
    "a ListRootsResult",
    "input-required-result-multiple-input-requests": "one InputRequiredResult holding user_name, greeting and "
    "client_roots; answer once all three keys are in ctx.input_responses",
    "input-required-result-multi-round": "keep the round (and the name) in requestState as JSON; round 1 asks "
    "step1, round 2 asks step2, then answer; a retry without its round's answer is asked that question again",
    "resources-templates-read": "@mcp.resource('test://template/{id}/data', mime_type='application/json') "
    "returning JSON with the id",
    "resources-subscribe": "serve_subscriptions(mcp, bus) (lesson 07) serves resources/subscribe, and "
    "test://watched-resource must exist",
    "resources-unsubscribe": "serve_subscriptions(mcp, bus) serves resources/unsubscribe too",
    "prompts-get-embedded-resource": "test_prompt_with_embedded_resource(resourceUri) returns a Message holding an "
    "EmbeddedResource for that URI, then a text Message",
    "prompts-get-with-image": "test_prompt_with_image returns Message(Image(...).to_image_content()), then a text",
    "completion-complete": "@mcp.completion: a function (ref, argument, context) returning the values that start "
    "with argument.value",
}


@dataclass(frozen=True)
class Step:
    """One exercise: the step function the student writes, the scenarios that judge it, by revision, and what
    else is checked once they pass (what the suite's client cannot show)."""

    answer: str
    wanted: dict[str, tuple[str, ...]]
    hints: dict[str, str]
    also: Callable[[Checker, FastMCP], str] | None = None


def _hints(*names: str) -> dict[str, str]:
    return {name: HINTS[name] for name in names}


#: Exercise 13.2's tools: each asks the client, so each must first check the client declared what it asks for.
ASKING_TOOLS = (
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
)
MULTI_ROUND = "test_input_required_result_multi_round"
GATE_HINT = (
    "pass every request to answerable(ctx, ...) before you return it in inputRequests (it takes several at "
    "once): it raises -32021 when the client did not declare the capability (2026-07-28, basic/patterns/mrtr, "
    "Server Requirements 7)"
)


async def _never(*arguments: Any) -> Any:
    """A handler that only declares its capability: a call with ``allow_input_required`` never reaches it."""
    raise AssertionError("the check's client was asked to answer")


def _outcome(result: Any) -> str:
    """What a call came back with, in a few words."""
    if isinstance(result, MCPError):
        return f"the JSON-RPC error {result.error.code} ({result.error.message})"
    if isinstance(result, mcp_types.InputRequiredResult):
        methods = sorted({request.method for request in (result.input_requests or {}).values()})
        keys = ", ".join(result.input_requests or {})
        return f"an InputRequiredResult asking {', '.join(methods) or 'nothing'} (keys: {keys})"
    return f"a {type(result).__name__}"


def _keys(result: Any) -> list[str] | None:
    """The keys of an InputRequiredResult's questions (None for any other result)."""
    return list(result.input_requests or {}) if isinstance(result, mcp_types.InputRequiredResult) else None


async def _probe(server: FastMCP) -> dict[str, tuple[str, Any]]:
    """What a client that declared no capability gets from each asking tool (and from the multi-round tool's
    round 2), and what a round-2 retry without its answer gets; by the check's name, with what was expected."""

    async def call(client: Client, answers: Any = None, state: str | None = None, name: str = MULTI_ROUND) -> Any:
        try:
            return await client.session.call_tool(
                name, {}, input_responses=answers, request_state=state, allow_input_required=True
            )
        except MCPError as error:
            return error

    found: dict[str, tuple[str, Any]] = {}
    async with Client(server) as bare, Client(server, elicitation_handler=_never) as asking:
        for name in ASKING_TOOLS:
            found[f"{name}, called by a client that declared no capability"] = ("gate", await call(bare, name=name))
        first = await call(asking)
        if _keys(first):
            alice = mcp_types.ElicitResult(action="accept", content={"name": "Alice"})
            name_given = {_keys(first)[0]: alice}
            second = await call(asking, name_given, first.request_state)
            what = f"{MULTI_ROUND} round 2 (the name answered), retried by a client that declared no capability"
            found[what] = ("gate", await call(bare, name_given, first.request_state))
            if _keys(second):
                again = await call(asking, {}, second.request_state)
                found[f"{MULTI_ROUND} round 2 retried without its answer"] = (", ".join(_keys(second)), again)
    return found


def asks_only_what_was_declared(check: Checker, server: FastMCP) -> str:
    """13.2 beyond the suite: -32021, never a question, for a client that did not declare the capability; and a
    round-2 retry without its answer asked that question again. Returns the line to print when both hold."""
    for what, (wanted, outcome) in run_sync(_probe(server)).items():
        if wanted == "gate":
            if not (isinstance(outcome, MCPError) and outcome.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY):
                expected = "the JSON-RPC error -32021 (MissingRequiredClientCapability, 2026-07-28 basic/index)"
                check.fail(what, f"{expected}, no request", _outcome(outcome), GATE_HINT)
        elif _keys(outcome) != wanted.split(", "):
            check.fail(
                what,
                f"the round-2 question ({wanted}) again: a missing answer is asked for again (2026-07-28, "
                "basic/patterns/mrtr, Error Handling)",
                _outcome(outcome),
                "when the state says round 2 and step2 is missing, return step2's question with the same state; "
                "start at round 1 only when the state is missing or cannot be read",
            )
    return "PASS in memory: a client that declared no capability gets -32021; a missing answer is asked again"


EXERCISES = {
    "13.1": Step(
        "add_content_tools",
        {
            "2026-07-28": (
                "tools-call-audio",
                "tools-call-embedded-resource",
                "tools-call-mixed-content",
                "tools-call-error",
            )
        },
        _hints("tools-call-audio", "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-error"),
    ),
    "13.2": Step(
        "add_more_input_required",
        {
            "2026-07-28": (
                "input-required-result-basic-sampling",
                "input-required-result-basic-list-roots",
                "input-required-result-multiple-input-requests",
                "input-required-result-multi-round",
            )
        },
        _hints(
            "input-required-result-basic-sampling",
            "input-required-result-basic-list-roots",
            "input-required-result-multiple-input-requests",
            "input-required-result-multi-round",
        ),
        also=asks_only_what_was_declared,
    ),
    "13.3": Step(
        "add_watched_resources",
        {"2025-11-25": ("resources-templates-read", "resources-subscribe", "resources-unsubscribe")},
        _hints("resources-templates-read", "resources-subscribe", "resources-unsubscribe"),
    ),
    "13.4": Step(
        "add_rich_prompts",
        {"2026-07-28": ("prompts-get-embedded-resource", "prompts-get-with-image", "completion-complete")},
        _hints("prompts-get-embedded-resource", "prompts-get-with-image", "completion-complete"),
    ),
}


def server_with(name: str, function: Callable[..., None]) -> FastMCP:
    """The capstone server with ``function`` in place of its step ``name`` (every other step the package's)."""
    mcp, bus = capstone.new_server(), InMemorySubscriptionBus()
    for step in STEPS:
        add = function if step.__name__ == name else step
        add(mcp, bus) if step.__name__ in WITH_BUS else add(mcp)
    return mcp


def _problems(result: ScenarioResult) -> str:
    """What the suite said about a scenario that did not pass: each failing or warning check and its message."""
    checks = [*result.failures, *result.warnings]
    if not checks:
        return "nothing ran (skipped)"
    return "; ".join(f"{check.status.lower()} {check.id}: {check.message or '(no message)'}" for check in checks)


def _placeholder(*arguments: Any) -> None:
    """What a blank lesson's step function compiles to: a docstring and ``pass``."""


def is_placeholder(function: Any) -> bool:
    """``function`` does nothing but return None: the blank lesson's step, not yet written."""
    code = getattr(function, "__code__", None)
    return code is not None and code.co_code == _placeholder.__code__.co_code


def judge(check: Checker, step: Step, function: Any) -> tuple[list[SuiteReport], list[str]]:
    """Run the step's scenarios against the capstone with ``function``; a failed check names each scenario that
    did not pass (a warning counts: the capstone passes without one) with the suite's words and a hint. Then the
    step's own checks (``also``); the reports, and the lines those checks print when they pass.

    A blank step (still the placeholder) fails the same way in a lesson, so the student sees what the suite
    expects; while grading it is *not attempted*, as a blank exercise of any other lesson is."""
    check.function(function, step.answer, hint=f"{step.answer} is a function taking the server (def {step.answer})")
    if is_placeholder(function) and os.environ.get(GRADING_VARIABLE):
        raise ExerciseNotAttempted(
            f"Exercise {check.exercise_id} — not attempted yet: write the body of {step.answer} in the cell above, "
            "run that cell, then run this one again."
        )
    server = check.runs(
        server_with,
        step.answer,
        function,
        what=f"building the server with your {step.answer}",
        expected="it adds its fixtures without an error",
        hint="the error names the line; a name used twice (two tools called alike) is a common one",
    )
    try:
        reports = run_sync(check_server_at(server, step.wanted))
    except ConformanceError as error:
        check.fail("running the conformance suite", "it runs", described(error), "the message says what to fix")
    wanted = sum(len(names) for names in step.wanted.values())
    failing = [(report.revision, result) for report in reports for result in report.scored if result.status != "PASS"]
    if failing:
        what = f"the conformance suite's {wanted} scenario{'s' * (wanted != 1)} for {step.answer}"
        expected = f"all {wanted} pass: " + "; ".join(
            f"{rev}: {', '.join(names)}" for rev, names in step.wanted.items()
        )
        found = f"{wanted - len(failing)} of {wanted} pass"
        lines = [f"Exercise {check.exercise_id} — {what}", f"  expected: {expected}", f"  found:    {found}"]
        for revision, result in failing:
            said = f"{result.scenario} ({revision}) {result.status}: {_problems(result)}"
            lines += textwrap.wrap(
                said, WIDTH, initial_indent="    ", subsequent_indent="        ", break_on_hyphens=False
            )
            lines += textwrap.wrap(
                f"hint: {step.hints[result.scenario]}",
                WIDTH,
                initial_indent="      ",
                subsequent_indent="        ",
                break_on_hyphens=False,
            )
        hints = " / ".join(f"{result.scenario}: {step.hints[result.scenario]}" for _, result in failing)
        details = " ".join(
            f"{result.scenario} ({rev}) {result.status}: {_problems(result)}." for rev, result in failing
        )
        message = f"Exercise {check.exercise_id} — {what}: expected {expected}, found {found}. {details} Hint: {hints}"
        raise ExerciseFailed(message, tuple(lines))
    return reports, [step.also(check, server)] if step.also is not None else []


def _passed(reports: list[SuiteReport]) -> str:
    """The scenarios that passed, per revision, wrapped to fit a lesson's output."""
    text = "; ".join(f"{report.revision}: {', '.join(r.scenario for r in report.scored)}" for report in reports)
    return textwrap.fill(f"PASS {text}", WIDTH, subsequent_indent="  ", break_on_hyphens=False)


def _register(exercise_id: str) -> None:
    step = EXERCISES[exercise_id]

    @exercise(exercise_id, answers=(step.answer,))
    def step_passes(check: Checker, function: Any) -> None:
        reports, also = judge(check, step, function)
        print(_passed(reports), *also, sep="\n")


for _exercise_id in EXERCISES:
    _register(_exercise_id)
