"""Errors that say what to fix, for any FastMCP server of the course (the calculator, the knowledge base).

Three mistakes a student makes by hand, and what the server answers instead of the libraries' defaults:

- **wrong, missing or extra tool arguments**: a tool execution error (``isError: true``) with one short
  sentence per argument, not pydantic's report (:class:`ExplainInvalidArguments`);
- **an unknown tool**: JSON-RPC ``-32602`` "Unknown tool: ... This server has: ..." (fastmcp answers it
  as a tool error);
- **params that do not fit the method** (``tools/call`` without ``name``): ``-32602`` naming each wrong
  field, where the mcp SDK sends ``Invalid request parameters`` with empty ``data``
  (:class:`ExplainInvalidParams`).

The specification puts these apart (2025-11-25 and 2026-07-28, server/tools, Error Handling): unknown tools
and invalid requests are protocol errors; input validation errors are tool execution errors, which a model
can read and correct.
"""

from __future__ import annotations

import reprlib
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import NotFoundError, ToolError, ValidationError
from fastmcp.server.middleware import Middleware, MiddlewareContext
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError as PydanticValidationError

#: JSON-RPC "Invalid params": for params that do not fit the method, and for a call of an unknown tool.
INVALID_PARAMS = -32602


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


def _field(location: tuple[Any, ...]) -> str:
    """``params.name`` or ``params``: pydantic's location, union branch names (``CallToolRequestParams``) dropped."""
    return ".".join(str(part) for part in location if not (isinstance(part, str) and part[:1].isupper()))


def describe_invalid_params(method: str, error: PydanticValidationError) -> tuple[str, list[dict[str, str]]]:
    """The sentence and the per-field list for ``error``, each problem once."""
    problems: dict[str, dict[str, str]] = {}
    for item in error.errors():
        where = _field(item["loc"])
        if item["type"] == "missing":
            problem = {"field": where, "problem": "is missing"}
        else:
            rule = item["msg"].removeprefix("Input ")  # "should be a valid string"
            problem = {"field": where, "problem": f"{rule} (got {short_repr(item['input'], 40)})"}
        problems.setdefault(where, problem)
    listed = "; ".join(f"{p['field']} {p['problem']}" for p in problems.values())
    return f"Invalid params for {method}: {listed}.", list(problems.values())


class ExplainInvalidParams:
    """mcp server middleware (the outermost): a params ``ValidationError`` becomes an explained ``-32602``."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except PydanticValidationError as error:
            message, problems = describe_invalid_params(ctx.method, error)
            raise MCPError(INVALID_PARAMS, message, {"problems": problems}) from None


def explain_invalid_params(server: FastMCP) -> FastMCP:
    """Put :class:`ExplainInvalidParams` in front of ``server``'s mcp middleware; returns ``server``."""
    server._mcp_server.middleware.insert(0, ExplainInvalidParams())
    return server
