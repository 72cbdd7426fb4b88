"""Lesson 08: what a tool's input schema can say, and the rule it cannot (JSON Schema 2020-12).

A rule on one argument fits in JSON Schema: the low-level calculator's ``calculator_divide`` says
``"b": {"type": "number", "not": {"const": 0}}``, and a client can check it before it calls. A rule across two
arguments does not: JSON Schema 2020-12 has no keyword that compares one value of the instance with another
(``if``/``then``, ``dependentSchemas`` and ``dependentRequired`` test whether a property is there or equals
a fixed value; ``$data`` references were a proposal, never part of the standard). "a * b must be a finite
number" is such a rule: each operand alone is a perfectly good number. Per-argument bounds cannot stand in
for it: ``|a|, |b| <= 1e154`` rules out every overflowing product, but also ``1e300 * 1e-300``, whose product
is 1, and it does not stop a quotient: ``1e154 / 1e-160`` stays inside the bounds and still overflows.

So the rule lives in the handler, and the server's answer is the only place it shows.
:func:`schema_limits` checks a few calls against the schema the server lists (with ``jsonschema``, as a
client would), against that per-argument workaround, and then sends them to the real server.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from mcp_teach.client import teaching_client
from mcp_teach.display.show import table
from mcp_teach.lessons.l08_connect import LowLevelMemoryTransport
from mcp_teach.wire.plain_text import PlainText

#: The largest operand magnitude for which no product of two operands can overflow (1e154² = 1e308).
BOUND = 1e154

#: (what it shows, tool, arguments).
CASES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("an ordinary call", "calculator_multiply", {"a": 2, "b": 3}),
    ("b = 0: a rule on one argument", "calculator_divide", {"a": 1, "b": 0}),
    ("a * b overflows: a rule across both", "calculator_multiply", {"a": 1e200, "b": 1e200}),
    ("a / b overflows: a rule across both", "calculator_divide", {"a": 1e300, "b": 1e-300}),
    ("a * b = 1: fine, but the operands are large", "calculator_multiply", {"a": 1e300, "b": 1e-300}),
    ("a / b overflows inside the bounds", "calculator_divide", {"a": 1e154, "b": 1e-160}),
)


def bounded(schema: dict[str, Any], bound: float = BOUND) -> dict[str, Any]:
    """``schema`` with ``-bound <= x <= bound`` on every numeric argument: the per-argument workaround."""
    result = copy.deepcopy(schema)
    for argument in result.get("properties", {}).values():
        if argument.get("type") == "number":
            argument.update(minimum=-bound, maximum=bound)
    return result


def verdict(schema: dict[str, Any], arguments: dict[str, Any]) -> str:
    """What a JSON Schema 2020-12 validator says about ``arguments``: ``accepts`` or ``rejects (where: why)``."""
    return _verdict(schema, arguments)


def verdicts(schema: dict[str, Any], cases: list[dict[str, Any]]) -> Any:
    """A table: each of ``cases`` (arguments) and what ``schema`` says about it, as a client's validator would."""
    Draft202012Validator.check_schema(schema)  # a schema that is not valid JSON Schema fails here, not silently
    return table(["arguments", "the schema says"], [[json.dumps(case), _verdict(schema, case)] for case in cases])


def _verdict(schema: dict[str, Any], arguments: dict[str, Any]) -> str:
    errors = sorted(Draft202012Validator(schema).iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return "accepts"
    where = ".".join(str(p) for p in errors[0].path) or "arguments"
    return f"rejects ({where}: {errors[0].message})"


@dataclass(frozen=True)
class LimitCase:
    what: str
    tool: str
    arguments: dict[str, Any]
    #: What the schema the server lists says about the arguments.
    listed_schema: str
    #: What the per-argument workaround (:func:`bounded`) says.
    bounded_schema: str
    #: The server's answer: ``isError`` and text.
    server: str
    is_error: bool


class SchemaLimits(PlainText):
    """The cases of :func:`schema_limits`, as a table."""

    def __init__(self, schemas: dict[str, dict[str, Any]], cases: list[LimitCase]) -> None:
        self.schemas = schemas
        self.cases = cases

    def table(self) -> Any:
        header = ["call", "arguments", "listed inputSchema", f"with |x| <= {BOUND:g}", "the server answers"]
        rows = [
            [c.what, f"{c.tool} {json.dumps(c.arguments)}", c.listed_schema, c.bounded_schema, c.server]
            for c in self.cases
        ]
        return table(header, rows)

    def text(self) -> str:
        return repr(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


async def schema_limits(target: Any = None) -> SchemaLimits:
    """Check :data:`CASES` against the listed input schemas, the bounded ones, and the real server's answers.

    ``target`` is what the client connects to (default: the low-level calculator in memory).
    """
    async with teaching_client(target if target is not None else LowLevelMemoryTransport()) as client:
        schemas = {tool.name: tool.input_schema for tool in await client.list_tools()}
        cases = []
        for what, tool, arguments in CASES:
            result = await client.call_tool(tool, arguments, raise_on_error=False)
            text = " ".join(getattr(block, "text", "") for block in result.content)
            cases.append(
                LimitCase(
                    what,
                    tool,
                    arguments,
                    _verdict(schemas[tool], arguments),
                    _verdict(bounded(schemas[tool]), arguments),
                    f"{'isError: ' if result.is_error else ''}{text}",
                    result.is_error,
                )
            )
    return SchemaLimits(schemas, cases)
