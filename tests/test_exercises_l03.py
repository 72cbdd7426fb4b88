"""mcp_teach.exercises.l03: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

The right answers are not retyped here: each test runs the code of the exercise's solution cell in
``notebooks/solutions/03_tools_call.ipynb`` (top-level ``await`` included), in a namespace holding what the
lesson defined before it. So the lesson and its checks cannot drift apart.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.display.call_outcomes import attempt, explain
from mcp_teach.exercises import check
from mcp_teach.exercises.l03 import DIVISION_TEXT
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.raw_requests import raw_request
from mcp_teach.wire.raw_stdio import RawStdioServer

#: What the lesson has defined by the time its exercises start (the names their solution cells use).
LESSON = SolvedLesson(
    "03_tools_call.ipynb",
    {
        "CaptureTransport": CaptureTransport,
        "FastMCP": FastMCP,
        "ToolError": ToolError,
        "attempt": attempt,
        "build_calculator_server": build_calculator_server,
        "explain": explain,
        "raw_request": raw_request,
        "teaching_client": teaching_client,
    },
)
run_solution = LESSON.run_solution


@pytest.mark.parametrize("exercise_id", ["03.1", "03.2", "03.3"])
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    LESSON.assert_answers_defined_nowhere_else()


def test_03_1_the_lesson_solution_passes(run, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(run_solution, "03.1")
    check("03.1", namespace)
    out = capsys.readouterr().out
    assert "both conform to divide's outputSchema" in out
    assert "✔ Exercise 03.1 passed" in out


async def _answered(server: FastMCP, divisors: tuple[int, ...] = (0, 4)) -> dict[str, Any]:
    """03.1's step 3 on ``server``: list the tools, divide by 0, then by 4, all captured."""
    capture = CaptureTransport(server)
    async with teaching_client(capture) as client:
        await client.list_tools()
        for b in divisors:
            await client.call_tool("divide", {"a": 1, "b": b}, raise_on_error=False)
    return {"structured_server": server, "structured_capture": capture}


async def _structured() -> dict[str, Any]:
    """The old exercise's server: the error's structuredContent breaks the outputSchema fastmcp made for -> float."""
    from fastmcp.tools import ToolResult

    server = FastMCP("structured-calculator", version="1.0.0")

    @server.tool
    def divide(a: float, b: float) -> float:
        if b == 0:
            return ToolResult(
                content="Cannot divide by zero: argument 'b' must not be 0.",
                structured_content={"error": "division_by_zero", "argument": "b"},
                is_error=True,
            )
        return a / b

    return await _answered(server)


@pytest.mark.wrong_answer("03.1")
def test_03_1_an_error_that_breaks_the_output_schema_fails(run) -> None:
    namespace = run(_structured)  # fastmcp's own schema for -> float: {"result": number}, required
    message = failed_with("03.1", namespace, "structuredContent for b = 0 against divide's outputSchema")
    assert "'result' is a required property" in message
    assert "output_schema=DIVIDE_OUTPUT_SCHEMA" in message


@pytest.mark.wrong_answer("03.1")
def test_03_1_a_raised_error_fails(run) -> None:
    async def raised() -> dict[str, Any]:
        server = FastMCP("structured-calculator", version="1.0.0")

        @server.tool
        def divide(a: float, b: float) -> float:
            if b == 0:
                raise ToolError("Cannot divide by zero")
            return a / b

        capture = CaptureTransport(server)
        async with teaching_client(capture) as client:
            await client.list_tools()
            await client.call_tool("divide", {"a": 1, "b": 0}, raise_on_error=False)
        return {"structured_server": server, "structured_capture": capture}

    failed_with("03.1", run(raised), "structuredContent in the result for b = 0", "a raised ToolError")


#: The lesson's DIVIDE_OUTPUT_SCHEMA (cell of exercise 03.1).
DIVIDE_SCHEMA = {
    "type": "object",
    "properties": {"result": {"type": "number"}, "error": {"type": "string"}, "argument": {"type": "string"}},
    "oneOf": [{"required": ["result"]}, {"required": ["error", "argument"]}],
}


async def _divide_session(
    *,
    output_schema: Any = None,
    text: str = DIVISION_TEXT,
    error: Any = None,
    is_error: bool = True,
    divisors: tuple[int, ...] = (0, 4),
) -> dict:
    """03.1 answered with one part changed: the schema it registers, the error's text, its structuredContent or its
    isError, or the calls made."""
    from fastmcp.tools import ToolResult

    server = FastMCP("structured-calculator", version="1.0.0")

    def divide(a: float, b: float) -> dict:
        if b == 0:
            structured = error if error is not None else {"error": "division_by_zero", "argument": "b"}
            return ToolResult(content=text, structured_content=structured, is_error=is_error)
        return {"result": a / b}

    if output_schema:
        server.tool(divide, output_schema=output_schema)
    else:  # fastmcp's own schema from -> dict
        server.tool(divide)
    return await _answered(server, divisors)


@pytest.mark.wrong_answer("03.1")
def test_03_1_a_tool_without_the_output_schema_fails(run) -> None:
    failed_with("03.1", run(_divide_session), "DIVIDE_OUTPUT_SCHEMA: the two shapes", "accepts any object")


@pytest.mark.wrong_answer("03.1")
def test_03_1_another_text_fails(run) -> None:
    namespace = run(partial(_divide_session, output_schema=DIVIDE_SCHEMA, text="Division by zero"))
    failed_with("03.1", namespace, "the text blocks of the result for b = 0", "the text the model reads")


@pytest.mark.wrong_answer("03.1")
def test_03_1_a_missing_key_gets_the_shape_hint(run) -> None:
    namespace = run(partial(_divide_session, output_schema=DIVIDE_SCHEMA, error={"error": "division_by_zero"}))
    failed_with("03.1", namespace, "structuredContent in the result for b = 0", "both keys")


@pytest.mark.wrong_answer("03.1")
@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        pytest.param({"is_error": False}, ["isError in the result for b = 0", "is_error=True"], id="is_error-left-out"),
        pytest.param({"divisors": (0,)}, ["the values of b", "'b': 4"], id="only-the-division-by-zero"),
        pytest.param(
            {"error": {"error": "division_by_zero", "argument": "a"}},
            ["structuredContent in the result for b = 0", "both keys"],
            id="the-wrong-argument-named",
        ),
    ],
)
def test_03_1_a_wrong_part_fails_with_its_hint(run, change: dict, fragments: list[str]) -> None:
    failed_with("03.1", run(partial(_divide_session, output_schema=DIVIDE_SCHEMA, **change)), *fragments)


@pytest.mark.wrong_answer("03.1")
def test_03_1_not_a_capture_fails() -> None:
    failed_with("03.1", {"structured_server": FastMCP("x"), "structured_capture": []}, "a CaptureTransport")


def test_03_2_the_lesson_solution_passes(run, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(run_solution, "03.2")
    assert namespace["codes"] == [-32601, -32602]
    check("03.2", namespace)
    out = capsys.readouterr().out
    assert "error_server answered -32601" in out and "✔ Exercise 03.2 passed" in out


async def _sent(*lines: dict[str, Any]) -> RawStdioServer:
    async with RawStdioServer() as server:
        for line in lines:
            await server.exchange(line, timeout=30)
    return server


METHOD_NOT_FOUND = raw_request(1, "tools/run")


@pytest.mark.wrong_answer("03.2")
def test_03_2_an_unknown_tool_is_not_new() -> None:
    namespace = {
        "method_not_found": METHOD_NOT_FOUND,
        "invalid_params": raw_request(2, "tools/call", {"name": "calculator_power", "arguments": {}}),
        "error_server": None,
        "codes": [-32601, -32602],
    }
    failed_with("03.2", namespace, "the tool name in invalid_params", "section 4 already showed an unknown tool")


@pytest.mark.wrong_answer("03.2")
def test_03_2_without_the_envelope_fails_before_the_replies_are_read() -> None:
    namespace = {
        "method_not_found": METHOD_NOT_FOUND,
        "invalid_params": raw_request(2, "tools/call", {"name": "calculator_add", "arguments": [1]}, envelope=False),
        "error_server": None,
        "codes": [-32601, -32602],
    }
    failed_with("03.2", namespace, "the params of invalid_params", "'_meta' envelope")


@pytest.mark.wrong_answer("03.2")
def test_03_2_a_wrong_argument_value_is_a_tool_error(run) -> None:
    """One server, several wrong answers: a tool error, a request sent late, codes typed by hand."""
    wrong_value = raw_request(2, "tools/call", {"name": "calculator_add", "arguments": {"a": "x", "b": 1}})
    shape = raw_request(3, "tools/call", {"name": "calculator_add", "arguments": [1]})
    server = run(_sent, METHOD_NOT_FOUND, wrong_value, shape)
    namespace = {
        "method_not_found": METHOD_NOT_FOUND,
        "invalid_params": wrong_value,
        "error_server": server,
        "codes": [-32601, -32602],
    }
    failed_with("03.2", namespace, "what the server answered to invalid_params", "break the shape of params")
    namespace["invalid_params"] = shape  # answered -32602, but not among the first two lines
    failed_with("03.2", namespace, "the first two lines sent on error_server")
    namespace.update(invalid_params=wrong_value, error_server=run(_sent, METHOD_NOT_FOUND, shape))
    failed_with("03.2", namespace, "the first two lines sent on error_server")


@pytest.mark.wrong_answer("03.2")
def test_03_2_a_request_without_envelope_is_told_to_carry_one(run) -> None:
    bare = raw_request(1, "tools/run", envelope=False)
    shape = raw_request(2, "tools/call", {"name": "calculator_add", "arguments": [1]})
    namespace = {"method_not_found": bare, "invalid_params": shape, "error_server": run(_sent, bare, shape)}
    message = failed_with("03.2", {**namespace, "codes": [-32601, -32602]}, "read no protocol version")
    assert "what the server answered to method_not_found" in message


@pytest.mark.wrong_answer("03.2")
def test_03_2_codes_must_be_read_from_the_replies(run) -> None:
    shape = raw_request(2, "tools/call", {"name": "calculator_add", "arguments": [1]})
    namespace = {
        "method_not_found": METHOD_NOT_FOUND,
        "invalid_params": shape,
        "error_server": run(_sent, METHOD_NOT_FOUND, shape),
        "codes": [-32602, -32601],
    }
    failed_with("03.2", namespace, "codes, read from your replies")


@pytest.mark.wrong_answer("03.2")
@pytest.mark.parametrize(
    ("method_not_found", "invalid_params", "fragments"),
    [
        pytest.param(
            METHOD_NOT_FOUND,
            raw_request(1, "tools/call", {"name": "calculator_add", "arguments": [1]}),
            ["the ids of your two requests", "an id of its own"],
            id="the-same-id-twice",
        ),
        pytest.param(
            raw_request(None, "tools/run"),
            raw_request(2, "tools/call", {"name": "calculator_add", "arguments": [1]}),
            ["the ids of your two requests", "notification"],
            id="a-notification",
        ),
        pytest.param(
            METHOD_NOT_FOUND,
            raw_request(2, "tools/list", {"cursor": 5}),
            ["the method of invalid_params", "a tools/call whose params are wrong"],
            id="another-method's-32602",
        ),
    ],
)
def test_03_2_a_wrong_request_fails_before_any_server(method_not_found, invalid_params, fragments) -> None:
    namespace = {"method_not_found": method_not_found, "invalid_params": invalid_params}
    failed_with("03.2", {**namespace, "error_server": None, "codes": [-32601, -32602]}, *fragments)


@pytest.mark.wrong_answer("03.2")
def test_03_2_not_a_raw_server_fails() -> None:
    namespace = {
        "method_not_found": METHOD_NOT_FOUND,
        "invalid_params": raw_request(2, "tools/call", {"name": "calculator_add", "arguments": [1]}),
        "error_server": "a server",
        "codes": [-32601, -32602],
    }
    failed_with("03.2", namespace, "error_server", "async with RawStdioServer() as error_server")


def test_03_3_the_lesson_solution_passes(run, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(run_solution, "03.3")
    assert "returned 3.5" in capsys.readouterr().out  # the solution tries its function itself
    check("03.3", namespace)
    assert "✔ Exercise 03.3 passed" in capsys.readouterr().out


@pytest.mark.wrong_answer("03.3")
def test_03_3_no_retry_fails() -> None:
    async def add_once(client: Any, a: Any, b: Any) -> Any:
        return (await client.call_tool("calculator_add", {"a": a, "b": b})).data

    failed_with("03.3", {"add_with_retry": add_once}, "the arguments of the tools/call requests for ('2.5', 1)")


@pytest.mark.wrong_answer("03.3")
def test_03_3_a_plain_function_fails() -> None:
    def add_with_retry(client: Any, a: Any, b: Any) -> Any:
        return a + b

    failed_with("03.3", {"add_with_retry": add_with_retry}, "an async function")


@pytest.mark.wrong_answer("03.3")
def test_03_3_retrying_after_any_exception_fails() -> None:
    async def retries_anything(client: Any, a: Any, b: Any) -> Any:
        try:
            return (await client.call_tool("calculator_add", {"a": a, "b": b})).data
        except Exception:
            return (await client.call_tool("calculator_add", {"a": float(a), "b": float(b)})).data

    failed_with("03.3", {"add_with_retry": retries_anything}, "a server without calculator_add", "not every Exception")


@pytest.mark.wrong_answer("03.3")
def test_03_3_catching_mcp_error_instead_of_tool_error_is_told_so() -> None:
    async def catches_the_other_error(client: Any, a: Any, b: Any) -> Any:
        try:
            return (await client.call_tool("calculator_add", {"a": a, "b": b})).data
        except MCPError:
            return (await client.call_tool("calculator_add", {"a": float(a), "b": float(b)})).data

    failed_with("03.3", {"add_with_retry": catches_the_other_error}, "catch ToolError (a tool error), not MCPError")


async def returns_the_result(client: Any, a: Any, b: Any) -> Any:
    try:
        return await client.call_tool("calculator_add", {"a": a, "b": b})
    except ToolError:
        return await client.call_tool("calculator_add", {"a": float(a), "b": float(b)})


async def converts_only_a(client: Any, a: Any, b: Any) -> Any:
    try:
        return (await client.call_tool("calculator_add", {"a": a, "b": b})).data
    except ToolError:
        return (await client.call_tool("calculator_add", {"a": float(a), "b": b})).data


async def retries_until_it_works(client: Any, a: Any, b: Any) -> Any:
    """At most three calls here; a ``while True`` loop would be stopped by the check's timeout."""
    for _ in range(3):
        try:
            return (await client.call_tool("calculator_add", {"a": a, "b": b})).data
        except ToolError:
            a, b = float(a), float(b)
    return None


async def a_vague_message(client: Any, a: Any, b: Any) -> Any:
    try:
        return (await client.call_tool("calculator_add", {"a": a, "b": b})).data
    except ToolError:
        try:
            a, b = float(a), float(b)
        except ValueError:
            raise ValueError("not a number") from None
        return (await client.call_tool("calculator_add", {"a": a, "b": b})).data


@pytest.mark.wrong_answer("03.3")
@pytest.mark.parametrize(
    ("add_with_retry", "fragments"),
    [
        pytest.param(
            returns_the_result, ["what add_with_retry(client, '2.5', 1) returned", "result.data"], id="result"
        ),
        pytest.param(converts_only_a, ["requests for (3, '0.5')", "both arguments"], id="converts-only-a"),
        pytest.param(
            retries_until_it_works, ["'1e308', '1e308'", "3 tools/call requests", "not until it works"], id="loops"
        ),
        pytest.param(a_vague_message, ["the message of that ValueError", "put the value"], id="a-vague-message"),
    ],
)
def test_03_3_a_wrong_retry_fails_with_its_hint(add_with_retry: Any, fragments: list[str]) -> None:
    failed_with("03.3", {"add_with_retry": add_with_retry}, *fragments)
