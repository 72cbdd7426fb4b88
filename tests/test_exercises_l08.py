"""mcp_teach.exercises.l08: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

As for lesson 03, the right answers are not retyped: each test runs the code of the exercise's solution cell in
``notebooks/solutions/08_lowlevel_server.ipynb`` (top-level ``await`` included), in a namespace holding what the
lesson defined before it, so the lesson and its checks cannot drift apart. Wrong answers are the solution's
namespace with one thing broken.
"""

from __future__ import annotations

import json
import math
from typing import Any

import mcp_types as types
import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with, passed
from fastmcp import FastMCP
from mcp.server.lowlevel import Server

from mcp_teach.client import teaching_client
from mcp_teach.exercises import check
from mcp_teach.lessons.l08_connect import LowLevelMemoryTransport
from mcp_teach.lessons.l08_double_import import demo_files
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.servers.lowlevel_calculator import build_lowlevel_calculator, calculate, text_result, tool_definitions
from mcp_teach.wire.capture import CaptureTransport

#: What the lesson has defined by the time its exercises start (the names their solution cells use).
LESSON = SolvedLesson(
    "08_lowlevel_server.ipynb",
    {
        "CaptureTransport": CaptureTransport,
        "LowLevelMemoryTransport": LowLevelMemoryTransport,
        "Server": Server,
        "calculate": calculate,
        "demo_files": demo_files,
        "json": json,
        "teaching_client": teaching_client,
        "text_result": text_result,
        "tool_definitions": tool_definitions,
        "types": types,
    },
)
run_solution = LESSON.run_solution
IDS = ["08.1", "08.2", "08.3"]


@pytest.fixture(scope="module")
def solved(request) -> dict[str, dict[str, Any]]:
    """Each exercise's solution cell, run once for the module."""
    import asyncio

    return {exercise_id: asyncio.run(run_solution(exercise_id)) for exercise_id in IDS}


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    LESSON.assert_answers_defined_nowhere_else()


@pytest.mark.parametrize("exercise_id", IDS)
def test_the_lesson_solution_passes(solved, exercise_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    check(exercise_id, solved[exercise_id])
    out = passed(capsys, exercise_id)
    assert {
        "08.1": "6 bad calls get isError",
        "08.2": "{'result': 0.25}, in both eras",
        "08.3": "main.py loaded once",
    }[exercise_id] in out


# 08.1 --------------------------------------------------------------------------------------------------------


def _server_with(power_tool: types.Tool, power: Any) -> Server[Any]:
    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[*tool_definitions(), power_tool])

    async def call_tool(ctx, params):
        if params.name == "calculator_power":
            return power(params.arguments)
        return calculate(params.name, params.arguments)

    return Server("power", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.mark.wrong_answer("08.1")
def test_08_1_fastmcp_is_not_a_low_level_server(solved) -> None:
    namespace = {**solved["08.1"], "power_server": FastMCP("power")}
    failed_with("08.1", namespace, "power_server", "from mcp.server.lowlevel")


@pytest.mark.wrong_answer("08.1")
def test_08_1_a_schema_without_the_cross_argument_rule_fails(solved) -> None:
    namespace = solved["08.1"]
    plain = {key: value for key, value in namespace["POWER_SCHEMA"].items() if key not in ("if", "then")}
    tool = types.Tool(name="calculator_power", description="a ** b", input_schema=plain)
    server = _server_with(tool, namespace["power"])
    message = failed_with("08.1", {**namespace, "power_server": server}, "{'a': -8, 'b': 0.5}", "'if'")
    assert "expected rejects, found 'accepts'" in message


@pytest.mark.wrong_answer("08.1")
def test_08_1_a_handler_that_trusts_the_schema_fails(solved) -> None:
    namespace = solved["08.1"]

    def trusting(arguments):  # the SDK does not validate arguments: "10" reaches this line
        value = float(arguments["a"]) ** float(arguments["b"])
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(value))])

    server = _server_with(namespace["POWER_TOOL"], trusting)
    message = failed_with("08.1", {**namespace, "power_server": server}, "calculator_power {'a': 2, 'b': '10'}")
    assert "isError true" in message


@pytest.mark.wrong_answer("08.1")
def test_08_1_a_handler_that_raises_fails(solved) -> None:
    namespace = solved["08.1"]

    def raising(arguments):
        if not isinstance(arguments.get("b"), int | float) or isinstance(arguments.get("b"), bool):
            raise ValueError("b must be a number")
        return namespace["power"](arguments)

    server = _server_with(namespace["POWER_TOOL"], raising)
    message = failed_with("08.1", {**namespace, "power_server": server}, "a tool result", "MCPError")
    assert "is_error=True" in message


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _power(
    *,
    is_number=_is_number,
    no_real_power=lambda a, b: a < 0 and not b.is_integer(),
    divides_by_zero=lambda a, b: a == 0 and b < 0,
    overflow_caught: bool = True,
):
    """08.1's handler as the task describes it, each rule replaceable by a student's version of it."""

    def power(arguments):
        given = arguments or {}
        if set(given) != {"a", "b"} or not all(is_number(given[key]) for key in ("a", "b")):
            return text_result("calculator_power takes exactly a and b, both numbers.", is_error=True)
        a, b = float(given["a"]), float(given["b"])
        if no_real_power(a, b) or divides_by_zero(a, b):
            return text_result("No real, finite answer for these numbers.", is_error=True)
        try:
            value = a**b
        except OverflowError:
            if not overflow_caught:
                raise
            value = math.inf
        if not math.isfinite(value):
            return text_result("The result is not a finite number.", is_error=True)
        return text_result(json.dumps(value))

    return power


def _schema(**changes: Any) -> dict[str, Any]:
    """08.1's input schema with keywords changed (a value of None drops the keyword)."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
        "additionalProperties": False,
        "if": {"properties": {"a": {"exclusiveMaximum": 0}}, "required": ["a"]},
        "then": {"properties": {"b": {"type": "integer"}}},
    }
    return {key: value for key, value in {**schema, **changes}.items() if value is not None}


def _power_server(
    schema: dict[str, Any] | None = None,
    power: Any = None,
    *,
    power_first: bool = False,
    unknown_as_tool_error: bool = False,
) -> Server[Any]:
    """A power server from ``_schema`` and ``_power``, listing calculator_power last, passing unknown names on."""
    tool = types.Tool(name="calculator_power", description="a ** b", input_schema=schema or _schema())
    handler, known = power or _power(), {definition.name for definition in tool_definitions()}

    async def list_tools(ctx, params):
        tools = [*tool_definitions(), tool]
        return types.ListToolsResult(tools=tools[-1:] + tools[:-1] if power_first else tools)

    async def call_tool(ctx, params):
        if params.name == "calculator_power":
            return handler(params.arguments)
        if unknown_as_tool_error and params.name not in known:
            return text_result(f"Unknown tool {params.name}.", is_error=True)
        return calculate(params.name, params.arguments)

    return Server("power", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


def test_08_1_the_reference_handler_and_schema_pass(capsys: pytest.CaptureFixture[str]) -> None:
    check("08.1", {"power_server": _power_server()})
    passed(capsys, "08.1")


#: 08.1's wrong answers: (the server, what the feedback must say).
WRONG_POWER_SERVERS = {
    "the-lessons-zero-base-rule": (
        lambda: _power_server(
            _schema(
                **{
                    "if": {"properties": {"a": {"const": 0}}},
                    "then": {"properties": {"b": {"exclusiveMinimum": 0}}},
                }
            )
        ),
        ("{'a': -8, 'b': 0.5}", "a negative base needs a whole exponent"),
    ),
    "zero-taken-for-negative-in-the-schema": (
        lambda: _power_server(_schema(**{"if": {"properties": {"a": {"maximum": 0}}, "required": ["a"]}})),
        ("{'a': 0, 'b': 0.5}", "0 is no negative base"),
    ),
    "exponent-always-whole": (
        lambda: _power_server(
            _schema(properties={"a": {"type": "number"}, "b": {"type": "integer"}}, **{"if": None, "then": None})
        ),
        ("{'a': 2, 'b': 0.5}", "fractions too"),
    ),
    "other-arguments-allowed": (
        lambda: _power_server(_schema(additionalProperties=None)),
        ("{'a': 2, 'b': 10, 'c': 1}", "nothing else allowed"),
    ),
    "power-listed-first": (
        lambda: _power_server(power_first=True),
        ("the tool names power_server lists", "and then calculator_power"),
    ),
    "a-bool-taken-for-a-number": (
        lambda: _power_server(power=_power(is_number=lambda value: isinstance(value, int | float))),
        ("{'a': True, 'b': 10}", "not a string or a bool"),
    ),
    "overflow-not-caught": (
        lambda: _power_server(power=_power(overflow_caught=False)),
        ("{'a': 10, 'b': 400}", "an exception in the handler becomes a JSON-RPC error"),
    ),
    "zero-base-refused-with-a-fraction": (
        lambda: _power_server(power=_power(no_real_power=lambda a, b: a <= 0 and not b.is_integer())),
        ("{'a': 0, 'b': 0.5}", "this call has a real, finite answer"),
    ),
    "every-negative-exponent-refused": (
        lambda: _power_server(power=_power(divides_by_zero=lambda a, b: b < 0)),
        ("{'a': -2, 'b': -3}", "this call has a real, finite answer"),
    ),
    "unknown-tool-as-a-tool-error": (
        lambda: _power_server(unknown_as_tool_error=True),
        ("an unknown tool", "-32602", "let it through"),
    ),
}


@pytest.mark.wrong_answer("08.1")
@pytest.mark.parametrize("mistake", list(WRONG_POWER_SERVERS))
def test_08_1_the_schema_boundaries_and_the_handlers_refusals_are_checked(mistake: str) -> None:
    build, fragments = WRONG_POWER_SERVERS[mistake]
    failed_with("08.1", {"power_server": build()}, *fragments)


# 08.2 --------------------------------------------------------------------------------------------------------


def _structured(output_schema: Any, structured: Any) -> Server[Any]:
    """A calculator whose calculator_divide declares ``output_schema`` and answers ``structured(value)``."""

    async def list_tools(ctx, params):
        tools = tool_definitions()
        return types.ListToolsResult(
            tools=[
                tool.model_copy(update={"output_schema": output_schema}) if tool.name == "calculator_divide" else tool
                for tool in tools
            ]
        )

    async def call_tool(ctx, params):
        result = calculate(params.name, params.arguments)
        if params.name == "calculator_divide" and not result.is_error:
            result.structured_content = structured(json.loads(result.content[0].text))
        return result

    return Server("structured", on_list_tools=list_tools, on_call_tool=call_tool)


OBJECT = {"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]}


@pytest.mark.wrong_answer("08.2")
def test_08_2_fastmcp_is_not_a_low_level_server(solved) -> None:
    failed_with("08.2", {"structured_server": build_calculator_server()}, "structured_server", "mcp.server.lowlevel")


@pytest.mark.wrong_answer("08.2")
def test_08_2_the_plain_calculator_declares_no_output_schema(solved) -> None:
    server = build_lowlevel_calculator()
    failed_with(
        "08.2", {"structured_server": server}, "the outputSchema of calculator_divide (2026-07-28)", "model_copy"
    )


@pytest.mark.wrong_answer("08.2")
def test_08_2_a_bare_number_schema_fails(solved) -> None:
    server = _structured({"type": "number"}, lambda value: value)
    message = failed_with("08.2", {"structured_server": server}, '"type": "object"', "an object with one number")
    assert "(2026-07-28)" in message


@pytest.mark.wrong_answer("08.2")
def test_08_2_structured_content_that_breaks_the_schema_fails(solved) -> None:
    server = _structured(OBJECT, lambda value: {"value": value})
    message = failed_with("08.2", {"structured_server": server}, "against your outputSchema", "structured_content")
    assert "'result' is a required property" in message


@pytest.mark.wrong_answer("08.2")
def test_08_2_another_shape_than_fastmcp_fails(solved) -> None:
    schema = {"type": "object", "properties": {"quotient": {"type": "number"}}, "required": ["quotient"]}
    server = _structured(schema, lambda value: {"quotient": value})
    failed_with("08.2", {"structured_server": server}, "against fastmcp's", "{'result': value}")


def _structured_server(
    *, declared_by_all: bool = False, on_errors_too: bool = False, text_as_json: bool = False
) -> Server[Any]:
    """The structured calculator of 08.2, right unless told to make one of these mistakes."""

    async def list_tools(ctx, params):
        return types.ListToolsResult(
            tools=[
                tool.model_copy(update={"output_schema": OBJECT})
                if declared_by_all or tool.name == "calculator_divide"
                else tool
                for tool in tool_definitions()
            ]
        )

    async def call_tool(ctx, params):
        result = calculate(params.name, params.arguments)
        if params.name == "calculator_divide" and (on_errors_too or not result.is_error):
            result.structured_content = {"result": json.loads(result.content[0].text)}
            if text_as_json:
                result.content = [types.TextContent(type="text", text=json.dumps(result.structured_content))]
        return result

    return Server("structured", on_list_tools=list_tools, on_call_tool=call_tool)


#: 08.2's wrong answers: (the server, what the feedback must say).
WRONG_STRUCTURED_SERVERS = {
    "result-not-required": (
        lambda: _structured({"type": "object", "properties": {"result": {"type": "number"}}}, lambda v: {"result": v}),
        ("wrongly accepts", "found [{}]", "list it in required"),
    ),
    "any-object": (
        lambda: _structured({"type": "object"}, lambda v: {"result": v}),
        ("wrongly accepts", "found [{}, {'result': '0.25'}]", "required"),
    ),
    "result-of-any-type": (
        lambda: _structured(
            {"type": "object", "properties": {"result": {}}, "required": ["result"]}, lambda v: {"result": str(v)}
        ),
        ("wrongly accepts", "found [{'result': '0.25'}]", "give result its type"),
    ),
    "every-tool-declares-it": (
        lambda: _structured_server(declared_by_all=True),
        ("the other tools that declare an outputSchema", "only calculator_divide's entry changes"),
    ),
    "structured-on-errors-too": (
        lambda: _structured_server(on_errors_too=True),
        ("calculator_divide {'a': 1, 'b': 0}", "set structured_content only on success"),
    ),
    "text-replaced-by-json": (
        lambda: _structured_server(text_as_json=True),
        ("the text of calculator_divide", "keep the text block"),
    ),
    "number-kept-as-text": (
        lambda: _structured(OBJECT, lambda value: {"result": str(value)}),
        ("against your outputSchema", "structured_content"),
    ),
}


def test_08_2_the_reference_server_passes(capsys: pytest.CaptureFixture[str]) -> None:
    check("08.2", {"structured_server": _structured_server()})
    passed(capsys, "08.2")


@pytest.mark.wrong_answer("08.2")
@pytest.mark.parametrize("mistake", list(WRONG_STRUCTURED_SERVERS))
def test_08_2_the_schema_the_other_tools_and_the_results_are_checked(mistake: str) -> None:
    build, fragments = WRONG_STRUCTURED_SERVERS[mistake]
    hint = failed_with("08.2", {"structured_server": build()}, *fragments).split("Hint:")[1]
    assert '"required": ["result"]' not in hint and "'required': ['result']" not in hint


# 08.3 --------------------------------------------------------------------------------------------------------


@pytest.mark.wrong_answer("08.3")
def test_08_3_the_broken_package_fails(solved) -> None:
    failed_with("08.3", {"fixed_files": demo_files("calc", fixed=False)}, "tools.py", "calc/registry.py")


@pytest.mark.wrong_answer("08.3")
def test_08_3_a_fix_without_the_serving_block_fails(solved) -> None:
    files = dict(solved["08.3"]["fixed_files"])
    files["main.py"] = files["main.py"].split('\nif __name__ == "__main__":')[0]
    failed_with("08.3", {"fixed_files": files}, "python -m calc.main with your files", "answered nothing")


@pytest.mark.wrong_answer("08.3")
def test_08_3_registering_into_another_dict_fails(solved) -> None:
    files = dict(solved["08.3"]["fixed_files"])
    files["tools.py"] = files["tools.py"].replace(
        "from calc.registry import register_tool", "def register_tool(fn):\n    return fn"
    )
    message = failed_with("08.3", {"fixed_files": files}, "the tools python -m calc.main lists", "one registry module")
    assert "['add', 'subtract']" in message


def _fixed_but(solved: dict[str, dict[str, Any]], mistake: str) -> dict[str, str]:
    """The lesson's fixed files with one mistake a student might make."""
    files = dict(solved["08.3"]["fixed_files"])
    broken = demo_files("calc", fixed=False)
    if mistake == "registry-py-missing":
        del files["registry.py"]
    if mistake == "tools-py-unchanged":
        files["tools.py"] = broken["tools.py"]
    if mistake == "relative-import-of-main":
        files["tools.py"] = files["tools.py"].replace("from calc.registry import", "from .main import")
    if mistake == "main-module-imported":
        files["tools.py"] = files["tools.py"].replace(
            "from calc.registry import register_tool", "from calc import main\n\nregister_tool = main.register_tool"
        )
    if mistake == "main-keeps-its-own-registry":
        files["main.py"] = broken["main.py"]
    return files


@pytest.mark.wrong_answer("08.3")
@pytest.mark.parametrize(
    ("mistake", "fragments"),
    [
        ("registry-py-missing", ("the files of your package", "registry.py")),
        ("tools-py-unchanged", ("tools.py", "no import of main.py")),
        ("relative-import-of-main", ("tools.py", "no import of main.py")),
        ("main-module-imported", ("tools.py", "no import of main.py")),
        ("main-keeps-its-own-registry", ("the tools python -m calc.main lists", "one registry module")),
    ],
)
def test_08_3_a_half_done_move_of_the_registry_fails(solved, mistake: str, fragments: tuple[str, ...]) -> None:
    hint = failed_with("08.3", {"fixed_files": _fixed_but(solved, mistake)}, *fragments).split("Hint:")[1]
    assert "from calc.registry import" not in hint
