"""The calculator again, on the mcp SDK's low-level ``Server``: every schema and every check written by hand.

The same four tools as :mod:`mcp_teach.servers.calculator` (same names, same descriptions), but nothing is
generated: the input schemas below are JSON written out, ``tools/list`` returns them as they are, and
``tools/call`` finds the tool by its name and checks the arguments itself. The SDK does the JSON-RPC, both
protocol eras (the 2025-11-25 ``initialize`` handshake and the 2026-07-28 ``server/discover`` flow) and the
check that ``params`` fit the method; it does **not** validate ``arguments`` against ``inputSchema``: that is
the handler's job (the specification: servers MUST validate all tool inputs).

No ``outputSchema``, on purpose. The result is one number and the text content carries it (``"0.25"``), which
is all a model reads. An ``outputSchema`` is a promise: servers MUST return ``structuredContent`` that
conforms to it and clients SHOULD validate against it (2026-07-28, server/tools, Output Schema); and in
2025-11-25 ``structuredContent`` has to be an object, so a bare number would need a wrapper such as fastmcp's
``{"result": ...}``. Leaving it out keeps this server minimal, and it makes lesson 08's wire diff show exactly
what fastmcp adds (output schemas with ``x-fastmcp-wrap-result``, ``structuredContent``, ``_meta.fastmcp``).

Run it over stdio with the SDK's own stdio server::

    python -m mcp_teach.servers.lowlevel_calculator

``python -m`` loads this file as ``__main__``; nothing here imports it back, and the tools live in a constant
built once, so the double-import trap of lesson 08 cannot bite (see :mod:`mcp_teach.lessons.l08_double_import`).
The module imports only the mcp SDK, not fastmcp.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

SERVER_NAME = "mcp-teach-lowlevel-calculator"
SERVER_VERSION = "1.0.0"
#: The calculator's instructions, word for word (a test compares them).
SERVER_INSTRUCTIONS = (
    "A four-function calculator for the mcp-teach course. Call one calculator_* tool per arithmetic step."
)
#: JSON-RPC "Invalid params": the code for a call of an unknown tool (server/tools, Error Handling).
INVALID_PARAMS = -32602


def _operands(first: str, second: str, *, b_not_zero: bool = False) -> dict[str, Any]:
    """The input schema of a two-operand tool, written out as JSON Schema (2020-12, the default)."""
    b: dict[str, Any] = {"type": "number", "description": second}
    if b_not_zero:
        b["not"] = {"const": 0}  # a rule on one argument: JSON Schema can say it
    return {
        "type": "object",
        "properties": {"a": {"type": "number", "description": first}, "b": b},
        "required": ["a", "b"],
        "additionalProperties": False,
    }


#: name -> (description, input schema, the operation, how it reads). Descriptions as in ``calculator.TOOLS``.
TOOLS: dict[str, tuple[str, dict[str, Any], Callable[[float, float], float], str]] = {
    "calculator_add": (
        "Add two numbers (a + b).",
        _operands("The first number.", "The number to add."),
        lambda a, b: a + b,
        "a + b",
    ),
    "calculator_subtract": (
        "Subtract the second number from the first (a - b).",
        _operands("The number to subtract from.", "The number to subtract."),
        lambda a, b: a - b,
        "a - b",
    ),
    "calculator_multiply": (
        "Multiply two numbers (a * b).",
        _operands("The first factor.", "The second factor."),
        lambda a, b: a * b,
        "a * b",
    ),
    "calculator_divide": (
        "Divide the first number by the second (a / b); b must not be 0.",
        _operands("The dividend.", "The divisor; must not be 0.", b_not_zero=True),
        lambda a, b: a / b,
        "a / b",
    ),
}


def _short(value: object, limit: int = 60) -> str:
    """``value`` as JSON (``"2"``, ``true``), cut to about ``limit`` characters: a 2 MB argument is not echoed whole."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def tool_definitions() -> list[types.Tool]:
    """What ``tools/list`` answers: name, description and the hand-written input schema of each tool."""
    return [
        types.Tool(name=name, description=description, input_schema=schema)
        for name, (description, schema, _, _) in TOOLS.items()
    ]


def _is_number(value: object) -> bool:
    """A JSON number: ``true`` is a boolean (Python's ``bool`` is an ``int``), ``"3"`` is a string."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value: float) -> bool:
    """``1e400`` and ``10**400`` are valid JSON numbers, but no float can hold them."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def argument_problems(name: str, arguments: dict[str, Any] | None) -> list[str]:
    """What is wrong with ``arguments`` for tool ``name``, one short phrase per problem (``[]``: nothing)."""
    schema = TOOLS[name][1]
    given = arguments or {}
    problems = [f"argument '{key}' is missing" for key in schema["required"] if key not in given]
    problems += [f"unexpected argument '{str(key)[:60]}'" for key in given if key not in schema["properties"]]
    for key in schema["properties"]:
        if key not in given:
            continue
        value = given[key]
        if not _is_number(value):
            problems.append(f"argument '{key}' must be a number (got {_short(value)})")
        elif not _finite(value):
            problems.append(f"argument '{key}' must be a finite number (got {_short(value)})")
        elif key == "b" and name == "calculator_divide" and value == 0:
            problems.append("argument 'b' must not be 0: cannot divide by zero")
    return problems


def _text_result(text: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def calculate(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run tool ``name`` on ``arguments``: the result as text, or a tool error (``isError``) saying what to fix.

    An unknown ``name`` is a protocol error, JSON-RPC ``-32602`` ("Unknown tool: ..."), not a tool error.
    """
    if name not in TOOLS:
        known = ", ".join(sorted(TOOLS))
        raise MCPError(INVALID_PARAMS, f"Unknown tool: '{name[:60]}'. This server has: {known}.")
    problems = argument_problems(name, arguments)
    if problems:
        return _text_result(f"Invalid arguments for {name}: " + "; ".join(problems) + ".", is_error=True)
    assert arguments is not None  # no problems: both operands are there
    a, b = float(arguments["a"]), float(arguments["b"])
    _, _, operation, reads = TOOLS[name]
    try:
        value = operation(a, b)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):  # a rule across both arguments: no input schema can say it
        return _text_result(
            f"The result of {reads} is not a finite number (overflow). Use smaller operands.", is_error=True
        )
    return _text_result(json.dumps(value))


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    """The ``tools/list`` handler: all four tools in one page (no cursor)."""
    return types.ListToolsResult(tools=tool_definitions())


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    """The ``tools/call`` handler: dispatch on ``params.name``, check ``params.arguments``, compute."""
    return calculate(params.name, params.arguments)


def build_lowlevel_calculator() -> Server[Any]:
    """A fresh low-level calculator server: the two handlers above, registered by method."""
    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=SERVER_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio() -> None:
    """Serve one connection on this process's stdin/stdout with the SDK's stdio server (both eras)."""
    server = build_lowlevel_calculator()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve_stdio)
