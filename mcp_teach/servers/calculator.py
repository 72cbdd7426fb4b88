"""The calculator MCP server every lesson talks to: four arithmetic tools.

Run it from a terminal with ``python -m mcp_teach.server --transport stdio``
(or ``mcp-teach serve``); import :func:`build_calculator_server` to use it
in-process.
"""

from __future__ import annotations

import math
import reprlib

from fastmcp import FastMCP
from fastmcp.exceptions import NotFoundError, ToolError, ValidationError
from fastmcp.server.middleware import Middleware, MiddlewareContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError as PydanticValidationError

SERVER_NAME = "mcp-teach-calculator"
#: JSON-RPC "Invalid params": what the specification answers a call of an unknown tool with.
INVALID_PARAMS = -32602
#: Fixed by the package, not by fastmcp, so captured ``serverInfo`` stays stable.
SERVER_VERSION = "1.0.0"
SERVER_INSTRUCTIONS = (
    "A four-function calculator for the mcp-teach course. Call one calculator_* tool per arithmetic step."
)


def _finite(value: float, operation: str, a: float, b: float) -> float:
    """JSON has no ``inf`` or ``NaN``: non-finite operands (``"inf"``) and results (overflow) are tool errors."""
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ToolError(f"The operands of {operation} must be finite numbers, got a={a}, b={b}.")
    if not math.isfinite(value):
        raise ToolError(f"The result of {operation} is not a finite number (overflow). Use smaller operands.")
    return value


def calculator_add(a: float, b: float) -> float:
    """Add two numbers and return a + b."""
    return _finite(a + b, "a + b", a, b)


def calculator_subtract(a: float, b: float) -> float:
    """Subtract b from a and return a - b."""
    return _finite(a - b, "a - b", a, b)


def calculator_multiply(a: float, b: float) -> float:
    """Multiply two numbers and return a * b."""
    return _finite(a * b, "a * b", a, b)


def calculator_divide(a: float, b: float) -> float:
    """Divide a by b and return a / b; dividing by zero is a tool error."""
    if b == 0:
        raise ToolError("Cannot divide by zero: argument 'b' must not be 0.")
    return _finite(a / b, "a / b", a, b)


TOOLS = {
    calculator_add: ("Calculator Add", "Add two numbers (a + b)."),
    calculator_subtract: ("Calculator Subtract", "Subtract the second number from the first (a - b)."),
    calculator_multiply: ("Calculator Multiply", "Multiply two numbers (a * b)."),
    calculator_divide: ("Calculator Divide", "Divide the first number by the second (a / b); b must not be 0."),
}


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to about ``limit`` characters: a 2 MB argument is not echoed back whole."""
    shortener = reprlib.Repr()
    shortener.maxstring = shortener.maxlong = shortener.maxother = limit
    return shortener.repr(value)


def explain_invalid_arguments(tool: str, error: PydanticValidationError) -> str:
    """One readable sentence per wrong argument, instead of pydantic's full report."""
    problems = []
    for item in error.errors():
        name = short_repr(".".join(str(part) for part in item["loc"]) or "arguments")[1:-1]
        if item["type"] in ("missing", "missing_argument"):
            problems.append(f"argument '{name}' is missing")
        elif item["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            problems.append(f"unexpected argument '{name}'")
        else:
            problems.append(f"argument '{name}': {item['msg']} (got {short_repr(item['input'])})")
    return f"Invalid arguments for {tool}: " + "; ".join(problems) + "."


class ExplainInvalidArguments(Middleware):
    """Say what to fix: wrong, missing or extra arguments as a short tool error, an unknown tool as -32602.

    The specification puts the two apart (2025-11-25 and 2026-07-28, server/tools, Error Handling): an unknown
    tool is a protocol error, JSON-RPC ``-32602`` ("Unknown tool: ..."); input validation errors are tool
    execution errors (``isError: true``), which a model can read and correct. Both messages name the fix.
    """

    async def on_call_tool(self, context: MiddlewareContext, call_next):
        try:
            return await call_next(context)
        except NotFoundError:
            known = ", ".join(sorted(tool.name for tool in await context.fastmcp_context.fastmcp.list_tools()))
            message = f"Unknown tool: {short_repr(context.message.name)}. This server has: {known}."
            raise MCPError(INVALID_PARAMS, message) from None
        except ValidationError as error:
            if not isinstance(error.__cause__, PydanticValidationError):
                raise
            raise ToolError(explain_invalid_arguments(context.message.name, error.__cause__)) from error


def build_calculator_server(*, list_page_size: int | None = None) -> FastMCP:
    """Create a fresh calculator server with the four calculator_* tools.

    ``list_page_size`` makes ``tools/list`` answer in pages of that many tools
    (with a ``nextCursor``), to show pagination.
    """
    server = FastMCP(
        SERVER_NAME,
        instructions=SERVER_INSTRUCTIONS,
        version=SERVER_VERSION,
        list_page_size=list_page_size,
        middleware=[ExplainInvalidArguments()],
    )
    for function, (title, description) in TOOLS.items():
        server.tool(function, title=title, description=description)
    return server

