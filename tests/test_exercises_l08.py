"""mcp_teach.exercises.l08: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

As for lesson 03, the right answers are not retyped: each test runs the code of the exercise's solution cell in
``notebooks/solutions/08_lowlevel_server.ipynb`` (top-level ``await`` included), in a namespace holding what the
lesson defined before it, so the lesson and its checks cannot drift apart. Wrong answers are the solution's
namespace with one thing broken.
"""

from __future__ import annotations

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
from mcp_teach.servers.lowlevel_calculator import calculate, tool_definitions
from mcp_teach.wire.capture import CaptureTransport

#: What the lesson has defined by the time its exercises start (the names their solution cells use).
LESSON = SolvedLesson(
    "08_lowlevel_server.ipynb",
    {
        "CaptureTransport": CaptureTransport,
        "LowLevelMemoryTransport": LowLevelMemoryTransport,
        "demo_files": demo_files,
        "teaching_client": teaching_client,
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
        "08.1": "refuses 5 bad calls with isError",
        "08.2": "['_meta', 'outputSchema', 'title']",
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


def test_08_1_not_a_capture_fails(solved) -> None:
    failed_with("08.1", {**solved["08.1"], "power_capture": []}, "power_capture", "a CaptureTransport")


# 08.2 --------------------------------------------------------------------------------------------------------


def test_08_2_the_2026_era_is_not_asked_for(run, solved) -> None:
    async def modern() -> CaptureTransport:
        capture = CaptureTransport(build_calculator_server())
        async with teaching_client(capture) as client:
            await client.list_tools()
            await client.call_tool("calculator_divide", {"a": 1, "b": 4})
        return capture

    namespace = {**solved["08.2"], "fast_capture": run(modern)}
    failed_with("08.2", namespace, "the first request in fast_capture", "mode='legacy'")


def test_08_2_swapped_captures_fail(solved) -> None:
    namespace = solved["08.2"]
    swapped = {**namespace, "fast_capture": namespace["low_capture"], "low_capture": namespace["fast_capture"]}
    failed_with("08.2", swapped, "serverInfo.name", "build_calculator_server()")


def test_08_2_keys_copied_from_the_2026_table_fail(solved) -> None:
    namespace = {**solved["08.2"], "result_keys": {"_meta.fastmcp", "structuredContent"}}
    failed_with("08.2", namespace, "result_keys", "message['result']")
    namespace = {**solved["08.2"], "tool_keys": {"title", "outputSchema"}}
    failed_with("08.2", namespace, "tool_keys", "set(fast_tool) - set(low_tool)")


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
    failed_with("08.3", {"fixed_files": files}, "the tools python -m calc.main lists", "one registry module")
