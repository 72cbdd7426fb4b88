"""The calculator server: same tools, results and errors on every transport."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastmcp.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.servers import calculator
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture

TRANSPORT_KINDS = ("memory", "stdio", "sse", "streamable-http")

EXPECTED_TOOLS = {
    "calculator_add": ("Calculator Add", "Add two numbers (a + b)."),
    "calculator_subtract": ("Calculator Subtract", "Subtract the second number from the first (a - b)."),
    "calculator_multiply": ("Calculator Multiply", "Multiply two numbers (a * b)."),
    "calculator_divide": ("Calculator Divide", "Divide the first number by the second (a / b); b must not be 0."),
}
ARITHMETIC = [
    ("calculator_add", 2, 3, 5.0),
    ("calculator_add", -1.5, 0.25, -1.25),
    ("calculator_subtract", 2, 5, -3.0),
    ("calculator_multiply", 6, 7, 42.0),
    ("calculator_multiply", -2.5, 4, -10.0),
    ("calculator_divide", 7, 2, 3.5),
    ("calculator_divide", -9, 3, -3.0),
]
FAILING_CALLS = {
    "divide by zero": ("calculator_divide", {"a": 1, "b": 0}, "Cannot divide by zero"),
    "multiply overflow": ("calculator_multiply", {"a": 1e200, "b": 1e200}, "not a finite number (overflow)"),
    "add overflow": ("calculator_add", {"a": 1.7e308, "b": 1.7e308}, "not a finite number (overflow)"),
    "divide overflow": ("calculator_divide", {"a": 1e308, "b": 1e-10}, "not a finite number (overflow)"),
    "infinite operand": ("calculator_add", {"a": "inf", "b": 1}, "must be finite numbers, got a=inf, b=1.0"),
    "NaN operand": ("calculator_multiply", {"a": 2, "b": "nan"}, "must be finite numbers, got a=2.0, b=nan"),
}


@dataclass
class Outcome:
    """Everything one client session on one transport saw."""

    tools: list[Any] = field(default_factory=list)
    results: dict[tuple[str, float, float], Any] = field(default_factory=dict)
    failures: dict[str, Any] = field(default_factory=dict)
    raised: dict[str, Exception] = field(default_factory=dict)
    not_raised: dict[str, Any] = field(default_factory=dict)
    capture: Capture = field(default_factory=Capture)


async def _exchange(open_calculator, kind: str) -> Outcome:
    outcome = Outcome()
    async with open_calculator(kind) as target:
        capture = CaptureTransport(target)
        outcome.capture = capture.capture
        async with teaching_client(capture) as client:
            outcome.tools = await client.list_tools()
            for name, a, b, _ in ARITHMETIC:
                outcome.results[name, a, b] = await client.call_tool(name, {"a": a, "b": b})
            for label, (name, arguments, _) in FAILING_CALLS.items():
                outcome.failures[label] = await client.call_tool(name, arguments, raise_on_error=False)
            for label, name, arguments in [
                ("unknown tool", "calculator_power", {"a": 2, "b": 3}),
                ("wrong type", "calculator_add", {"a": "three", "b": 2}),
                ("missing argument", "calculator_subtract", {"a": 1}),
            ]:
                try:
                    outcome.not_raised[label] = await client.call_tool(name, arguments)
                except (ToolError, MCPError) as error:
                    outcome.raised[label] = error
                if label != "unknown tool":  # a protocol error: raised whatever raise_on_error says
                    outcome.failures[label] = await client.call_tool(name, arguments, raise_on_error=False)
    return outcome


@pytest.fixture(scope="module", params=TRANSPORT_KINDS)
def outcome(request, run, open_calculator) -> Outcome:
    """One session per transport, shared by the checks below."""
    return run(_exchange, open_calculator, request.param)


def test_lists_the_four_tools_with_titles_and_descriptions(outcome: Outcome):
    assert [tool.name for tool in outcome.tools] == list(EXPECTED_TOOLS)
    for tool in outcome.tools:
        assert (tool.title, tool.description) == EXPECTED_TOOLS[tool.name]


def test_input_schema_requires_two_numbers(outcome: Outcome):
    for tool in outcome.tools:
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema["properties"] == {"a": {"type": "number"}, "b": {"type": "number"}}
        assert sorted(schema["required"]) == ["a", "b"]


@pytest.mark.parametrize(("name", "a", "b", "expected"), ARITHMETIC)
def test_arithmetic_results(outcome: Outcome, name: str, a: float, b: float, expected: float):
    result = outcome.results[name, a, b]
    assert result.is_error is False
    assert result.data == expected
    assert result.structured_content == {"result": expected}
    assert [block.text for block in result.content] == [str(expected)]


@pytest.mark.parametrize("label", list(FAILING_CALLS))
def test_math_errors_are_tool_results_with_a_reason(outcome: Outcome, label: str):
    _, _, reason = FAILING_CALLS[label]
    result = outcome.failures[label]
    assert result.is_error is True
    assert result.data is None
    assert len(result.content) == 1
    assert reason in result.content[0].text


def test_no_infinity_or_nan_crosses_the_wire(outcome: Outcome):
    responses = [wire.message for wire in outcome.capture if wire.direction == "server->client"]
    assert responses
    for message in responses:
        text = json.dumps(message, allow_nan=False)  # raises on inf/NaN
        assert "Infinity" not in text
        assert "NaN" not in text
    for label, (name, arguments, reason) in FAILING_CALLS.items():
        request = next(
            w for w in outcome.capture.requests("tools/call") if w.message["params"]["arguments"] == arguments
        )
        response = outcome.capture.response_to(request).message
        assert response["result"]["isError"] is True, label
        assert "structuredContent" not in response["result"]
        assert reason in response["result"]["content"][0]["text"]
        assert request.message["params"]["name"] == name


UNKNOWN_TOOL = (
    "Unknown tool: 'calculator_power'. "
    "This server has: calculator_add, calculator_divide, calculator_multiply, calculator_subtract."
)


def test_unknown_tool_is_a_protocol_error_that_names_the_tools(outcome: Outcome):
    """2025-11-25 and 2026-07-28 server/tools, Error Handling: JSON-RPC -32602 "Unknown tool: ...", not isError."""
    error = outcome.raised["unknown tool"]
    assert isinstance(error, MCPError) and (error.code, error.message) == (-32602, UNKNOWN_TOOL)
    calls = outcome.capture.requests("tools/call")
    request = next(w for w in calls if w.message["params"]["name"] == "calculator_power")
    assert outcome.capture.response_to(request).message["error"] == {"code": -32602, "message": UNKNOWN_TOOL}


def test_wrong_argument_type_names_the_argument(outcome: Outcome):
    expected = (
        "Invalid arguments for calculator_add: argument 'a': "
        "Input should be a valid number, unable to parse string as a number (got 'three')."
    )
    assert str(outcome.raised["wrong type"]) == expected
    assert outcome.failures["wrong type"].is_error is True
    assert outcome.failures["wrong type"].content[0].text == expected


def test_missing_argument_is_reported(outcome: Outcome):
    expected = "Invalid arguments for calculator_subtract: argument 'b' is missing."
    assert str(outcome.raised["missing argument"]) == expected
    assert outcome.failures["missing argument"].content[0].text == expected
    assert not outcome.not_raised  # every bad call raised in the client


def test_tool_functions_directly():
    assert calculator.calculator_add(0.1, 0.2) == 0.1 + 0.2
    assert calculator.calculator_subtract(1, 3) == -2
    assert calculator.calculator_multiply(3, -4) == -12
    assert calculator.calculator_divide(1, 4) == 0.25
    with pytest.raises(ToolError, match="divide by zero"):
        calculator.calculator_divide(5, 0.0)
    with pytest.raises(ToolError, match=r"a \* b .*overflow"):
        calculator.calculator_multiply(1e200, -1e200)
    with pytest.raises(ToolError, match=r"operands of a \+ b must be finite numbers, got a=inf, b=1\."):
        calculator.calculator_add(math.inf, 1)
    with pytest.raises(ToolError, match=r"a - b is not a finite number \(overflow\)"):
        calculator.calculator_subtract(-1.7e308, 1.7e308)


def test_each_build_is_a_fresh_pinned_server():
    first, second = calculator.build_calculator_server(), calculator.build_calculator_server()
    assert first is not second
    assert (first.name, first.version) == ("mcp-teach-calculator", "1.0.0")
    assert first.instructions == calculator.SERVER_INSTRUCTIONS
