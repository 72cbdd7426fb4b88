"""What a ``fastmcp.Client`` call gave back, in one line: a result, a tool error or a JSON-RPC error alike.

Lessons 03, 08 and 09 tabulate calls that succeed and calls that fail with the same two words::

    explain(await attempt(client.call_tool("calculator_divide", {"a": 1, "b": 0})))
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Sequence
from typing import Any

from fastmcp.exceptions import ToolError
from mcp import MCPError

from mcp_teach.display.glossary import ERROR_CODES, code_range
from mcp_teach.wire.local_errors import local_error

_MISSING = object()


def code_name(code: int | None) -> str:
    """``-32601`` → ``"Method not found"`` (the short name from JSON-RPC or MCP), ``""`` if the code has none."""
    meaning = ERROR_CODES.get(code) if code is not None else None
    return meaning.split(":", 1)[0] if meaning else ""


#: The `` [type=float_parsing, input_value='three', input_type=str]`` tail of a pydantic error line.
_PYDANTIC_DETAILS = re.compile(r" \[type=.*\]$")


def one_line(text: str, *, brief: bool = False) -> str:
    """A message squeezed onto one line.

    pydantic's multi-line validation errors become ``header: field: problem``;
    with ``brief=True`` only ``field: problem`` is kept (no header, no
    ``[type=..., input_value=...]`` details).
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("For further information visit")]
    if lines and re.fullmatch(r"\d+ validation errors? for .*", lines[0]) and len(lines) % 2 == 1:
        pairs = zip(lines[1::2], lines[2::2], strict=True)
        if brief:
            return "; ".join(f"{name}: {_PYDANTIC_DETAILS.sub('', problem)}" for name, problem in pairs)
        return f"{lines[0]}: " + "; ".join(f"{name}: {problem}" for name, problem in pairs)
    return " ".join(lines)


def _first_text(content: Sequence[Any]) -> str:
    texts = (block.get("text") if isinstance(block, dict) else getattr(block, "text", None) for block in content)
    return next((one_line(text) for text in texts if isinstance(text, str)), "")


async def attempt(awaitable: Awaitable[Any]) -> Any:
    """Await ``awaitable`` and return its result, or the exception it raised (so a cell can show both alike)."""
    try:
        return await awaitable
    except Exception as error:
        return error


def explain(outcome: Any, *, brief: bool = False) -> str:
    """One line saying what a ``fastmcp.Client`` call gave back: a result, a ``ToolError`` or an ``MCPError`` (said
    to be the mcp SDK's own for a timeout or a closed connection: :func:`mcp_teach.wire.local_errors.local_error`).

    ``outcome`` is what :func:`attempt` returns: a ``CallToolResult`` (from
    ``call_tool`` or ``call_tool_mcp``) or an exception. ``brief=True`` gives a
    short form for table cells.
    """
    if isinstance(outcome, MCPError):
        if meaning := local_error(outcome):  # raised by the mcp SDK in this process: no server sent it
            if brief:
                return f"MCPError {outcome.code} (local): {meaning}"
            return f"raised MCPError {outcome.code}, a local error of the mcp SDK, not the server's answer: {meaning}"
        if brief:
            return f"MCPError {outcome.code}: {one_line(outcome.message)}"
        name = code_name(outcome.code) or code_range(outcome.code)
        return f"raised MCPError: JSON-RPC error {outcome.code} ({name}): {one_line(outcome.message)}"
    if isinstance(outcome, ToolError):
        if brief:
            return f"ToolError: {one_line(str(outcome), brief=True)}"
        return f"raised ToolError: the tool result had isError: true: {one_line(str(outcome))}"
    if isinstance(outcome, BaseException):
        return f"{'' if brief else 'raised '}{type(outcome).__name__}: {one_line(str(outcome), brief=brief)}"
    if getattr(outcome, "is_error", False):
        text = _first_text(outcome.content)
        return f"is_error=True: {text}" if brief else f"returned a result with is_error=True: {text}"
    if hasattr(outcome, "is_error"):
        data = getattr(outcome, "data", _MISSING)
        # a raw mcp_types.CallToolResult (from call_tool_mcp) has no .data
        value = f"structured_content={outcome.structured_content!r}" if data is _MISSING else f"data={data!r}"
        return value if brief else f"returned a result: {value}"
    return repr(outcome) if brief else f"returned {outcome!r}"
