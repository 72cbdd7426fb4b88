"""Lesson 08's exercises (the low-level server): what each one expects, for the check cells ``check("08.k")``.

- 08.1: ``power_server``, a low-level ``Server`` with a fifth tool, ``calculator_power``: a hand-written input
  schema with one rule across both arguments (``if``/``then``: a negative base needs a whole exponent) and a
  handler that checks everything itself, including what no schema can say (the result must be finite). The
  check validates arguments against the listed schema, as a client would, and calls the student's server;
- 08.2: ``structured_server``, the calculator whose ``calculator_divide`` declares an ``outputSchema`` and keeps it
  with ``structuredContent``, checked in both eras against the schema and against fastmcp's own answer;
- 08.3: the double-import trap fixed: the check runs the student's package for real with ``python -m``.

The checks are synchronous; those that talk to a server run their client with :func:`run_sync`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from jsonschema import Draft202012Validator, SchemaError
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.display.call_outcomes import attempt
from mcp_teach.exercises.answers import replies, result_text, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker, described
from mcp_teach.exercises.language import say
from mcp_teach.lessons.l08_connect import LowLevelMemoryTransport
from mcp_teach.lessons.l08_double_import import run_package
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.servers.lowlevel_calculator import TOOLS as LOWLEVEL_TOOLS
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture

POWER = "calculator_power"
#: (arguments, accepted by the schema?) — what 08.1's input schema must say, as a client's validator reads it.
POWER_SCHEMA_CASES: tuple[tuple[dict[str, Any], bool], ...] = (
    ({"a": 2, "b": 10}, True),
    ({"a": 2, "b": 0.5}, True),
    ({"a": -8, "b": 3}, True),
    ({"a": -8, "b": 0.5}, False),
    ({"a": 0, "b": 0.5}, True),  # 0 is no negative base
    ({"a": 2}, False),
    ({"a": "2", "b": 10}, False),
    ({"a": 2, "b": 10, "c": 1}, False),
)
#: What a schema that misjudges a case of POWER_SCHEMA_CASES gets wrong, by the case's base ``a``.
SCHEMA_HINTS = {
    -8: "a negative base needs a whole exponent: 'if': {a below 0}, 'then': {b of type integer}; "
    "keep type number, required and additionalProperties false",
    0: "0 is no negative base: the 'if' must hold for a below 0 only",
}
#: (arguments, the number the text must hold, or None: a tool error) — what 08.1's handler must answer.
POWER_CALLS: tuple[tuple[dict[str, Any], float | None], ...] = (
    ({"a": 2, "b": 10}, 1024.0),
    ({"a": -2, "b": -3}, -0.125),  # a negative base or exponent is fine with a whole exponent
    ({"a": 0, "b": 0.5}, 0.0),  # 0 is no negative base
    ({"a": 2, "b": "10"}, None),
    ({"a": True, "b": 10}, None),  # JSON true is no number, though Python's bool is an int
    ({"a": -8, "b": 0.5}, None),
    ({"a": 0, "b": -1}, None),
    ({"a": 10, "b": 400}, None),
    ({"a": 2}, None),
)


def verdict(schema: dict[str, Any], arguments: Any) -> str:
    """What a JSON Schema 2020-12 validator says about ``arguments``: ``accepts`` or ``rejects (why)``."""
    errors = list(Draft202012Validator(schema).iter_errors(arguments))
    return f"rejects ({errors[0].message})" if errors else "accepts"


def _schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema 2020-12 object (``None``: it is)."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return error.message
    return None if isinstance(schema, dict) else f"{type(schema).__name__}, not an object"


async def _probe_power_server(server: Server[Any]) -> dict[str, Any]:
    """List the tools of ``server`` and make the calls 08.1 checks, in memory; results or exceptions."""
    async with teaching_client(LowLevelMemoryTransport(server)) as client:
        tools = await attempt(client.list_tools())
        calls = [
            await attempt(client.call_tool(POWER, arguments, raise_on_error=False)) for arguments, _ in POWER_CALLS
        ]
        add = await attempt(client.call_tool("calculator_add", {"a": 1, "b": 2}, raise_on_error=False))
        unknown = await attempt(client.call_tool("calculator_root", {"a": 1, "b": 2}, raise_on_error=False))
    return {"tools": tools, "calls": calls, "add": add, "unknown": unknown}


def _said(outcome: Any) -> str:
    if isinstance(outcome, BaseException):
        return described(outcome)
    return f"isError {outcome.is_error}, text {result_text(outcome)!r}"


@exercise("08.1", answers=("power_server",))
def power_tool(check: Checker, power_server: Any) -> None:
    check.instance(
        power_server,
        Server,
        "power_server",
        hint="power_server = Server('...', on_list_tools=..., on_call_tool=...) from mcp.server.lowlevel "
        "(not FastMCP: everything by hand)",
    )
    probe = run_sync(_probe_power_server(power_server))
    tools = probe["tools"]
    check.true(
        isinstance(tools, list),
        "tools/list on power_server",
        expected="a list of tools",
        found=tools,
        hint="pass on_list_tools=an async function (ctx, params) returning types.ListToolsResult(tools=[...])",
    )
    names = [tool.name for tool in tools]
    check.equal(
        names,
        [*LOWLEVEL_TOOLS, POWER],
        "the tool names power_server lists",
        hint="list the calculator's four tools (tool_definitions()) and then calculator_power",
    )
    schema = tools[-1].input_schema
    problem = _schema_problem(schema)
    if problem is not None:
        check.fail(
            "the inputSchema of calculator_power",
            "a valid JSON Schema 2020-12 (2026-07-28, server/tools: inputSchema MUST be a valid JSON Schema object)",
            problem,
            "write it as a dict of JSON Schema keywords: type, properties, required, if/then",
        )
    for arguments, accepted in POWER_SCHEMA_CASES:
        said = verdict(schema, arguments)
        check.true(
            said.startswith("accepts") == accepted,
            f"what calculator_power's inputSchema says about {arguments}",
            expected="accepts" if accepted else "rejects",
            found=said,
            hint=SCHEMA_HINTS.get(arguments.get("a"))
            or ("a and b may be any numbers, fractions too, unless the base is negative" if accepted else None)
            or "both a and b numbers, both required, nothing else allowed",
        )
    for (arguments, expected), outcome in zip(POWER_CALLS, probe["calls"], strict=True):
        what = f"power_server's answer to calculator_power {arguments}"
        check.true(
            not isinstance(outcome, BaseException),
            what,
            expected="a tool result" + (" with isError true" if expected is None else ""),
            found=_said(outcome),
            hint="return types.CallToolResult(..., is_error=True) for bad input: an exception in the handler "
            "becomes a JSON-RPC error (-32603 in 2026-07-28), which the model is less likely to recover from",
        )
        if expected is None:
            check.true(
                outcome.is_error,
                what,
                expected="isError true: the handler checks this itself, the SDK does not validate arguments",
                found=_said(outcome),
                hint="check types (a number, not a string or a bool), the missing argument, a negative base with a "
                "fractional exponent, 0 to a negative power, and a result that is not finite",
            )
            continue
        try:
            value = float(result_text(outcome))
        except ValueError:
            value = math.nan
        check.true(
            not outcome.is_error and value == expected,
            what,
            expected=f"isError false and the text {expected!r}",
            found=_said(outcome),
            hint="this call has a real, finite answer: refuse only a base below 0 with a fractional exponent and 0 "
            "to a negative power"
            if outcome.is_error
            else "answer with the number as text, e.g. json.dumps(float(a) ** float(b))",
        )
    add = probe["add"]
    check.true(
        not isinstance(add, BaseException) and result_text(add) == "3.0",
        "power_server's answer to calculator_add {'a': 1, 'b': 2}",
        expected="'3.0', as before",
        found=_said(add),
        hint="hand every other name to the calculator's own calculate(name, arguments)",
    )
    unknown = probe["unknown"]
    check.true(
        isinstance(unknown, MCPError) and unknown.error.code == -32602,
        "power_server's answer to an unknown tool",
        expected="JSON-RPC error -32602 (2026-07-28, server/tools, Error Handling)",
        found=_said(unknown),
        hint="calculate(name, arguments) raises MCPError(-32602) for an unknown name: let it through",
    )
    refused = sum(expected is None for _, expected in POWER_CALLS)
    say(f"power_server: 5 tools; the schema refuses (-8) ** 0.5; 2 ** 10 = 1024.0; {refused} bad calls get isError")


DIVIDE = "calculator_divide"
REQUIRED_NUMBER = "give result its type under properties, and list it in required"
ONLY_DIVIDE = "only calculator_divide's entry changes: a tool that declares one MUST answer with structuredContent"
#: The calls 08.2's check makes after tools/list: (arguments, what the result must be).
STRUCTURED_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    (DIVIDE, {"a": 1, "b": 4}),
    (DIVIDE, {"a": 1, "b": 0}),
    ("calculator_add", {"a": 1, "b": 2}),
)


async def _session(target: Any, mode: str) -> Capture:
    """tools/list and :data:`STRUCTURED_CALLS` on ``target`` in one era, captured; failures are left to the wire."""
    capture = CaptureTransport(target)
    async with teaching_client(capture, mode=mode) as client:
        await attempt(client.list_tools())
        for tool, arguments in STRUCTURED_CALLS:
            await attempt(client.call_tool(tool, arguments, raise_on_error=False))
    return capture.capture


def _structured_checks(check: Checker, server: Server[Any], mode: str, era: str) -> dict[str, Any]:
    capture = run_sync(_session(LowLevelMemoryTransport(server), mode))
    listed = (replies(capture, "tools/list") or [None])[0]
    tools = (listed or {}).get("result", {}).get("tools")
    check.true(
        isinstance(tools, list),
        f"the answer of structured_server to tools/list ({era})",
        expected="a result listing tools",
        found=listed,
        hint="on_list_tools returns types.ListToolsResult(tools=[...])",
    )
    names = [tool.get("name") for tool in tools]
    check.equal(names, list(LOWLEVEL_TOOLS), f"the tools structured_server lists ({era})", hint="all four, by name")
    divide = tools[names.index(DIVIDE)]
    schema = divide.get("outputSchema")
    check.true(
        schema is not None,
        f"the outputSchema of calculator_divide ({era})",
        expected="an outputSchema in its tools/list entry",
        found=divide,
        hint="tool.model_copy(update={'output_schema': ...}) for calculator_divide in on_list_tools",
    )
    problem = _schema_problem(schema)
    check.true(
        problem is None and schema.get("type") == "object",
        f"the outputSchema of calculator_divide ({era})",
        expected='a valid JSON Schema whose root is "type": "object" (2025-11-25 allows no other root)',
        found=problem or schema,
        hint='an object with one number: {"type": "object", "properties": {"result": {"type": "number"}}}',
    )
    accepted = [instance for instance in ({}, {"result": "0.25"}) if verdict(schema, instance) == "accepts"]
    check.equal(
        accepted, [], f"what your outputSchema wrongly accepts: no result, or a text ({era})", hint=REQUIRED_NUMBER
    )
    declaring = [tool.get("name") for tool in tools if tool.get("outputSchema") and tool.get("name") != DIVIDE]
    check.equal(declaring, [], f"the other tools that declare an outputSchema ({era})", hint=ONLY_DIVIDE)
    good, zero, add = (replies(capture, "tools/call") + [None] * 3)[:3]
    result = (good or {}).get("result")
    check.true(
        result is not None and not result.get("isError"),
        f"the answer to calculator_divide {{'a': 1, 'b': 4}} ({era})",
        expected="a result with isError false",
        found=good,
        hint="return what calculate(name, arguments) returns, with structured_content set on it",
    )
    structured = result.get("structuredContent")
    said = "no structuredContent" if structured is None else verdict(schema, structured)
    check.true(
        said == "accepts",
        f"the structuredContent of calculator_divide {{'a': 1, 'b': 4}} against your outputSchema ({era})",
        expected="structuredContent that conforms (2026-07-28, server/tools, Output Schema: servers MUST)",
        found="the result has no structuredContent" if structured is None else f"{structured!r}: the schema {said}",
        hint="result.structured_content = {'result': ...} when the call succeeded",
    )
    check.equal(
        result_text(result),
        "0.25",
        f"the text of calculator_divide {{'a': 1, 'b': 4}} ({era})",
        hint="keep the text block",
    )
    for reply, what, expected in ((zero, "calculator_divide {'a': 1, 'b': 0}", True), (add, "calculator_add", False)):
        outcome = (reply or {}).get("result", {})
        check.true(
            outcome.get("isError", False) is expected and bool(outcome.get("content")),
            f"the answer to {what} ({era})",
            expected=f"a result with isError {str(expected).lower()}, as the calculator answers it",
            found=reply,
            hint="leave every other answer to calculate(name, arguments); set structured_content only on success",
        )
    return structured


@exercise("08.2", answers=("structured_server",))
def output_schema_kept(check: Checker, structured_server: Any) -> None:
    check.instance(
        structured_server,
        Server,
        "structured_server",
        hint="structured_server = Server('...', on_list_tools=..., on_call_tool=...) from mcp.server.lowlevel",
    )
    for mode, era in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
        structured = _structured_checks(check, structured_server, mode, era)
        theirs = run_sync(_session(build_calculator_server(), mode))
        fastmcp = replies(theirs, "tools/call")[0]["result"]["structuredContent"]
        check.equal(
            structured,
            fastmcp,
            f"your structuredContent for 1 / 4 against fastmcp's ({era})",
            hint="fastmcp wraps a bare value as {'result': value}",
        )
    say(f"structured_server: calculator_divide keeps an object outputSchema with {structured}, in both eras")


@exercise("08.3", answers=("fixed_files",))
def fixed_registry(check: Checker, fixed_files: Any) -> None:
    check.instance(fixed_files, dict, "fixed_files", hint="a dict: file name -> the file's text")
    for name in ("main.py", "tools.py"):
        check.contains(fixed_files, name, "the files of your package", hint=f"keep {name}, changed as needed")
    check.true(
        not re.search(r"^\s*(from|import)\b.*\bmain\b", fixed_files["tools.py"], re.MULTILINE),
        "tools.py",
        expected="no import of main.py: under python -m that loads main.py a second time",
        found=fixed_files["tools.py"],
        hint="import register_tool from a module of its own, e.g. calc/registry.py",
    )
    check.contains(fixed_files, "registry.py", "the files of your package", hint="the registry moves to registry.py")
    files = {"__init__.py": "", **fixed_files}
    try:
        run = run_sync(run_package(files, "calc", "your fix"))
    except (RuntimeError, ValueError) as error:
        check.fail(
            "python -m calc.main with your files",
            "a server that answers tools/list",
            str(error),
            "keep main.py's serve() and its if __name__ == '__main__' block; run your files with "
            "await run_package(fixed_files, 'calc') to see what happens",
        )
    check.equal(
        run.main_loaded_as,
        ["__main__"],
        "the module objects main.py was loaded as",
        hint="nothing may import calc.main while it runs as __main__",
    )
    check.equal(
        sorted(run.listed),
        ["add", "subtract"],
        "the tools python -m calc.main lists",
        hint="every module must register into the same TOOLS: one registry module that main.py and tools.py "
        "both import",
    )
    say(f"python -m calc.main: main.py loaded once, tools/list answers {', '.join(run.listed)}")
