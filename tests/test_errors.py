"""mcp_teach.lessons.l03_errors: tool errors, protocol errors and notifications, classified against a real server."""

from __future__ import annotations

import mcp_types
import pytest
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from mcp import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l03_errors import (
    ReplyOutcome,
    attempt,
    calls_table,
    classify_reply,
    code_name,
    envelope_meta,
    explain,
    one_line,
    probe_stdio,
    raw_request,
)
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

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


def test_a_code_without_a_name_is_labelled_by_its_range() -> None:
    assert ReplyOutcome("protocol error", -32005).label == "-32005 (legacy implementation-defined range)"
    assert (
        ReplyOutcome("protocol error", -32050).label == "-32050 (reserved for the MCP specification, not defined by it)"
    )
    assert ReplyOutcome("protocol error", 42).label == "42 (application-defined)"


def test_classify_reply() -> None:
    assert classify_reply(None) == ReplyOutcome("no reply")
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid request parameters"}}
    assert classify_reply(error) == ReplyOutcome("protocol error", -32602, "Invalid request parameters")
    assert classify_reply(error).label == "-32602 Invalid params"
    failed = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "no"}], "isError": True}}
    assert classify_reply(failed) == ReplyOutcome("tool error", text="no")
    assert classify_reply({"jsonrpc": "2.0", "id": 3, "result": {}}) == ReplyOutcome("result")


def test_probe_stdio_against_the_real_server(run) -> None:
    lines = [
        raw_request(1, "tools/call", {"name": "calculator_add", "arguments": {"a": 2, "b": 3}}),
        raw_request(2, "tools/call", {"name": "calculator_divide", "arguments": {"a": 1, "b": 0}}),
        raw_request(3, "tools/multiply"),
        raw_request(4, "tools/call", {"arguments": {"a": 1, "b": 2}}),
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/list"',
        raw_request(6, "tools/list", jsonrpc=None),
        "[1, 2]",
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "calculator_add"}},
        raw_request(9, "tools/call", {"name": "calculator_multiply", "arguments": {"a": 6, "b": 7}}),
    ]
    probe = run(probe_stdio, lines)
    outcomes = probe.outcomes()
    # the notification (line 8) is given `quiet` seconds, not `wait`: it must get no answer at all
    waited = probe.capture.messages[probe.spans[8][0]].at - probe.capture.messages[probe.spans[7][0]].at
    assert waited < 2.0
    assert outcomes[0] == ReplyOutcome("result", text="5.0")
    assert outcomes[1] == ReplyOutcome("tool error", text="Cannot divide by zero: argument 'b' must not be 0.")
    assert (outcomes[2].kind, outcomes[2].code) == ("protocol error", -32601)
    assert (outcomes[3].kind, outcomes[3].code) == ("protocol error", -32602)
    # unreadable JSON: -32700 with id null; readable but not JSON-RPC: -32600 with the id when it can be read
    assert (probe.replies[4]["id"], outcomes[4].code) == (None, -32700)
    assert outcomes[4].text.startswith("Parse error: not valid JSON")
    assert (probe.replies[5]["id"], outcomes[5].code) == (6, -32600)
    assert outcomes[5].text == 'Invalid Request: "jsonrpc" must be "2.0" (it is missing).'
    assert (probe.replies[6]["id"], outcomes[6].code) == (None, -32600)
    assert "batch" in outcomes[6].text
    # a notification is never answered, not even a misplaced tools/call
    assert outcomes[7] == ReplyOutcome("no reply")
    # the server survives bad lines: the last, valid call is answered
    assert outcomes[8] == ReplyOutcome("result", text="42.0")
    assert len(probe.capture.requests()) == 6  # unparsable or non-object lines are kept as {"raw": ...}
    assert probe.capture[0].message == lines[0]
    assert [message.direction for message in probe.lines(5, 8)] == [
        "client->server",
        "server->client",
        "client->server",
    ]
    text = repr(probe)
    assert "-32601 Method not found" in text
    assert '"_meta":"…"' in text
    assert "<table>" in probe._repr_html_()


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


def test_calls_table_one_row_per_tools_call(run) -> None:
    async def capture() -> CaptureTransport:
        target = CaptureTransport(build_calculator_server())
        async with teaching_client(target) as client:
            await client.list_tools()
            await client.call_tool("calculator_add", {"a": 2, "b": 3})
            await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
            await attempt(client.call_tool("calculator_power", {"a": 2, "b": 10}))
        return target

    target = run(capture)
    rows = calls_table(target).rows
    assert list(rows[0]) == ["3", "calculator_add", "{'a': 2, 'b': 3}", "5.0", "{'result': 5.0}"]
    assert rows[1][3] == "Cannot divide by zero: argument 'b' must not be 0." and rows[1][4] == ""
    assert rows[2][3].startswith("error -32602: Unknown tool: 'calculator_power'.")
    assert calls_table(target.capture).rows == rows
