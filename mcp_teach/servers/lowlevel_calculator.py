"""The calculator on the mcp SDK's low-level ``Server``: every schema and every check written by hand (lesson 08).

The same four tools as :mod:`mcp_teach.servers.calculator` (names, descriptions, instructions), but nothing is
generated: ``tools/list`` sends the input schemas below as written, and ``tools/call`` checks the arguments itself,
because the SDK does not validate them against ``inputSchema``. No ``outputSchema``: the result is one number and
the text carries it. Lesson 08 writes these definitions in its cells; this module holds the same text, so the
exercises and ``python -m`` can use them.

    python -m mcp_teach.servers.lowlevel_calculator    # the SDK's own stdio server, both protocol eras

``python -m`` loads this file as ``__main__`` and nothing imports it back, so lesson 08's double-import trap cannot
bite. The module imports the mcp SDK only, not fastmcp.
"""

from __future__ import annotations

import json
import operator
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError


def operands(a: str, b: str) -> dict[str, Any]:
    """The input schema of a tool of two numbers: JSON Schema (2020-12, the default) written out by hand."""
    return {
        "type": "object",
        "properties": {
            "a": {"type": "number", "description": a},
            "b": {"type": "number", "description": b},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    }


DIVIDE_SCHEMA = operands("The dividend.", "The divisor; must not be 0.")
DIVIDE_SCHEMA["properties"]["b"]["not"] = {"const": 0}  # a rule on one argument: JSON Schema can say it

#: name -> (description, input schema, operator). The descriptions are the fastmcp calculator's.
TOOLS = {
    "calculator_add": ("Add two numbers (a + b).", operands("The first number.", "The number to add."), "+"),
    "calculator_subtract": (
        "Subtract the second number from the first (a - b).",
        operands("The number to subtract from.", "The number to subtract."),
        "-",
    ),
    "calculator_multiply": ("Multiply two numbers (a * b).", operands("The first factor.", "The second factor."), "*"),
    "calculator_divide": ("Divide the first number by the second (a / b); b must not be 0.", DIVIDE_SCHEMA, "/"),
}
OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def tool_definitions() -> list[types.Tool]:
    """What ``tools/list`` answers: name, description and the hand-written input schema of each tool."""
    return [
        types.Tool(name=name, description=description, input_schema=schema)
        for name, (description, schema, _) in TOOLS.items()
    ]


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    """The ``tools/list`` handler: all four tools in one page, so no ``nextCursor``."""
    return types.ListToolsResult(tools=tool_definitions())


def argument_problems(name: str, arguments: dict[str, Any] | None) -> list[str]:
    """What is wrong with ``arguments`` for tool ``name``, one phrase each: the checks the SDK leaves to us."""
    schema = TOOLS[name][1]
    given = arguments or {}
    problems = [f"argument '{key}' is missing" for key in schema["required"] if key not in given]
    problems += [f"unexpected argument '{key[:60]}'" for key in given if key not in schema["properties"]]
    for key in [key for key in schema["properties"] if key in given]:
        value, shown = given[key], json.dumps(given[key], default=repr)[:60]
        if isinstance(value, bool) or not isinstance(value, int | float):  # true is a bool, "2" a string
            problems.append(f"argument '{key}' must be a number (got {shown})")
        elif not abs(value) <= sys.float_info.max:  # 1e400 and 10**400 are JSON numbers that no float holds
            problems.append(f"argument '{key}' must be a finite number (got {shown})")
        elif name == "calculator_divide" and key == "b" and value == 0:
            problems.append("argument 'b' must not be 0: cannot divide by zero")
    return problems


def text_result(text: str, *, is_error: bool = False) -> types.CallToolResult:
    """A tool result of one text block; ``is_error=True`` makes it a tool execution error the model can read."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def calculate(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run tool ``name``: the number as text, or a tool error that says what to fix."""
    if name not in TOOLS:  # a protocol error: -32602 (server/tools, Error Handling)
        known = ", ".join(sorted(TOOLS))
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: '{name[:60]}'. This server has: {known}.")
    problems = argument_problems(name, arguments)
    if problems:
        return text_result(f"Invalid arguments for {name}: " + "; ".join(problems) + ".", is_error=True)
    a, b, symbol = float(arguments["a"]), float(arguments["b"]), TOOLS[name][2]
    value = OPERATIONS[symbol](a, b)
    if not abs(value) <= sys.float_info.max:  # a rule across both arguments: no input schema can say it
        return text_result(
            f"The result of a {symbol} b is not a finite number (overflow). Use smaller operands.", is_error=True
        )
    return text_result(json.dumps(value))


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    """The ``tools/call`` handler: ``params`` is already parsed; the arguments are not checked yet."""
    return calculate(params.name, params.arguments)


SERVER_NAME = "mcp-teach-lowlevel-calculator"
SERVER_VERSION = "1.0.0"
SERVER_INSTRUCTIONS = (
    "A four-function calculator for the mcp-teach course. Call one calculator_* tool per arithmetic step."
)


def build_lowlevel_calculator() -> Server[Any]:
    """A fresh low-level calculator: the two handlers, registered for ``tools/list`` and ``tools/call``."""
    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=SERVER_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio() -> None:
    """Serve one connection on this process's stdin and stdout with the SDK's stdio server (both eras)."""
    server = build_lowlevel_calculator()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve_stdio)
