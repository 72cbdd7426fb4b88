"""A local error of the mcp SDK (no answer in time, the connection closed) is never passed off as the server's answer.

mcp 2.3 raises ``MCPError`` -32001 when a request times out and -32000 when the connection closes first, in
this process; 2026-07-28, basic/index, Error Codes: local errors "cannot be mistaken for errors received from the
peer". Real servers: one whose tool sleeps past a short time limit (over streamable HTTP), one whose process
exits in the middle of a call (over stdio), one that sends a -32000 of its own.
"""

from __future__ import annotations

import sys
import textwrap

from fastmcp import FastMCP
from fastmcp.client.transports import StdioTransport
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.display.call_outcomes import attempt, explain
from mcp_teach.llm.loop import ToolCall, call_tool
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.local_errors import local_error

#: Short enough to keep the test quick, long enough for a loopback round trip on a busy machine.
TIME_LIMIT = 1.0
#: A server process whose tool ends the process in the middle of the call.
DYING_SERVER = textwrap.dedent(
    """
    import os
    from fastmcp import FastMCP

    mcp = FastMCP("dies")


    @mcp.tool
    def die() -> str:
        os._exit(3)


    mcp.run(show_banner=False, log_level="error")
    """
)


def slow_server() -> FastMCP:
    mcp = FastMCP("slow")

    @mcp.tool
    async def slow(seconds: float = 30.0) -> str:
        """Sleep, then answer."""
        import anyio

        await anyio.sleep(seconds)
        return "done"

    @mcp.tool
    def fails_its_own_way() -> str:
        """Answer with a JSON-RPC error -32000 of the server's own."""
        raise MCPError(-32000, "the backend is down")

    return mcp


async def _over_http(call: ToolCall, direct: bool = False):
    async with (
        serve_http("streamable-http", server=slow_server()) as url,
        teaching_client(url, timeout=TIME_LIMIT) as client,
    ):
        if direct:
            return await attempt(client.call_tool(call.name, call.arguments))
        return await call_tool(client, call)


async def _over_a_dying_stdio_server(tmp_path, direct: bool = False):
    script = tmp_path / "dying_server.py"
    script.write_text(DYING_SERVER)
    async with teaching_client(StdioTransport(sys.executable, [str(script)])) as client:
        if direct:
            return await attempt(client.call_tool("die", {}))
        return await call_tool(client, ToolCall("c1", "die", {}))


def test_the_sdks_own_errors_are_told_from_a_servers():
    timed_out = MCPError(-32001, "Request 'tools/call' timed out")
    assert local_error(timed_out, waited=1.0).startswith("no answer from the MCP server within 1 s")
    assert local_error(timed_out, waited=1.0123).startswith("no answer from the MCP server within 1 s:")  # load
    assert local_error(timed_out, waited=0.2049).startswith("no answer from the MCP server within 0.2 s:")
    assert local_error(MCPError(-32000, "Connection closed")) == (
        "the connection to the MCP server closed before it answered"
    )
    assert local_error(MCPError(-32000, "the backend is down")) is None  # a server's own -32000
    assert local_error(MCPError(-32001, "upstream slow")) is None
    assert local_error(MCPError(-32602, "Unknown tool: nope")) is None


def test_explain_says_a_timeout_is_local(run):
    outcome = run(_over_http, ToolCall("c1", "slow", {"seconds": 30}), True)
    assert isinstance(outcome, MCPError) and outcome.code == -32001
    line = explain(outcome)
    assert "a local error of the mcp SDK, not the server's answer" in line and "no answer" in line
    assert "(local)" in explain(outcome, brief=True)


def test_explain_says_a_closed_connection_is_local(run, tmp_path):
    outcome = run(_over_a_dying_stdio_server, tmp_path, True)
    assert isinstance(outcome, MCPError) and outcome.code == -32000
    assert "the connection to the MCP server closed" in explain(outcome)


def test_a_servers_own_error_is_still_the_servers_answer(run):
    text, failed = run(_over_http, ToolCall("c1", "fails_its_own_way", {}))
    assert failed and "the backend is down" in text and "local" not in text


# --- the text the model gets: lesson 04's call_tool (cell 13, exported to mcp_teach/llm/loop.py) ------------------


def test_a_timeout_reaches_the_model_as_a_local_error(run):
    text, failed = run(_over_http, ToolCall("c1", "slow", {"seconds": 30}))
    assert failed
    assert text.startswith("Error: no answer from the MCP server within ")
    assert "not an answer from the server" in text and "answered with JSON-RPC error" not in text


def test_a_closed_connection_reaches_the_model_as_a_local_error(run, tmp_path):
    text, failed = run(_over_a_dying_stdio_server, tmp_path)
    assert failed
    assert text.startswith("Error: the connection to the MCP server closed before it answered")
    assert "answered with JSON-RPC error" not in text
