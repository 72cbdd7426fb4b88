"""Lesson 08's exercises (the low-level server): what each one expects, for the check cells ``check("08.k")``.

- 08.1: ``power_server``, a low-level ``Server`` with a fifth tool, ``calculator_power``: a hand-written input
  schema that says one rule across both arguments (``if``/``then``: a negative base needs a whole exponent) and a
  handler that checks everything itself, including what no schema can say (the result must be finite). The
  check connects to the student's server object itself and also reads their capture ``power_capture``;
- 08.2: the fields fastmcp adds, read by the student from two captures of their own (2025-11-25 era) and
  compared with what the check computes from the same captures;
- 08.3: the double-import trap fixed: the check runs the student's package for real with ``python -m``.

The checks are synchronous; those that talk to a server run their client with :func:`run_sync`.
"""

from __future__ import annotations

import math
from typing import Any

from jsonschema import Draft202012Validator, SchemaError
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.exercises.answers import capture_answer, listed_tools, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.lessons.l03_errors import attempt
from mcp_teach.lessons.l08_connect import LowLevelMemoryTransport
from mcp_teach.lessons.l08_double_import import run_package
from mcp_teach.lessons.l08_schema_limits import verdict
from mcp_teach.servers.lowlevel_calculator import SERVER_NAME as LOWLEVEL_NAME
from mcp_teach.servers.lowlevel_calculator import TOOLS as LOWLEVEL_TOOLS
from mcp_teach.wire.messages import CLIENT_TO_SERVER, Capture

POWER = "calculator_power"
#: (arguments, accepted by the schema?) — what 08.1's input schema must say, as a client's validator reads it.
POWER_SCHEMA_CASES: tuple[tuple[dict[str, Any], bool], ...] = (
    ({"a": 2, "b": 10}, True),
    ({"a": 2, "b": 0.5}, True),
    ({"a": -8, "b": 3}, True),
    ({"a": -8, "b": 0.5}, False),
    ({"a": 2}, False),
    ({"a": "2", "b": 10}, False),
    ({"a": 2, "b": 10, "c": 1}, False),
)
#: (arguments, the number the text must hold, or None: a tool error) — what 08.1's handler must answer.
POWER_CALLS: tuple[tuple[dict[str, Any], float | None], ...] = (
    ({"a": 2, "b": 10}, 1024.0),
    ({"a": -8, "b": 3}, -512.0),
    ({"a": 9, "b": 0.5}, 3.0),
    ({"a": 2, "b": "10"}, None),
    ({"a": -8, "b": 0.5}, None),
    ({"a": 0, "b": -1}, None),
    ({"a": 10, "b": 400}, None),
    ({"a": 2}, None),
)


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


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
        return f"{type(outcome).__name__}: {outcome}"
    return f"isError {outcome.is_error}, text {_text(outcome)!r}"


@exercise("08.1", answers=("power_server", "power_capture"))
def power_tool(check: Checker, power_server: Any, power_capture: Any) -> None:
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
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        check.fail(
            "the inputSchema of calculator_power",
            "a valid JSON Schema 2020-12 (2026-07-28, server/tools: inputSchema MUST be a valid JSON Schema object)",
            error.message,
            "write it as a dict of JSON Schema keywords: type, properties, required, if/then",
        )
    for arguments, accepted in POWER_SCHEMA_CASES:
        said = verdict(schema, arguments)
        check.true(
            said.startswith("accepts") == accepted,
            f"what calculator_power's inputSchema says about {arguments}",
            expected="accepts" if accepted else "rejects",
            found=said,
            hint="a negative base needs a whole exponent: 'if': {a below 0}, 'then': {b of type integer}; "
            "keep type number, required and additionalProperties false"
            if arguments == {"a": -8, "b": 0.5} or arguments == {"a": -8, "b": 3}
            else "both a and b numbers, both required, nothing else allowed",
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
            value = float(_text(outcome))
        except ValueError:
            value = math.nan
        check.true(
            not outcome.is_error and value == expected,
            what,
            expected=f"isError false and the text {expected!r}",
            found=_said(outcome),
            hint="answer with the number as text, e.g. json.dumps(float(a) ** float(b))",
        )
    add = probe["add"]
    check.true(
        not isinstance(add, BaseException) and _text(add) == "3.0",
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
    capture = capture_answer(
        check, power_capture, "power_capture", "power_capture = CaptureTransport(LowLevelMemoryTransport(power_server))"
    )
    listed = [tool.get("name") for tool in listed_tools(capture)]
    check.contains(listed, POWER, "the tools listed in power_capture", hint="call client.list_tools() on it")
    calls = [
        capture.response_to(request)
        for request in capture.requests("tools/call")
        if request.message.get("params", {}).get("name") == POWER
    ]
    check.true(
        any(reply is not None and "result" in reply.message for reply in calls),
        "the calculator_power calls in power_capture",
        expected="at least one tools/call of calculator_power with a result",
        found=[reply.message if reply else None for reply in calls],
        hint="call client.call_tool('calculator_power', {'a': 2, 'b': 10}) on the captured connection",
    )
    print(
        f"power_server lists {len(names)} tools; calculator_power's schema refuses -8 ** 0.5 by itself; "
        f"the handler answers 2 ** 10 = 1024.0 and refuses {sum(e is None for _, e in POWER_CALLS)} bad calls "
        "with isError; calculator_add and the unknown tool behave as before"
    )


def _opening(capture: Capture) -> str | None:
    return next((w.method for w in capture if w.direction == CLIENT_TO_SERVER and w.method), None)


def _server_name(capture: Capture) -> str | None:
    for request in capture.requests("initialize"):
        reply = capture.response_to(request)
        if reply is not None:
            return reply.message.get("result", {}).get("serverInfo", {}).get("name")
    return None


def _first_result(capture: Capture, method: str, name: str | None = None) -> dict[str, Any] | None:
    for request in capture.requests(method):
        if name is not None and request.message.get("params", {}).get("name") != name:
            continue
        reply = capture.response_to(request)
        if reply is not None and "result" in reply.message:
            return reply.message["result"]
    return None


def _keys_only_in_first(first: Any, second: Any) -> set[str]:
    return set(first) - set(second)


@exercise("08.2", answers=("fast_capture", "low_capture", "tool_keys", "result_keys"))
def what_fastmcp_adds(check: Checker, fast_capture: Any, low_capture: Any, tool_keys: Any, result_keys: Any) -> None:
    captures = {}
    for name, source, server in (
        ("fast_capture", fast_capture, "mcp-teach-calculator"),
        ("low_capture", low_capture, LOWLEVEL_NAME),
    ):
        capture = capture_answer(
            check,
            source,
            name,
            f"{name} = CaptureTransport(...), then connect teaching_client(..., mode='legacy') to it",
        )
        check.equal(
            _opening(capture),
            "initialize",
            f"the first request in {name}",
            hint="open the connection in the 2025-11-25 era: teaching_client(capture, mode='legacy')",
        )
        check.equal(
            _server_name(capture),
            server,
            f"the serverInfo.name that answered in {name}",
            hint="fast_capture: CaptureTransport(build_calculator_server()); "
            "low_capture: CaptureTransport(LowLevelMemoryTransport())",
        )
        listed = _first_result(capture, "tools/list")
        divided = _first_result(capture, "tools/call", "calculator_divide")
        check.true(
            listed is not None and divided is not None,
            f"the answers in {name}",
            expected="a tools/list result and a result of tools/call calculator_divide",
            found=capture.methods(),
            hint="await client.list_tools(), then await client.call_tool('calculator_divide', {'a': 1, 'b': 4})",
        )
        captures[name] = (listed, divided)
    (fast_list, fast_call), (low_list, low_call) = captures["fast_capture"], captures["low_capture"]
    expected_tool_keys: set[str] = set()
    for fast_tool, low_tool in zip(fast_list["tools"], low_list["tools"], strict=False):
        expected_tool_keys |= _keys_only_in_first(fast_tool, low_tool)
    expected_result_keys = _keys_only_in_first(fast_call, low_call)
    check.equal(
        set(tool_keys) if isinstance(tool_keys, set | frozenset | list | tuple) else tool_keys,
        expected_tool_keys,
        "tool_keys: the keys of a tool definition that only fastmcp sends",
        hint="compare the keys of each tool dict in the two tools/list results: "
        "set(fast_tool) - set(low_tool); keys only, not what is inside inputSchema",
    )
    check.equal(
        set(result_keys) if isinstance(result_keys, set | frozenset | list | tuple) else result_keys,
        expected_result_keys,
        "result_keys: the keys of the calculator_divide result that only fastmcp sends",
        hint="compare the keys of the two tools/call results (message['result'])",
    )
    print(
        f"only fastmcp's tool definitions carry {sorted(expected_tool_keys)}; "
        f"only its tools/call result carries {sorted(expected_result_keys)} (2025-11-25 era)"
    )


@exercise("08.3", answers=("fixed_files",))
def fixed_registry(check: Checker, fixed_files: Any) -> None:
    check.instance(fixed_files, dict, "fixed_files", hint="a dict: file name -> the file's text")
    for name in ("main.py", "tools.py"):
        check.contains(fixed_files, name, "the files of your package", hint=f"keep {name}, changed as needed")
    check.true(
        "calc.main" not in fixed_files["tools.py"],
        "tools.py",
        expected="no import from calc.main: under python -m that loads main.py a second time",
        found=fixed_files["tools.py"],
        hint="import register_tool from a module of its own, e.g. calc/registry.py",
    )
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
        raise
    check.equal(
        run.main_loaded_as,
        ["__main__"],
        "the module objects main.py was loaded as",
        hint="nothing may import calc.main while it runs as __main__",
    )
    check.equal(
        sorted(run.listed),
        ["add", "multiply", "subtract"],
        "the tools python -m calc.main lists",
        hint="every module must register into the same TOOLS: one registry module that main.py and tools.py "
        "both import",
    )
    print(f"python -m calc.main: main.py loaded once, tools/list answers {', '.join(run.listed)}")
