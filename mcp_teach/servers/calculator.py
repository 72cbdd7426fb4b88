"""The calculator MCP server every lesson talks to: four arithmetic tools (written in lesson 00, section 2).

Run it from a terminal with ``python -m mcp_teach.serve --transport stdio`` (or ``mcp-teach serve``); import
:func:`build_calculator_server` to use it in-process.
"""

from __future__ import annotations

import math

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AuthProvider

from mcp_teach.servers.explained_errors import ExplainingFastMCP


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


SERVER_NAME = "mcp-teach-calculator"
#: Fixed by the package, not by fastmcp, so captured ``serverInfo`` stays stable.
SERVER_VERSION = "1.0.0"
SERVER_INSTRUCTIONS = (
    "A four-function calculator for the mcp-teach course. Call one calculator_* tool per arithmetic step."
)
TOOLS = {
    calculator_add: ("Calculator Add", "Add two numbers (a + b)."),
    calculator_subtract: ("Calculator Subtract", "Subtract the second number from the first (a - b)."),
    calculator_multiply: ("Calculator Multiply", "Multiply two numbers (a * b)."),
    calculator_divide: ("Calculator Divide", "Divide the first number by the second (a / b); b must not be 0."),
}


def build_calculator_server(*, list_page_size: int | None = None, auth: AuthProvider | None = None) -> FastMCP:
    """A fresh calculator; ``list_page_size`` pages ``tools/list`` (lesson 02), ``auth`` guards HTTP (lesson 12)."""
    server = ExplainingFastMCP(
        SERVER_NAME,
        instructions=SERVER_INSTRUCTIONS,
        version=SERVER_VERSION,
        list_page_size=list_page_size,
        auth=auth,
    )
    for function, (title, description) in TOOLS.items():
        server.tool(function, title=title, description=description)
    return server
