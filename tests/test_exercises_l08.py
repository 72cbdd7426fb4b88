"""mcp_teach.exercises.l08: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

As for lesson 03, the right answers are not retyped: each test runs the code of the exercise's solution cell in
``notebooks/solutions/08_lowlevel_server.ipynb`` (top-level ``await`` included), in a namespace holding what the
lesson defined before it, so the lesson and its checks cannot drift apart. Wrong answers are the solution's
namespace with one thing broken.
"""

from __future__ import annotations

import json
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


def test_08_1_fastmcp_is_not_a_low_level_server(solved) -> None:
    namespace = {**solved["08.1"], "power_server": FastMCP("power")}
    failed_with("08.1", namespace, "power_server", "from mcp.server.lowlevel")


def test_08_1_a_schema_without_the_cross_argument_rule_fails(solved) -> None:
    namespace = solved["08.1"]
    plain = {key: value for key, value in namespace["POWER_SCHEMA"].items() if key not in ("if", "then")}
    tool = types.Tool(name="calculator_power", description="a ** b", input_schema=plain)
    server = _server_with(tool, namespace["power"])
    message = failed_with("08.1", {**namespace, "power_server": server}, "{'a': -8, 'b': 0.5}", "'if'")
    assert "expected rejects, found 'accepts'" in message


def test_08_1_a_handler_that_trusts_the_schema_fails(solved) -> None:
    namespace = solved["08.1"]

    def trusting(arguments):  # the SDK does not validate arguments: "10" reaches this line
        value = float(arguments["a"]) ** float(arguments["b"])
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(value))])

    server = _server_with(namespace["POWER_TOOL"], trusting)
    message = failed_with("08.1", {**namespace, "power_server": server}, "calculator_power {'a': 2, 'b': '10'}")
    assert "isError true" in message


def test_08_1_a_handler_that_raises_fails(solved) -> None:
    namespace = solved["08.1"]

    def raising(arguments):
        if not isinstance(arguments.get("b"), int | float) or isinstance(arguments.get("b"), bool):
            raise ValueError("b must be a number")
        return namespace["power"](arguments)

    server = _server_with(namespace["POWER_TOOL"], raising)
    message = failed_with("08.1", {**namespace, "power_server": server}, "a tool result", "MCPError")
    assert "is_error=True" in message


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


def test_08_2_fastmcp_is_not_a_low_level_server(solved) -> None:
    failed_with("08.2", {"structured_server": build_calculator_server()}, "structured_server", "mcp.server.lowlevel")


def test_08_2_the_plain_calculator_declares_no_output_schema(solved) -> None:
    server = build_lowlevel_calculator()
    failed_with(
        "08.2", {"structured_server": server}, "the outputSchema of calculator_divide (2026-07-28)", "model_copy"
    )


def test_08_2_a_bare_number_schema_fails(solved) -> None:
    server = _structured({"type": "number"}, lambda value: value)
    message = failed_with("08.2", {"structured_server": server}, '"type": "object"', "an object with one number")
    assert "(2026-07-28)" in message


def test_08_2_structured_content_that_breaks_the_schema_fails(solved) -> None:
    server = _structured(OBJECT, lambda value: {"value": value})
    message = failed_with("08.2", {"structured_server": server}, "against your outputSchema", "structured_content")
    assert "'result' is a required property" in message


def test_08_2_another_shape_than_fastmcp_fails(solved) -> None:
    schema = {"type": "object", "properties": {"quotient": {"type": "number"}}, "required": ["quotient"]}
    server = _structured(schema, lambda value: {"quotient": value})
    failed_with("08.2", {"structured_server": server}, "against fastmcp's", "{'result': value}")


# 08.3 --------------------------------------------------------------------------------------------------------


def test_08_3_the_broken_package_fails(solved) -> None:
    failed_with("08.3", {"fixed_files": demo_files("calc", fixed=False)}, "tools.py", "calc/registry.py")


def test_08_3_a_fix_without_the_serving_block_fails(solved) -> None:
    files = dict(solved["08.3"]["fixed_files"])
    files["main.py"] = files["main.py"].split('\nif __name__ == "__main__":')[0]
    failed_with("08.3", {"fixed_files": files}, "python -m calc.main with your files", "answered nothing")


def test_08_3_registering_into_another_dict_fails(solved) -> None:
    files = dict(solved["08.3"]["fixed_files"])
    files["tools.py"] = files["tools.py"].replace(
        "from calc.registry import register_tool", "def register_tool(fn):\n    return fn"
    )
    message = failed_with("08.3", {"fixed_files": files}, "the tools python -m calc.main lists", "one registry module")
    assert "['add', 'subtract']" in message
