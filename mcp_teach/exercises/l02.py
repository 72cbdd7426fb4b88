"""Lesson 02's exercises (tools/list): what each one expects, for the one-line check cells ``check("02.k")``.

- 02.1: a fifth calculator tool, found in a captured ``tools/list`` and called on its server;
- 02.2: a predicted ``inputSchema``, compared property by property with what fastmcp publishes;
- 02.3: the pages of a paginated ``tools/list``, walked by hand with ``cursor`` / ``nextCursor``.

The answers are read from the lesson's globals by :func:`mcp_teach.exercises.catalogue.check`. The checks are
synchronous; the one that talks to a server (02.1) runs its client in a worker thread (:func:`run_sync`).
"""

from __future__ import annotations

import datetime
from typing import Any, Literal

from mcp_teach.client import teaching_client
from mcp_teach.display.call_outcomes import attempt
from mcp_teach.exercises.answers import capture_answer, listed_tools, results, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker

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


async def _call_power(server: Any) -> Any:
    """``calculator_power(base=2, exponent=10)`` on ``server``, listed first (its outputSchema is checked)."""
    async with teaching_client(server) as client:
        await client.list_tools()
        return (await client.call_tool("calculator_power", {"base": 2, "exponent": 10})).data


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
    check.equal(
        power_tool.get("title"),
        "Calculator Power",
        "its title",
        hint="pass title='Calculator Power' to power_server.tool(...)",
    )
    check.true(
        bool(power_tool.get("description")),
        "its description",
        expected="a description a model can act on",
        found=power_tool.get("description"),
        hint="pass description='...' to power_server.tool(...), or give the function a docstring",
    )
    power = run_sync(attempt(_call_power(power_server)))  # an exception is shown as what was found
    check.equal(
        power,
        1024.0,
        "calculator_power(base=2, exponent=10) on power_server",
        hint="return base ** exponent",
    )
    print(f"listed with 2 required numbers and a wrapped number as output; calculator_power(2, 10) = {power}")


@exercise("02.2", answers=("predicted_schema", "search_schema"))
def predict_a_schema(check: Checker, predicted_schema: Any, search_schema: Any) -> None:
    from fastmcp.tools import Tool

    actual = Tool.from_function(search).to_mcp_tool().input_schema
    check.instance(predicted_schema, dict, "predicted_schema", hint="write the schema as a dict literal")
    check.equal(
        search_schema,
        actual,
        "search_schema, the inputSchema you captured",
        hint="take it from the captured tools/list result: ...message['result']['tools'][0]['inputSchema']",
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
    print("your prediction equals the inputSchema fastmcp publishes for search")


@exercise("02.3", answers=("pages_capture", "all_names", "page_sizes"))
def walk_the_pages(check: Checker, pages_capture: Any, all_names: Any, page_sizes: Any) -> None:
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
    print(f"page sizes {page_sizes}, tools {all_names}")
