"""Lesson 13's exercises (the capstone server): what each one expects, for ``check("13.k")``.

Four of the steps are exercises, each one step function of the capstone server (``add_content_tools(mcp)``...);
the others are worked examples, shown complete in the lesson. An exercise's check builds
the package's capstone server (:mod:`mcp_teach.servers.capstone`) with the student's function in place of that
step's own, serves it on 127.0.0.1 and runs the official conformance suite's scenarios for the step: the suite is
the judge, and a failure names each failing scenario with the suite's own messages (the first sentence of each)
and a hint. Once the scenarios pass, fastmcp's in-memory client checks what the exercise asks and those scenarios
do not look at; then that each result a client reads is the one the task gives (:func:`as_the_task_gives`: the
suite accepts any text, and answers the questions of 13.2 always alike, so a result typed in from its answers passes
it); last, that every tool and prompt has a description: the whole-server run's ``tools-list`` and ``prompts-list``
require one, and the step's own scenarios never list the tools or prompts.

- 13.1 ``add_content_tools``: audio, an embedded resource, mixed content, a tool error (2026-07-28); in memory,
  the mixed blocks in their order, and each result as the task gives it (texts, URIs, mimeTypes, the error);
- 13.2 ``add_more_input_required``: sampling, roots, three questions at once, three rounds (2026-07-28); then,
  in memory, a client that declared no capability gets -32021 rather than a question, and a round-2 retry
  without its answer is asked again (the suite's client declares every capability, so it cannot see either); and
  each tool's last result, its questions answered otherwise than the suite answers them;
- 13.3 ``add_watched_resources``: a template, subscribe and unsubscribe (2025-11-25); in memory, the template's
  JSON for another id (the id a string, as the URI gives it), the trigger tool's ``notifications/resources/updated``
  to a subscribed client, and the watched resource's text;
- 13.4 ``add_rich_prompts``: an embedded resource, an image, completion (2026-07-28); in memory, completion by
  prefix, the embedded resource naming the ``resourceUri`` it was given, as ``text/plain``, and both prompts'
  messages as the task gives them.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types
from fastmcp import Client, FastMCP
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY

from mcp_teach.course.conformance import WIDTH, ConformanceError, ScenarioResult, SuiteReport, check_server_at
from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import FEEDBACK, Checker, ExerciseFailed, described
from mcp_teach.exercises.language import said, say
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
    "tools-call-audio": "test_audio_content returns the tiny WAV as fastmcp's Audio, as step 1 returns an Image",
    "tools-call-embedded-resource": "an embedded resource is a content block that carries a resource's contents "
    "(uri, mimeType, text): the task gives the URI and the exact text the suite looks for",
    "tools-call-mixed-content": "a list of content blocks, in the order the task gives them",
    "tools-call-error": "a tool execution error is a result with isError: true, not a JSON-RPC error: fastmcp sends "
    "one for a ToolError",
    "input-required-result-basic-sampling": "the first call returns the question in an InputRequiredResult; the "
    "retry finds the client's answer in ctx.input_responses under the key you asked with",
    "input-required-result-basic-list-roots": "ask for the client's roots the same way; the retry finds a "
    "ListRootsResult",
    "input-required-result-multiple-input-requests": "one InputRequiredResult holding all three questions, with a "
    "request_state (the suite requires one here); answer once every key is in ctx.input_responses",
    "input-required-result-multi-round": "keep the round (and the name) in requestState; each round asks its own "
    "question, and a retry without its round's answer is asked that question again",
    "resources-templates-read": "a resource template: its URI has the {id} placeholder the task names, and it "
    "returns JSON with the id",
    "resources-subscribe": "lesson 07 serves resources/subscribe for a bus; the watched resource must exist",
    "resources-unsubscribe": "the same function that serves resources/subscribe serves resources/unsubscribe",
    "prompts-get-embedded-resource": "the prompt returns a Message holding an embedded resource for the URI it was "
    "given, then a text Message",
    "prompts-get-with-image": "the prompt returns a Message holding the image's content, then a text Message",
    "completion-complete": "a completion handler returns the values that start with what the client typed",
}


@dataclass(frozen=True)
class Step:
    """One exercise: the step function the student writes, the scenarios that judge it, by revision, and what
    else is checked once they pass (what the suite's client cannot show)."""

    answer: str
    wanted: dict[str, tuple[str, ...]]
    hints: dict[str, str]
    also: tuple[Callable[[Checker, FastMCP], str], ...] = ()


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
    return "a client that declared no capability gets -32021; a missing answer is asked again"


async def _calls(server: FastMCP, *steps: Callable[[Client], Any], **options: Any) -> list[Any]:
    """Each of ``steps`` awaited with one in-memory client, in turn; what each returned, or the error it raised."""
    found: list[Any] = []
    async with Client(server, **options) as client:
        for step in steps:
            try:
                found.append(await step(client))
            except Exception as error:  # the student's code failed: the feedback shows what it raised
                found.append(error)
    return found


def _failed(found: Any) -> str | None:
    """What a call that raised says, in the feedback's words (None when it returned)."""
    if isinstance(found, MCPError):
        return f"the JSON-RPC error {found.error.code} ({found.error.message})"
    return f"the call failed: {described(found)}" if isinstance(found, Exception) else None


def _named(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def every_tool_and_prompt_described(check: Checker, server: FastMCP) -> str:
    """Every tool and prompt has a description (fastmcp takes the docstring): the whole-server run's
    ``tools-list`` and ``prompts-list`` fail without one, naming it only by its number."""

    async def undescribed(client: Client) -> list[tuple[str, str]]:
        tools = [("tool", tool.name) for tool in await client.list_tools() if not tool.description]
        return tools + [("prompt", prompt.name) for prompt in await client.list_prompts() if not prompt.description]

    (missing,) = run_sync(_calls(server, undescribed))
    if isinstance(missing, Exception):
        check.fail("listing the tools and prompts", "they list", _failed(missing), "the message says what to fix")
    if missing:
        names = _named([name for _, name in missing])
        kinds = sorted({kind for kind, _ in missing})
        scenarios = " and ".join(f"{kind}s-list" for kind in kinds)
        check.fail(
            f"the description of each {' and each '.join(kinds)}",
            f"one for each: the suite's {scenarios} requires it (the whole-server run below)",
            f"none for {names}",
            f"give {names} a docstring: fastmcp sends it as the description",
        )
    return "every tool and prompt described"


#: The check's client answers each question so (not as the suite's does: a result hard-coded from the suite's
#: answers shows), declaring every capability.
MODEL_SAYS = "It is Paris, on the Seine."
ROOTS = ["file:///home/ada/notes", "file:///home/ada/code"]
FORM_ANSWERS = {"name": "Ada", "color": "teal"}
EMBED_URI = "test://any/resource-uri"
#: The parts of a result a client reads (a description or ``_meta`` may differ).
READ_PARTS = ("content", "isError", "messages", "contents")


async def _model_says(*arguments: Any) -> str:
    """The check's client's model: its answer to any question."""
    return MODEL_SAYS


async def _form(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
    """The check's client's user: fills in each field a form asks for."""
    return {field: FORM_ANSWERS.get(field, "?") for field in params.requested_schema.get("properties", {})}


async def _fetch(client: Client, what: str) -> Any:
    """What a client gets for ``what`` (``tools/call NAME``, ``resources/read URI``, ``prompts/get NAME``, with
    :data:`EMBED_URI` as its resourceUri if ``what`` names one); the client answers every question a tool asks."""
    method, name, *rest = what.split()
    if method == "resources/read":
        return await client.read_resource_mcp(name)
    if method == "prompts/get":
        return await client.get_prompt(name, {"resourceUri": EMBED_URI} if rest else None)
    return await client.call_tool_mcp(name, {})


def _read(result: Any) -> dict[str, Any]:
    """What a client reads of ``result``, as JSON."""
    dump = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {part: dump[part] for part in READ_PARTS if part in dump}


def _difference(found: Any, wanted: Any, at: str = "") -> tuple[str, Any, Any] | None:
    """The first place where the JSON ``found`` differs from ``wanted``: where, what was wanted, what was found."""
    if isinstance(wanted, list) and isinstance(found, list) and len(found) != len(wanted):
        return f"the number of {at}", len(wanted), len(found)
    if isinstance(wanted, dict | list) and type(found) is type(wanted):
        found, wanted = (dict(enumerate(value)) if isinstance(value, list) else value for value in (found, wanted))
        paths = {key: f"{at}[{key}]" if isinstance(key, int) else f"{at}.{key}".lstrip(".") for key in wanted}
        return next(filter(None, (_difference(found.get(key), wanted[key], path) for key, path in paths.items())), None)
    return None if found == wanted else (at, wanted, found)


EXACT = "as in the task, word for word: the suite accepts any text, a client reading it may not"
ANSWERED = "(the check answers every question)"
#: What a client reads that the suite does not look at, by exercise: what the check prints when it is as the lesson's
#: own step gives it; what to call, and a hint.
AS_GIVEN: dict[str, tuple[str, dict[str, str]]] = {
    "13.1": (
        "each result as the task gives it",
        {
            "tools/call test_audio_content": "the WAV_TINY bytes as Audio, format wav",
            "tools/call test_embedded_resource": f"the resource's URI, mimeType and text {EXACT}",
            "tools/call test_multiple_content_types": f"each block {EXACT}",
            "tools/call test_error_handling": f"raise ToolError with the message {EXACT}",
        },
    ),
    "13.2": (
        "each retry answers as the task says",
        {
            f"tools/call test_input_required_result_sampling {ANSWERED}": "the retry finds the CreateMessageResult in "
            "ctx.input_responses under capital_question: the task's prefix, then its content's text",
            f"tools/call test_input_required_result_list_roots {ANSWERED}": "the retry counts the roots of the "
            "ListRootsResult it was given",
            f"tools/call test_input_required_result_multiple_inputs {ANSWERED}": "with all three answers, the "
            f"text {EXACT}",
            f"tools/call {MULTI_ROUND} {ANSWERED}": "round 3 says the name requestState carried from round 1 and the "
            "colour answered in round 2, in the task's words",
        },
    ),
    "13.3": ("the watched resource as given", {f"resources/read {capstone.WATCHED_URI}": f"mimeType and text {EXACT}"}),
    "13.4": (
        "the given resourceUri embedded; the image prompt as given",
        {
            f"prompts/get test_prompt_with_embedded_resource with resourceUri {EMBED_URI!r}": "two Messages: an "
            "EmbeddedResource with uri=resourceUri (the argument the prompt got), text/plain and its text, then "
            f"the text, each {EXACT}",
            "prompts/get test_prompt_with_image": f"two Messages: the PNG as an image, then the text {EXACT}",
        },
    ),
}


def as_the_task_gives(check: Checker, server: FastMCP) -> str:
    """Each of the exercise's :data:`AS_GIVEN` calls, of the student's server and of the lesson's own step: the
    first part a client reads that differs fails, with its hint (an error result fails, as the call raised)."""
    passed, calls = AS_GIVEN[check.exercise_id]
    options = {"sampling_handler": _model_says, "elicitation_handler": _form, "roots": ROOTS}
    fetches = [lambda client, what=what: _fetch(client, what) for what in calls]
    lesson = server_with(name := EXERCISES[check.exercise_id].answer, getattr(capstone, name))
    wanted, found = (run_sync(_calls(at, *fetches, **options)) for at in (lesson, server))
    for (what, hint), right, result in zip(calls.items(), wanted, found, strict=True):
        if _failed(result) or (_read(result).get("isError") and not _read(right).get("isError")):
            error = " ".join(getattr(block, "text", block.type) for block in getattr(result, "content", []))
            check.fail(what, "a result", _failed(result) or f"an error result: {error}", f"it raised: {hint}")
        if where := _difference(_read(result), _read(right)):
            check.fail(what, f"{where[0]} {where[1]!r}", f"{where[0]} {where[2]!r}", hint)
    return passed


MIXED_BLOCKS = ["text", "image", "resource"]


def mixed_blocks_in_order(check: Checker, server: FastMCP) -> str:
    """13.1: test_multiple_content_types returns its three blocks in the order the exercise gives (the suite
    only looks for each kind)."""
    (result,) = run_sync(_calls(server, lambda client: client.call_tool("test_multiple_content_types", {})))
    found = _failed(result) or ", ".join(block.type for block in result.content)
    if found != ", ".join(MIXED_BLOCKS):
        check.fail(
            "the blocks test_multiple_content_types returns",
            f"{', '.join(MIXED_BLOCKS)}, in that order",
            found,
            "return [text, Image(...), EmbeddedResource(...)]: each item of the list becomes a block, in its order",
        )
    return "the mixed blocks come in order"


TEMPLATE_ID = "7"


def template_reads_as_asked(check: Checker, server: FastMCP) -> str:
    """13.3: test://template/7/data is the JSON the exercise gives, for that id, as application/json (the suite
    only looks for its id in the text)."""
    uri = f"test://template/{TEMPLATE_ID}/data"
    (contents,) = run_sync(_calls(server, lambda client: client.read_resource(uri)))
    wanted = {"id": TEMPLATE_ID, "templateTest": True, "data": f"Data for ID: {TEMPLATE_ID}"}
    what, expected = f"reading {uri}", f"{json.dumps(wanted)} as application/json"
    hint = "the JSON the task gives, key for key and word for word (the suite only looks for the id in the text)"
    if _failed(contents):
        check.fail(what, expected, _failed(contents), hint)
    first = contents[0] if contents else None
    text = getattr(first, "text", None)
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        data = None
    if isinstance(data, dict) and data != wanted and {**data, "id": TEMPLATE_ID} == wanted:
        found = f"the id {data['id']!r}, not a string"
        check.fail(what, expected, found, "the id as the URI gives it, a string: a template's parameter is text")
    if data != wanted:
        check.fail(what, expected, f"the text {text!r}" if first else "no contents", hint)
    if first.mime_type != "application/json":
        check.fail(what, expected, f"the mimeType {first.mime_type!r}", "mime_type='application/json' in @mcp.resource")
    return "the template's JSON"


async def _updates_heard(server: FastMCP) -> tuple[Any, list[str]]:
    """A 2025-11-25 client subscribes to the watched resource and calls the trigger: the call's outcome, and the
    URIs of the ``notifications/resources/updated`` it heard."""
    heard: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            heard.append(str(message.params.uri))
            arrived.set()

    async def subscribe(client: Client) -> Any:
        request = mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=capstone.WATCHED_URI))
        return await client.session.send_request(request, mcp_types.EmptyResult)

    async def trigger(client: Client) -> Any:
        result = await client.call_tool("test_trigger_resource_update", {})
        with anyio.move_on_after(0.5):  # in memory it comes before the result; a little slack all the same
            await arrived.wait()
        return result

    subscribed, called = await _calls(server, subscribe, trigger, mode="legacy", message_handler=on_message)
    return (subscribed if _failed(subscribed) else called), heard


def trigger_announces_the_update(check: Checker, server: FastMCP) -> str:
    """13.3: calling test_trigger_resource_update while subscribed sends notifications/resources/updated (the
    suite's subscribe scenarios never call it)."""
    outcome, heard = run_sync(_updates_heard(server))
    if _failed(outcome) or heard != [capstone.WATCHED_URI]:
        check.fail(
            "a client subscribed to test://watched-resource (2025-11-25) calls test_trigger_resource_update",
            f"one notifications/resources/updated for {capstone.WATCHED_URI}",
            _failed(outcome) or (f"updates for {', '.join(heard)}" if heard else "no notification"),
            "await announce_update(bus, watchers, WATCHED_URI): without await the call only makes a coroutine, "
            "which never runs (Python warns: coroutine 'announce_update' was never awaited)",
        )
    return "the trigger tells a subscriber"


COMPLETIONS = {"par": ["paris", "park", "party"], "ar": []}
WORDS_HINT = (
    "return [word for word in words if word.startswith(argument.value)]: what was typed is the start of a "
    "suggestion (argument.value), not any part of it"
)


def completes_by_prefix(check: Checker, server: FastMCP) -> str:
    """13.4: completion gives exactly the words that start with what was typed (the suite only wants a list)."""

    def complete(value: str) -> Callable[[Client], Any]:
        ref = mcp_types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
        return lambda client: client.complete(ref, {"name": "arg1", "value": value})

    answers = run_sync(_calls(server, *map(complete, COMPLETIONS)))
    for (typed, wanted), found in zip(COMPLETIONS.items(), answers, strict=True):
        values = None if _failed(found) else sorted(found.values)
        if values != wanted:
            check.fail(
                f"completion/complete for test_prompt_with_arguments' arg1, {typed!r} typed",
                ", ".join(wanted) or "no values (no word starts with it)",
                _failed(found) or ", ".join(values) or "no values",
                WORDS_HINT,
            )
    return "completion by prefix"


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
        also=(mixed_blocks_in_order,),
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
        also=(asks_only_what_was_declared,),
    ),
    "13.3": Step(
        "add_watched_resources",
        {"2025-11-25": ("resources-templates-read", "resources-subscribe", "resources-unsubscribe")},
        _hints("resources-templates-read", "resources-subscribe", "resources-unsubscribe"),
        also=(template_reads_as_asked, trigger_announces_the_update),
    ),
    "13.4": Step(
        "add_rich_prompts",
        {"2026-07-28": ("prompts-get-embedded-resource", "prompts-get-with-image", "completion-complete")},
        _hints("prompts-get-embedded-resource", "prompts-get-with-image", "completion-complete"),
        also=(completes_by_prefix,),
    ),
}


def server_with(name: str, function: Callable[..., None]) -> FastMCP:
    """The capstone server with ``function`` in place of its step ``name`` (every other step the package's)."""
    mcp, bus = capstone.new_server(), InMemorySubscriptionBus()
    for step in STEPS:
        add = function if step.__name__ == name else step
        add(mcp, bus) if step.__name__ in WITH_BUS else add(mcp)
    return mcp


#: At most this much of each check's message: its first sentence says what failed; what follows (an unknown
#: tool's "This server has: ..." lists every tool) would fill screens when a step is still blank.
MESSAGE_LIMIT = 200
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _first_sentence(message: str) -> str:
    """A suite message's first sentence, cut to :data:`MESSAGE_LIMIT` characters."""
    first = SENTENCE_END.split(message.strip(), maxsplit=1)[0]
    return first if len(first) <= MESSAGE_LIMIT else first[: MESSAGE_LIMIT - 1] + "…"


def _problems(result: ScenarioResult) -> str:
    """What the suite said about a scenario that did not pass: each failing or warning check and the first
    sentence of its message."""
    checks = [*result.failures, *result.warnings]
    if not checks:
        return "nothing ran (skipped)"
    return "; ".join(
        f"{check.status.lower()} {check.id}: {_first_sentence(check.message) if check.message else '(no message)'}"
        for check in checks
    )


#: The in-memory checks' line wraps short of WIDTH, within the lesson's widest output (its suite tables).
IN_MEMORY_WIDTH = 100


def judge(check: Checker, step: Step, function: Any) -> tuple[list[SuiteReport], list[str]]:
    """Run the step's scenarios against the capstone with ``function``; a failed check names each scenario that
    did not pass (a warning counts: the capstone passes without one) with the suite's words and a hint. Then the
    step's own checks (``also``, in memory), what a client reads, the descriptions; the reports, and the line those
    checks print when they pass."""
    check.function(function, step.answer, hint=f"{step.answer} is a function taking the server (def {step.answer})")
    server = check.runs(
        server_with,
        step.answer,
        function,
        what=f"building the server with your {step.answer}",
        expected="it adds its fixtures without an error",
        hint="the error names the line; a name used twice (two tools called alike) is a common one",
    )
    try:
        reports = run_sync(check_server_at(server, step.wanted), timeout=None)  # the suite has a time limit of its own
    except ConformanceError as error:
        check.fail("running the conformance suite", "it runs", described(error), "the message says what to fix")
    wanted = sum(len(names) for names in step.wanted.values())
    failing = [(report.revision, result) for report in reports for result in report.scored if result.status != "PASS"]
    if failing:
        one = f"the conformance suite's 1 scenario for {step.answer}"
        what = said(one if wanted == 1 else f"the conformance suite's {wanted} scenarios for {step.answer}")
        expected = said(f"all {wanted} pass: ") + "; ".join(
            f"{rev}: {', '.join(names)}" for rev, names in step.wanted.items()
        )
        found = said(f"{wanted - len(failing)} of {wanted} pass")
        texts = {"id": check.exercise_id, "what": what, "expected": expected, "found": found}
        lines = [said(template, **texts) for template in FEEDBACK[1:4]]
        for revision, result in failing:
            outcome = f"{result.scenario} ({revision}) {result.status}: {_problems(result)}"
            lines += textwrap.wrap(
                outcome, WIDTH, initial_indent="    ", subsequent_indent="        ", break_on_hyphens=False
            )
            lines += textwrap.wrap(
                said("hint: {hint}", hint=said(HINTS[result.scenario])),
                WIDTH,
                initial_indent="      ",
                subsequent_indent="        ",
                break_on_hyphens=False,
            )
        hints = " / ".join(f"{result.scenario}: {said(HINTS[result.scenario])}" for _, result in failing)
        details = " ".join(
            f"{result.scenario} ({rev}) {result.status}: {_problems(result)}." for rev, result in failing
        )
        summary = "Exercise {id} — {what}: expected {expected}, found {found}. {details} Hint: {hint}"
        message = said(summary, **texts, details=details, hint=hints)
        raise ExerciseFailed(message, tuple(lines))
    passed = [also(check, server) for also in (*step.also, as_the_task_gives, every_tool_and_prompt_described)]
    line = f"PASS in memory: {'; '.join(passed)}"
    return reports, [textwrap.fill(line, IN_MEMORY_WIDTH, subsequent_indent="  ", break_on_hyphens=False)]


def _passed(reports: list[SuiteReport]) -> str:
    """The scenarios that passed, per revision, wrapped to fit a lesson's output."""
    text = "; ".join(f"{report.revision}: {', '.join(r.scenario for r in report.scored)}" for report in reports)
    return textwrap.fill(f"PASS {text}", WIDTH, subsequent_indent="  ", break_on_hyphens=False)


def _register(exercise_id: str) -> None:
    step = EXERCISES[exercise_id]

    @exercise(exercise_id, answers=(step.answer,))
    def step_passes(check: Checker, function: Any) -> None:
        reports, also = judge(check, step, function)
        say(_passed(reports), *also, sep="\n")


for _exercise_id in EXERCISES:
    _register(_exercise_id)
