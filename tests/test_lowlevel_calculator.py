"""mcp_teach.servers.lowlevel_calculator: the four tools on the low-level Server, in memory and stdio, both eras."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from fastmcp.client.transports import StdioTransport
from mcp.client import Client as SdkClient
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCRequest
from support import HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l08_connect import LowLevelMemoryTransport
from mcp_teach.servers import calculator
from mcp_teach.servers.lowlevel_calculator import (
    SERVER_INSTRUCTIONS,
    TOOLS,
    argument_problems,
    build_lowlevel_calculator,
    calculate,
)

NAMES = ["calculator_add", "calculator_subtract", "calculator_multiply", "calculator_divide"]
GOOD = [
    ("calculator_add", 3.0),
    ("calculator_subtract", -1.0),
    ("calculator_multiply", 2.0),
    ("calculator_divide", 0.5),
]


def test_same_tools_and_descriptions_as_the_calculator() -> None:
    described = {function.__name__: description for function, (_, description) in calculator.TOOLS.items()}
    assert {name: entry[0] for name, entry in TOOLS.items()} == described
    assert SERVER_INSTRUCTIONS == calculator.SERVER_INSTRUCTIONS


def test_the_module_does_not_import_fastmcp() -> None:
    code = "import sys, mcp_teach.servers.lowlevel_calculator; print('fastmcp' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("calculator_add", {"a": 1}, ["argument 'b' is missing"]),
        ("calculator_add", None, ["argument 'a' is missing", "argument 'b' is missing"]),
        ("calculator_add", {"a": 1, "b": 2, "c": 3}, ["unexpected argument 'c'"]),
        ("calculator_add", {"a": "1", "b": 2}, ["argument 'a' must be a number (got \"1\")"]),
        ("calculator_add", {"a": True, "b": 2}, ["argument 'a' must be a number (got true)"]),
        ("calculator_add", {"a": None, "b": 2}, ["argument 'a' must be a number (got null)"]),
        ("calculator_divide", {"a": 1, "b": 0.0}, ["argument 'b' must not be 0: cannot divide by zero"]),
        (
            "calculator_multiply",
            {"a": 10**400, "b": 1},
            ["argument 'a' must be a finite number (got 1" + "0" * 59 + ")"],
        ),
    ],
)
def test_argument_problems_say_what_to_fix(name: str, arguments: dict | None, expected: list[str]) -> None:
    assert argument_problems(name, arguments) == expected


def test_overflow_is_a_tool_error_and_unknown_tool_is_minus_32602() -> None:
    result = calculate("calculator_multiply", {"a": 1e200, "b": 1e200})
    assert result.is_error and "not a finite number (overflow)" in result.content[0].text
    with pytest.raises(MCPError) as raised:
        calculate("calculator_power", {"a": 1, "b": 2})
    assert raised.value.error.code == -32602
    assert raised.value.error.message.startswith("Unknown tool: 'calculator_power'. This server has: calculator_add")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("connection", ["in-memory", "stdio"])
def test_all_four_tools_and_bad_input_over_a_real_connection(run, tmp_path: Path, connection: str, mode: str) -> None:
    command = ["-m", "mcp_teach.servers.lowlevel_calculator"]
    transport = (
        LowLevelMemoryTransport()
        if connection == "in-memory"
        else StdioTransport(sys.executable, command, log_file=tmp_path / "log", keep_alive=False)
    )

    async def session() -> None:
        async with teaching_client(transport, mode=mode) as client:
            expected_version = "2025-11-25" if mode == "legacy" else "2026-07-28"
            assert client.protocol_version == expected_version
            tools = await client.list_tools()
            assert [tool.name for tool in tools] == NAMES
            assert all(tool.output_schema is None and tool.title is None for tool in tools)
            assert tools[3].input_schema["properties"]["b"]["not"] == {"const": 0}
            for name, value in GOOD:
                result = await client.call_tool(name, {"a": 1, "b": 2})
                assert (result.content[0].text, result.structured_content, result.is_error) == (str(value), None, False)
            bad = await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
            assert bad.is_error and "argument 'b' must not be 0" in bad.content[0].text
            wrong = await client.call_tool("calculator_add", {"a": 1, "b": "2"}, raise_on_error=False)
            assert wrong.is_error and wrong.content[0].text.endswith("argument 'b' must be a number (got \"2\").")
            with pytest.raises(MCPError) as raised:
                await client.call_tool("calculator_power", {"a": 1, "b": 2})
            assert raised.value.error.code == -32602 and "Unknown tool" in raised.value.error.message

    run(session)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_mcp_sdks_own_client_accepts_the_server_in_memory(run, mode: str) -> None:
    async def session() -> None:
        async with SdkClient(build_lowlevel_calculator(), mode=mode) as client:
            listed = await client.list_tools()
            assert [tool.name for tool in listed.tools] == NAMES
            result = await client.call_tool("calculator_divide", {"a": 1, "b": 4})
            assert result.content[0].text == "0.25"

    run(session)


def test_stdio_entry_point_answers_raw_json_rpc_lines() -> None:
    """``python -m mcp_teach.servers.lowlevel_calculator``: the handshake, then tools/call, as plain lines."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "calculator_subtract", "arguments": {"a": 5, "b": 2}},
        },
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_teach.servers.lowlevel_calculator"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        process.stdin.flush()
        first, second = json.loads(process.stdout.readline()), json.loads(process.stdout.readline())
    finally:
        process.stdin.close()
        process.wait(timeout=HANG_TIMEOUT)
    assert first["result"]["serverInfo"] == {"name": "mcp-teach-lowlevel-calculator", "version": "1.0.0"}
    assert first["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert second == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"content": [{"type": "text", "text": "3.0"}], "isError": False},
    }


def test_params_that_do_not_fit_are_refused_by_the_sdk_before_the_handler(run) -> None:
    async def session() -> dict:
        server = build_lowlevel_calculator()
        async with (
            create_client_server_memory_streams() as ((read, write), server_streams),
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(lambda: server.run(*server_streams, server.create_initialization_options()))
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            await write.send(SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=1, method="initialize", params=init)))
            await read.receive()
            await write.send(SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=2, method="tools/call", params={})))
            reply = await read.receive()
            tasks.cancel_scope.cancel()
        return reply.message.model_dump(by_alias=True, mode="json", exclude_unset=True)

    reply = run(session)
    assert reply["error"]["code"] == -32602
