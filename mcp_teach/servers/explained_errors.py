"""Errors that say what to fix, for any FastMCP server of the course (the calculator, the knowledge base).

Three mistakes a student makes by hand, and what the server answers instead of the libraries' defaults:

- **wrong, missing or extra tool arguments**: a tool execution error (``isError: true``) with one short
  sentence per argument, not pydantic's report (:class:`ExplainingFastMCP`);
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
from fastmcp.tools import ToolResult
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


class ExplainingFastMCP(FastMCP):
    """A FastMCP server whose mistakes say what to fix: every course server is one.

    ``tools/call`` (the override of :meth:`call_tool`): wrong, missing or extra arguments come back as a short tool
    error, an unknown tool as JSON-RPC ``-32602`` "Unknown tool: ... This server has: ...". The specification puts
    the two apart (2025-11-25 and 2026-07-28, server/tools, Error Handling): an unknown tool is a protocol error;
    input validation errors are tool execution errors (``isError: true``), which a model can read and correct.
    Params that do not fit their method are explained by :class:`ExplainInvalidParams`, installed here.

    An override, not a fastmcp ``Middleware``: with a middleware, fastmcp runs its middleware chain on every call
    (about 1 % of a call's instructions, ``benchmarks/http_call_instructions.py``); the override costs a ``try``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mcp_server.middleware.insert(0, ExplainInvalidParams())

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> ToolResult:
        try:
            return await super().call_tool(name, arguments, **options)
        except NotFoundError:
            known = ", ".join(sorted(tool.name for tool in await self.list_tools()))
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {short_repr(name)}. This server has: {known}.") from None
        except ValidationError as error:
            if not isinstance(error.__cause__, PydanticValidationError):
                raise
            raise ToolError(explain_invalid_arguments(name, error.__cause__)) from error


def _field(location: tuple[Any, ...]) -> str:
    """``params.name`` or ``params``: pydantic's location, union branch names (``CallToolRequestParams``) dropped."""
    return ".".join(str(part) for part in location if not (isinstance(part, str) and part[:1].isupper()))


def describe_invalid_params(method: str, error: PydanticValidationError) -> tuple[str, list[dict[str, str]]]:
    """The sentence and the per-field list for ``error``, each problem once."""
    problems: dict[str, dict[str, str]] = {}
    for item in error.errors():
        where = _field(item["loc"])
        rule = item["msg"].removeprefix("Input ")  # "should be a valid string"
        said = "is missing" if item["type"] == "missing" else f"{rule} (got {short_repr(item['input'], 40)})"
        problems.setdefault(where, {"field": where, "problem": said})
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
