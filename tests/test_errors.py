"""Hand-written requests (mcp_teach.wire.raw_requests) and what the Python client gives back
(mcp_teach.display.call_outcomes), against a real server.

The replies lesson 03 provokes on stdio are tested here too: the lesson's cell sorts them, nbval compares its table.
"""

from __future__ import annotations

import time

import mcp_types
import pytest
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from mcp import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.display.call_outcomes import attempt, code_name, explain, one_line
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.raw_requests import envelope_meta, raw_request
from mcp_teach.wire.raw_stdio import RawStdioServer

PYDANTIC_MESSAGE = (
    "1 validation error for call[calculator_add]\n"
    "a\n"
    "  Input should be a valid number, unable to parse string as a number "
    "[type=float_parsing, input_value='three', input_type=str]\n"
    "    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing"
)


def test_raw_request_carries_the_2026_envelope() -> None:
    message = raw_request(1, "tools/call", {"name": "calculator_add", "arguments": {"a": 1, "b": 2}})
    assert list(message) == ["jsonrpc", "id", "method", "params"]
    assert message["params"]["_meta"] == envelope_meta()
    assert envelope_meta()["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_raw_request_can_break_the_rules() -> None:
    assert raw_request(7, "tools/list", jsonrpc=None, envelope=False) == {"id": 7, "method": "tools/list"}
    assert raw_request(None, "notifications/cancelled", envelope=False) == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
    }
    merged = raw_request(2, "tools/list", {"_meta": {"progressToken": 2}})
    assert merged["params"]["_meta"]["progressToken"] == 2
    assert "io.modelcontextprotocol/clientCapabilities" in merged["params"]["_meta"]


def test_one_line_flattens_pydantic_messages() -> None:
    assert one_line(PYDANTIC_MESSAGE) == (
        "1 validation error for call[calculator_add]: a: Input should be a valid number, unable to parse string "
        "as a number [type=float_parsing, input_value='three', input_type=str]"
    )
    assert one_line(PYDANTIC_MESSAGE, brief=True) == (
        "a: Input should be a valid number, unable to parse string as a number"
    )
    assert one_line("first\n  second\n") == "first second"


def test_code_names_come_from_the_glossary() -> None:
    assert code_name(-32700) == "Parse error"
    assert code_name(-32601) == "Method not found"
    assert code_name(-32021) == "Missing required client capability (MCP 2026-07-28)"
    assert code_name(-32000) == ""
    assert code_name(None) == ""


async def _exchange(lines: list[dict | str]) -> tuple[list[dict | None], list[float]]:
    """Each line's reply from a fresh stdio server (None: none came), and how long each exchange took."""
    replies, seconds = [], []
    async with RawStdioServer() as server:
        for line in lines:
            start = time.monotonic()
            replies.append(await server.exchange(line))
            seconds.append(time.monotonic() - start)
    return replies, seconds


def test_the_replies_lesson_03_provokes_on_stdio(run) -> None:
    add = {"name": "calculator_add", "arguments": {"a": 2, "b": 3}}
    lines = [
        raw_request(1, "tools/call", add),
        raw_request(2, "tools/call", {"name": "calculator_divide", "arguments": {"a": 1, "b": 0}}),
        raw_request(3, "tools/multiply"),
        raw_request(4, "tools/call", {"arguments": {"a": 1, "b": 2}}),
        raw_request(5, "tools/call", add, envelope=False),
        '{"jsonrpc": "2.0", "id": 6, "method": "tools/list"',
        raw_request(7, "tools/list", jsonrpc=None),
        '[{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}]',
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "calculator_add"}},
        raw_request(10, "tools/call", {"name": "calculator_multiply", "arguments": {"a": 6, "b": 7}}),
    ]
    replies, seconds = run(_exchange, lines)
    assert replies[0]["result"]["content"][0]["text"] == "5.0"
    assert replies[1]["result"]["isError"] is True  # a tool error is a result, not a JSON-RPC error
    codes = [(reply["id"], reply["error"]["code"]) for reply in replies[2:8]]
    # an unreadable line is answered with "id": null (JSON-RPC 2.0), a readable id is echoed
    assert codes == [(3, -32601), (4, -32602), (5, -32602), (None, -32700), (7, -32600), (None, -32600)]
    assert replies[3]["error"]["message"] == "Invalid params for tools/call: params.name is missing."
    assert "has no _meta" in replies[4]["error"]["message"]
    assert replies[5]["error"]["message"].startswith("Parse error: not valid JSON")
    assert replies[6]["error"]["message"] == 'Invalid Request: "jsonrpc" must be "2.0" (it is missing).'
    assert "batch" in replies[7]["error"]["message"]
    # a notification is never answered, not even a misplaced tools/call; the wait after it is short
    assert replies[8] is None and seconds[8] < 2.0
    # the server survives bad lines: the last, valid call is answered
    assert replies[9]["result"]["content"][0]["text"] == "42.0"


def test_explain_what_the_python_client_gives_back(run) -> None:
    async def outcomes() -> dict[str, object]:
        async with teaching_client(build_calculator_server()) as client:
            await client.list_tools()
            return {
                "ok": await attempt(client.call_tool("calculator_add", {"a": 2, "b": "3"})),
                "tool error": await attempt(client.call_tool("calculator_divide", {"a": 1, "b": 0})),
                "kept": await attempt(client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)),
                "raw": await attempt(client.call_tool_mcp("calculator_multiply", {"a": 6, "b": 7})),
                "bad type": await attempt(client.call_tool("calculator_add", {"a": "three", "b": 1})),
                "protocol": await attempt(
                    client.session.send_request(
                        mcp_types.Request(method="tools/multiply", params={}), mcp_types.EmptyResult
                    )
                ),
            }

    got = run(outcomes)
    assert explain(got["ok"]) == "returned a result: data=5.0"
    assert isinstance(got["tool error"], ToolError)
    assert explain(got["tool error"]) == (
        "raised ToolError: the tool result had isError: true: Cannot divide by zero: argument 'b' must not be 0."
    )
    assert got["kept"].is_error
    assert explain(got["kept"]) == (
        "returned a result with is_error=True: Cannot divide by zero: argument 'b' must not be 0."
    )
    assert explain(got["raw"]) == "returned a result: structured_content={'result': 42.0}"
    # the course server rewrites pydantic's report into one sentence; explain() keeps it on one line either way
    assert explain(got["bad type"]).startswith("raised ToolError: the tool result had isError: true: ")
    assert "Input should be a valid number, unable to parse string as a number" in explain(got["bad type"])
    assert isinstance(got["protocol"], MCPError)
    assert got["protocol"].error.code == -32601
    assert explain(got["protocol"]) == "raised MCPError: JSON-RPC error -32601 (Method not found): Method not found"
    brief = {name: explain(outcome, brief=True) for name, outcome in got.items() if name != "bad type"}
    assert brief == {
        "ok": "data=5.0",
        "tool error": "ToolError: Cannot divide by zero: argument 'b' must not be 0.",
        "kept": "is_error=True: Cannot divide by zero: argument 'b' must not be 0.",
        "raw": "structured_content={'result': 42.0}",
        "protocol": "MCPError -32601: Method not found",
    }


def test_explain_flattens_a_plain_fastmcp_validation_report(run) -> None:
    """A server without the course's rewriting sends pydantic's multi-line report; explain() makes it one line."""
    plain = FastMCP("plain", version="1.0.0")

    @plain.tool
    def halve(x: float) -> float:
        return x / 2

    async def outcome() -> object:
        async with teaching_client(plain) as client:
            await client.list_tools()
            return await attempt(client.call_tool("halve", {"x": "three"}))

    error = run(outcome)
    assert isinstance(error, ToolError)
    assert "\n" in str(error)  # pydantic's report, several lines
    assert explain(error) == (
        "raised ToolError: the tool result had isError: true: 1 validation error for call[halve]: x: Input should be "
        "a valid number, unable to parse string as a number [type=float_parsing, input_value='three', input_type=str]"
    )
    assert (
        explain(error, brief=True) == "ToolError: x: Input should be a valid number, unable to parse string as a number"
    )


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (
            MCPError(-32000, "custom"),
            "raised MCPError: JSON-RPC error -32000 (legacy implementation-defined range): custom",
        ),
        (MCPError(-1, "mine"), "raised MCPError: JSON-RPC error -1 (application-defined): mine"),
        (ValueError("bad\nvalue"), "raised ValueError: bad value"),
        (42, "returned 42"),
    ],
)
def test_explain_other_outcomes(outcome: object, expected: str) -> None:
    assert explain(outcome) == expected
