"""Lesson 02's exercises (tools/list): what each one expects, for the one-line check cells ``check("02.k")``.

- 02.1: a fifth calculator tool, found in a captured ``tools/list`` and called on its server, fractions and a
  call without a real result included;
- 02.2: a predicted ``inputSchema``, compared property by property with what fastmcp publishes, and the one the
  student captured;
- 02.3: the pages of a paginated ``tools/list``, walked by hand with ``cursor`` / ``nextCursor``, on the lesson's
  server and on one whose cursors look like an end ("" and "0") but are not.

The answers are read from the lesson's globals by :func:`mcp_teach.exercises.catalogue.check`. The checks are
synchronous; those that talk to a server (02.1, 02.3) run their client in a worker thread (:func:`run_sync`).
"""

from __future__ import annotations

import datetime
import warnings
from typing import Any, Literal

from mcp.server.lowlevel import Server
from mcp_types import ListToolsResult

from mcp_teach.client import teaching_client
from mcp_teach.display.call_outcomes import attempt
from mcp_teach.exercises.answers import capture_answer, listed_tools, results, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import say
from mcp_teach.lessons.l08_connect import LowLevelMemoryTransport
from mcp_teach.servers.lowlevel_calculator import tool_definitions

#: The property hints of 02.2, one per parameter of :func:`search`.
SEARCH_HINTS = {
    "query": "a str parameter without a default: only its JSON type",
    "limit": "int becomes integer, and the default value is published as 'default'",
    "sort": "a Literal becomes an 'enum' of its values, with their JSON type and the default",
    "after": "X | None becomes anyOf [X, {'type': 'null'}]; a datetime.date is a string with a 'format'; None is null",
}


def search(
    query: str, limit: int = 10, sort: Literal["new", "top"] = "top", after: datetime.date | None = None
) -> list[str]:
    """Search the notes and return the titles that match.

    The tool function of exercise 02.2, as the lesson's exercise cell defines it (a test keeps the two equal).
    """
    return []


#: The arguments of 02.1's calls: two with a real result (fractions too, which an int() would drop), then one without.
POWER_ARGS = [{"base": 2, "exponent": 10}, {"base": 6.25, "exponent": 0.5}, {"base": -8, "exponent": 0.5}]


async def _call_power(server: Any) -> tuple[Any, list[Any]]:
    """calculator_power as registered on ``server``, and what it gave for each of POWER_ARGS: a result or the
    exception. The tools are listed first: the client checks each structuredContent against the outputSchema."""
    async with teaching_client(server) as client:
        await client.list_tools()
        calls = [await attempt(client.call_tool("calculator_power", one, raise_on_error=False)) for one in POWER_ARGS]
    return await server.get_tool("calculator_power"), calls


@exercise("02.1", answers=("power_server", "power_capture", "power_tool"))
def add_a_tool(check: Checker, power_server: Any, power_capture: Any, power_tool: Any) -> None:
    capture = capture_answer(
        check,
        power_capture,
        "power_capture",
        "the CaptureTransport around power_server that teaching_client connected through",
    )
    wire_tools = listed_tools(capture)
    names = [tool.get("name") for tool in wire_tools]
    check.contains(
        names,
        "calculator_power",
        "the tool names in your captured tools/list result",
        hint="register the function on power_server before you connect, and capture power_server",
    )
    check.contains(
        names,
        "calculator_add",
        "the tool names in your captured tools/list result",
        hint="start from build_calculator_server(): the four calculator tools stay",
    )
    check.instance(
        power_tool,
        dict,
        "power_tool",
        hint="take it from the captured message (...['result']['tools']), not a Tool from client.list_tools()",
    )
    check.equal(
        power_tool,
        next(tool for tool in wire_tools if tool.get("name") == "calculator_power"),
        "power_tool compared with the captured tool",
        hint="store the calculator_power entry of the captured result",
    )
    schema = power_tool.get("inputSchema", {})
    check.equal(
        schema.get("properties"),
        {"base": {"type": "number"}, "exponent": {"type": "number"}},
        "the properties of its inputSchema",
        hint="each parameter becomes a property of that name, and float becomes number: (base: float, exponent: float)",
    )
    check.equal(
        sorted(schema.get("required", [])),
        ["base", "exponent"],
        "the required arguments in its inputSchema",
        hint="a parameter without a default value is required",
    )
    output = power_tool.get("outputSchema", {})
    check.equal(
        output.get("properties"),
        {"result": {"type": "number"}},
        "the properties of its outputSchema",
        hint="annotate the return value as -> float: fastmcp wraps it as {'result': number}",
    )
    with warnings.catch_warnings(action="ignore"):  # pydantic's, when a student's tool returns a complex number
        registered, (*values, refused) = run_sync(_call_power(power_server))
    check.equal(
        (power_tool.get("title"), registered.title),
        ("Calculator Power", "Calculator Power"),
        "its title, listed and as registered on power_server",
        hint="pass title='Calculator Power' to power_server.tool(...): without it, fastmcp makes one from the name",
    )
    check.true(
        len(str(power_tool.get("description") or "").split()) >= 3,
        "its description",
        expected="a description a model can act on: a few words on what the tool computes",
        found=power_tool.get("description"),
        hint="pass description='...' to power_server.tool(...): a word or two tells a model nothing",
    )
    hint = "return base ** exponent of the floats as they come: int() would drop a fraction"
    for arguments, outcome in zip(POWER_ARGS[:2], values, strict=True):
        what = f"calculator_power(base={arguments['base']}, exponent={arguments['exponent']}) on power_server"
        check.equal(getattr(outcome, "data", outcome), arguments["base"] ** arguments["exponent"], what, hint=hint)
    check.equal(
        getattr(refused, "is_error", refused),
        True,
        "isError of calculator_power(base=-8, exponent=0.5) on power_server: (-8) ** 0.5 has no real result",
        hint="(-8) ** 0.5 is a complex number, which cannot match the outputSchema (a number), so a client refuses it: "
        "raise ToolError for a negative base with a fractional exponent, as the task says",
    )
    say(f"listed with 2 required numbers and a wrapped number as output; calculator_power(2, 10) = {values[0].data}")


@exercise("02.2", answers=("predicted_schema", "notes_capture", "search_schema"))
def predict_a_schema(check: Checker, predicted_schema: Any, notes_capture: Any, search_schema: Any) -> None:
    from fastmcp.tools import Tool

    actual = Tool.from_function(search).to_mcp_tool().input_schema
    check.instance(predicted_schema, dict, "predicted_schema", hint="write the schema as a dict literal")
    capture = capture_answer(check, notes_capture, "notes_capture", "the CaptureTransport you listed search through")
    wire = {tool.get("name"): tool.get("inputSchema") for tool in listed_tools(capture)}
    check.contains(wire, "search", "the tools listed in notes_capture", hint="list search's server through it")
    check.true(
        search_schema is not predicted_schema and search_schema == wire["search"] == actual,
        "search_schema",
        expected="the inputSchema of search, read from the tools/list result captured in notes_capture",
        found="your prediction itself" if search_schema is predicted_schema else search_schema,
        hint="a prediction is checked against what crossed the wire: register the search the cell defines, as it is, "
        "and read its inputSchema from the captured result",
    )
    predicted = predicted_schema.get("properties", {})
    for name, schema in actual["properties"].items():
        check.equal(predicted.get(name), schema, f"your prediction for the property {name!r}", hint=SEARCH_HINTS[name])
    check.equal(
        sorted(predicted),
        sorted(actual["properties"]),
        "the properties you predicted",
        hint="one property per parameter, nothing else",
    )
    check.equal(
        sorted(predicted_schema.get("required", [])),
        sorted(actual["required"]),
        "your 'required' list",
        hint="only parameters without a default are required",
    )
    check.equal(
        {key: value for key, value in predicted_schema.items() if key not in ("properties", "required")},
        {key: value for key, value in actual.items() if key not in ("properties", "required")},
        "the other top-level keys of your prediction",
        hint="the root is always an object, and fastmcp forbids arguments it does not know",
    )
    say("your prediction equals the inputSchema fastmcp publishes for search")


async def _walk_odd_pages(walk_pages: Any) -> Any:
    """What the student's ``walk_pages`` returns on a server of the check's: the calculator's four tools on three
    pages (2, 1 and 1 tools) whose cursors are "" and "0", present, so not the end. Each page is served once (then
    an empty last page), so a loop that drops or changes a cursor ends, with a wrong count, not a hang."""
    tools = tool_definitions()
    pages = {None: (tools[:2], ""), "": (tools[2:3], "0"), "0": (tools[3:], None)}

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        page, next_cursor = pages.pop(params.cursor if params else None, ([], None))  # each page once
        return ListToolsResult(tools=page, next_cursor=next_cursor)

    async with teaching_client(LowLevelMemoryTransport(Server("odd-cursors", on_list_tools=list_tools))) as client:
        return await walk_pages(client)


@exercise("02.3", answers=("walk_pages", "pages_capture", "all_names", "page_sizes"))
def walk_the_pages(check: Checker, walk_pages: Any, pages_capture: Any, all_names: Any, page_sizes: Any) -> None:
    check.async_function(walk_pages, "walk_pages", expected="an async function: async def walk_pages(client)")
    capture = capture_answer(
        check,
        pages_capture,
        "pages_capture",
        "the CaptureTransport around a calculator that lists 3 tools a page",
    )
    requests = capture.requests("tools/list")
    pages = results(capture, "tools/list")
    check.true(
        len(pages) > 0,
        "tools/list results in pages_capture",
        expected="at least one",
        found=0,
        hint="call client.list_tools_mcp(...) through a client connected to pages_capture",
    )
    check.equal(
        len(pages[0]["tools"]),
        3,
        "the number of tools on your first page",
        hint="connect to build_calculator_server(list_page_size=3)",
    )
    first_params = requests[0].message.get("params", {})
    check.true(
        "cursor" not in first_params,
        "your first tools/list request",
        expected="no cursor: the first page is asked for without one",
        found=first_params.get("cursor"),
        hint="call client.list_tools_mcp() or pass cursor=None the first time",
    )
    for number, (request, previous) in enumerate(zip(requests[1:], pages, strict=False), start=2):
        check.equal(
            request.message.get("params", {}).get("cursor"),
            previous.get("nextCursor"),
            f"the cursor of tools/list request {number}",
            hint="send back exactly the nextCursor of the page before; never build a cursor yourself",
        )
    check.true(
        "nextCursor" not in pages[-1],
        "the last page you asked for",
        expected="no nextCursor (nothing more to fetch)",
        found=pages[-1].get("nextCursor"),
        hint="a page with a nextCursor is not the last one: keep asking until next_cursor is None",
    )
    check.equal(
        all_names,
        [tool["name"] for page in pages for tool in page["tools"]],
        "all_names",
        hint="collect the names of every page, in order",
    )
    check.equal(
        page_sizes, [len(page["tools"]) for page in pages], "page_sizes", hint="one entry per page: len(page.tools)"
    )
    check.equal(
        [*run_sync(_walk_odd_pages(walk_pages))],
        [[tool.name for tool in tool_definitions()], [2, 1, 1]],
        "walk_pages(client) on the check's server: 3 pages of 2, 1 and 1 tools, with the cursors '' and '0'",
        hint="only a page without nextCursor ends the list ('' is a cursor too): assume no page count or page size",
    )
    say(f"page sizes {page_sizes}, tools {all_names}")
