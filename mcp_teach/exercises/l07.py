"""Lesson 07's exercises (resources and prompts): what each one expects, for the check cells ``check("07.k")``.

- 07.1: ``add_day_completion(mcp, days)`` registers a completion handler for a template variable and a prompt
  argument;
- 07.2: ``add_review_prompt(mcp, notes)`` registers a prompt whose second message embeds a resource;
- 07.3: ``choose_context(resources, budget)``, the application's choice of resources by annotations and size.

Each check runs the student's function on a server of its own (in memory, a real client) or on the knowledge
server's real ``resources/list``, so it judges behaviour, not code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types
from fastmcp import FastMCP
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.display.call_outcomes import attempt
from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import say
from mcp_teach.servers.knowledge import build_knowledge_server

INVALID_PARAMS = -32602
#: 07.1: the days the check's server completes, and what each request must answer.
DAYS = ["monday", "tuesday", "thursday", "Saturday"]
DAY_TEMPLATE = mcp_types.ResourceTemplateReference(type="ref/resource", uri="notes://{day}")
PLAN_PROMPT = mcp_types.PromptReference(type="ref/prompt", name="plan_the_day")
COMPLETIONS: list[tuple[Any, str, str, list[str], str]] = [
    (DAY_TEMPLATE, "day", "", DAYS, "an empty value starts every day: all the days given (days), unchanged, in order"),
    (DAY_TEMPLATE, "day", "t", ["tuesday", "thursday"], "the days that start with what was typed, in list order"),
    (DAY_TEMPLATE, "day", "T", ["tuesday", "thursday"], "compare lower-cased: argument.value.lower()"),
    (DAY_TEMPLATE, "day", "sat", ["Saturday"], "lower-case the days too when you compare, but return them unchanged"),
    (PLAN_PROMPT, "day", "mo", ["monday"], "complete the prompt's argument too: a PromptReference has .name"),
    (
        mcp_types.PromptReference(type="ref/prompt", name="pick_mood"),
        "mood",
        "",
        [],
        "return None for any other prompt or argument: check ref and argument.name first",
    ),
    (
        mcp_types.ResourceTemplateReference(type="ref/resource", uri="moods://{mood}"),
        "mood",
        "",
        [],
        "return None for any other template: a ResourceTemplateReference has .uri",
    ),
    (
        mcp_types.PromptReference(type="ref/prompt", name="plan_the_week"),
        "day",
        "",
        [],
        "only plan_the_day's day: another prompt with an argument called day gets None too (check ref.name)",
    ),
    (
        mcp_types.ResourceTemplateReference(type="ref/resource", uri="weeks://{day}"),
        "day",
        "",
        [],
        "only the template notes://{day}: another one with a {day} gets None too (check ref.uri)",
    ),
]
#: 07.1: the hint when the handler raised (the server answers -32603).
RAISED_HINT = (
    "your handler raised: a PromptReference has .name, a ResourceTemplateReference has .uri; look at ref.type "
    "(or isinstance) before reading either"
)
#: 07.2: the notes the check's server gets, and the day that has none.
REVIEW_NOTES = {"monday": "Stand-up at 9.", "friday": "Ship the release."}
NO_NOTE = "sunday"


def _day(day: str) -> str:
    return day


def _mood(mood: str) -> str:
    return mood


def _check_server(name: str) -> FastMCP:
    """A server with the templates and prompts 07.1 completes, each with one argument."""
    server = FastMCP(name, version="1.0.0")
    server.resource("notes://{day}", name="note", mime_type="text/plain")(_day)
    server.resource("moods://{mood}", name="mood", mime_type="text/plain")(_mood)
    server.resource("weeks://{day}", name="week", mime_type="text/plain")(_day)
    server.prompt(_day, name="plan_the_day")
    server.prompt(_mood, name="pick_mood")
    server.prompt(_day, name="plan_the_week")
    return server


def _register(check: Checker, function: Any, name: str, server: FastMCP, *arguments: Any) -> None:
    check.function(function, name, hint=f"def {name}(...)")
    check.runs(function, server, *arguments, what=f"{name}(mcp, ...)", expected="it to register on mcp and return")


async def _completions(server: FastMCP) -> list[list[str] | str]:
    found: list[list[str] | str] = []
    async with teaching_client(server) as client:
        for ref, argument, value, _, _ in COMPLETIONS:
            try:
                found.append(list((await client.complete(ref, {"name": argument, "value": value})).values))
            except MCPError as error:
                found.append(f"JSON-RPC error {error.error.code}: {error.error.message}")
    return found


@exercise("07.1", answers=("add_day_completion",))
def day_completion(check: Checker, add_day_completion: Any) -> None:
    server = _check_server("check-07-1")
    _register(check, add_day_completion, "add_day_completion", server, list(DAYS))
    found = run_sync(_completions(server))
    for (ref, argument, value, expected, hint), values in zip(COMPLETIONS, found, strict=True):
        where = f"prompt {ref.name}" if isinstance(ref, mcp_types.PromptReference) else f"template {ref.uri}"
        if isinstance(values, str) and "-32601" in values:
            hint = "decorate the inner handler with @mcp.completion: without one there is no completion/complete"
        elif isinstance(values, str) and "-32603" in values:
            hint = RAISED_HINT
        check.equal(values, expected, f"completion/complete of {argument}={value!r} on the {where}", hint=hint)
    say(f"{len(COMPLETIONS)} completion requests answered: 'T' -> tuesday, thursday; other arguments get none")


async def _review(server: FastMCP) -> tuple[list[Any], Any, Any]:
    """The prompts listed, review_note for friday, and what review_note raised (or returned) for NO_NOTE."""
    async with teaching_client(server) as client:
        prompts = await client.list_prompts()
        names = [prompt.name for prompt in prompts]
        if "review_note" not in names:
            return prompts, None, None
        result = await attempt(client.get_prompt("review_note", {"day": "friday"}))
        refused = await attempt(client.get_prompt("review_note", {"day": NO_NOTE}))
    return prompts, result, refused


@exercise("07.2", answers=("add_review_prompt",))
def review_prompt(check: Checker, add_review_prompt: Any) -> None:
    server = FastMCP("check-07-2", version="1.0.0")
    _register(check, add_review_prompt, "add_review_prompt", server, dict(REVIEW_NOTES))
    prompts, result, refused = run_sync(_review(server))
    by_name = {prompt.name: prompt for prompt in prompts}
    check.contains(list(by_name), "review_note", "the prompts listed", hint="@mcp.prompt on a function review_note")
    arguments = [(a.name, a.required) for a in by_name["review_note"].arguments or []]
    check.equal(arguments, [("day", True)], "the arguments of review_note", hint="one parameter, day: str")
    check.true(
        not isinstance(result, Exception),
        "prompts/get review_note(day='friday'), a day the notes have",
        expected="its messages",
        found=f"JSON-RPC error {result.error.code}: {result.error.message}" if isinstance(result, MCPError) else result,
        hint="use the notes your function was given (the parameter), not the lesson's NOTES; return Message(...)s",
    )
    messages = result.messages
    check.equal(
        [(m.role, m.content.type) for m in messages],
        [("user", "text"), ("user", "resource")],
        "the (role, content type) of each message of review_note(day='friday')",
        hint="two user messages, the text first, then an mcp_types.EmbeddedResource: it carries the note itself, "
        "where a resource_link would only point to it",
    )
    embedded = messages[1].content.resource
    found = (str(embedded.uri), embedded.mime_type, getattr(embedded, "text", None))
    expected = ("notes://friday", "text/plain", REVIEW_NOTES["friday"])
    field_hints = (
        "the uri names the day asked for, as the template notes://{day} does",
        "a note is plain text whatever it holds: say so in mime_type",
        "the text is that day's note from the notes your function was given (TextResourceContents, not a blob)",
    )
    check.equal(
        found,
        expected,
        "the embedded resource's (uri, mimeType, text)",
        hint=next((h for h, f, e in zip(field_hints, found, expected, strict=True) if f != e), None),
    )
    check.equal(
        refused.error.code if isinstance(refused, MCPError) else None,
        INVALID_PARAMS,
        f"the error for day={NO_NOTE!r}, which has no note",
        hint="raise fastmcp.exceptions.ValidationError(...) for a day not in notes: fastmcp sends it as -32602; "
        "a KeyError would become -32603",
    )
    say("review_note: a text, then the note embedded as notes://friday (text/plain); an unknown day -32602")


def _priority(resource: mcp_types.Resource) -> float:
    given = resource.annotations.priority if resource.annotations else None
    return 0.5 if given is None else given


def expected_context(resources: list[mcp_types.Resource], budget: int) -> list[str]:
    """The rule of 07.3, for the check to compare with."""

    def readable(resource: mcp_types.Resource) -> bool:
        audience = resource.annotations.audience if resource.annotations else None
        mime = resource.mime_type or ""
        text = mime.startswith("text/") or mime == "application/json"
        return (not audience or "assistant" in audience) and text and resource.size is not None

    chosen, used = [], 0
    for resource in sorted(filter(readable, resources), key=_priority, reverse=True):
        if used + (resource.size or 0) <= budget:
            chosen.append(str(resource.uri))
            used += resource.size or 0
    return chosen


def _resource(uri: str, mime: str | None, size: int | None, **annotations: Any) -> mcp_types.Resource:
    notes = mcp_types.Annotations(**annotations) if annotations else None
    return mcp_types.Resource(uri=uri, name=uri.rsplit("/", 1)[-1], mime_type=mime, size=size, annotations=notes)


#: 07.3's own lists: (what the list tests, the resources, the budget).
OWN_LISTS: list[tuple[str, list[mcp_types.Resource], int]] = [
    (
        "a resource without annotations counts as for both, priority 0.5",
        [_resource("x://plain", "text/plain", 10), _resource("x://low", "text/plain", 10, priority=0.1)],
        15,
    ),
    (
        "no size, an unreadable type or audience ['user'] leave a resource out",
        [
            _resource("x://unsized", "text/plain", None, priority=1.0),
            _resource("x://pdf", "application/pdf", 5, priority=1.0),
            _resource("x://for-user", "text/plain", 5, audience=["user"], priority=1.0),
            _resource("x://json", "application/json", 5, audience=["assistant"]),
        ],
        100,
    ),
    (
        "annotations without an audience count as for both",
        [_resource("x://annotated", "text/plain", 10, priority=0.7), _resource("x://also", "text/plain", 10)],
        100,
    ),
    (
        "a priority of 0.0 is the lowest, not a missing one (0.5)",
        [_resource("x://zero", "text/plain", 10, priority=0.0), _resource("x://plain", "text/plain", 10)],
        10,
    ),
    (
        "a resource that fills the budget exactly fits; one without a mimeType is left out",
        [_resource("x://untyped", None, 5, priority=1.0), _resource("x://exact", "text/plain", 40)],
        40,
    ),
    (
        "equal priorities keep the list's order; one that does not fit is skipped and the next taken",
        [
            _resource("x://big", "text/markdown", 90, priority=0.9),
            _resource("x://b", "text/markdown", 20, priority=0.5),
            _resource("x://a", "text/markdown", 20, priority=0.5),
        ],
        50,
    ),
]


async def _knowledge_resources() -> list[mcp_types.Resource]:
    async with teaching_client(build_knowledge_server()) as client:
        return await client.list_resources()


def _choose(check: Checker, function: Callable[..., Any], resources: list[Any], budget: int, what: str) -> None:
    found = check.runs(function, list(resources), budget, what=what, expected="a list of URIs")
    objects = isinstance(found, list | tuple) and any(isinstance(item, mcp_types.Resource) for item in found)
    found = [str(uri) for uri in found] if isinstance(found, list | tuple) and not objects else found
    expected = expected_context(resources, budget)
    check.equal(found, expected, what, hint=_context_hint(what, resources, budget, None if objects else found))


def _context_hint(what: str, resources: list[mcp_types.Resource], budget: int, found: Any) -> str:
    """The mistake ``found`` shows: objects for URIs, another order, JSON left out, or the list's own rule."""
    if found is None:
        return "return the URIs (str(resource.uri)), not the Resource objects"
    if "knowledge" not in what:
        return what.split(": ", 1)[-1]
    expected = expected_context(resources, budget)
    if isinstance(found, list) and sorted(map(str, found)) == sorted(expected):
        return "the right resources in another order: highest priority first, equal priorities in the list's order"
    if found == expected_context([r for r in resources if r.mime_type != "application/json"], budget):
        json = next(str(r.uri) for r in resources if r.mime_type == "application/json")
        return f"{json} is application/json, which counts as text"
    return "sort the readable resources by priority, highest first, then add each one whose size still fits"


@exercise("07.3", answers=("choose_context",))
def context_choice(check: Checker, choose_context: Any) -> None:
    check.function(choose_context, "choose_context")
    knowledge = run_sync(_knowledge_resources())
    for budget in (0, 700, 2500, 3000, 10_000):
        _choose(check, choose_context, knowledge, budget, f"choose_context(<the knowledge server's list>, {budget})")
    for what, resources, budget in OWN_LISTS:
        _choose(check, choose_context, resources, budget, f"choose_context(<a list of the check's>, {budget}): {what}")
    say(f"budget 3000 on the knowledge server: {', '.join(expected_context(knowledge, 3000))}")
