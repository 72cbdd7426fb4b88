"""The command-line server: URLs, signals, stdio hygiene, config errors, and any MCP client (or none) can use it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from support import HANG_TIMEOUT, refuses_connections

from mcp_teach import cli, serve
from mcp_teach.client import teaching_client
from mcp_teach.config import is_loopback

PYTHON = sys.executable
MCP_TEACH = str(Path(PYTHON).with_name("mcp-teach"))  # the console script installed next to the interpreter
PYTHON_M = [PYTHON, "-m", "mcp_teach.serve"]
MCP_TEACH_SERVE = [MCP_TEACH, "serve"]
TOOL_NAMES = ["calculator_add", "calculator_subtract", "calculator_multiply", "calculator_divide"]
PINNED_SERVER = {"name": "mcp-teach-calculator", "version": "1.0.0"}
ACCEPT_BOTH = "application/json, text/event-stream"


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    return {
        (c.laddr.ip, c.laddr.port)
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN
    }


@pytest.mark.parametrize(
    ("command", "transport", "signum"),
    [
        (PYTHON_M, "sse", signal.SIGINT),
        (PYTHON_M, "streamable-http", signal.SIGTERM),
        (MCP_TEACH_SERVE, "sse", signal.SIGTERM),
        (MCP_TEACH_SERVE, "streamable-http", signal.SIGINT),
    ],
    ids=["python-m-sse-SIGINT", "python-m-http-SIGTERM", "mcp-teach-sse-SIGTERM", "mcp-teach-http-SIGINT"],
)
def test_http_server_prints_its_url_serves_and_stops_cleanly(run, cli_server, command, transport, signum):
    server = cli_server([*command, "--transport", transport, "--port", "0"])
    url = server.url
    parts = urlsplit(url)
    assert (parts.hostname, parts.path) == ("127.0.0.1", {"sse": "/sse", "streamable-http": "/mcp"}[transport])
    assert listening_addresses(server.process.pid) == {("127.0.0.1", parts.port)}  # loopback only by default

    async def use():
        async with teaching_client(url) as client:
            names = [tool.name for tool in await client.list_tools()]
            return names, (await client.call_tool("calculator_divide", {"a": 1, "b": 8})).data

    assert run(use) == (TOOL_NAMES, 0.125)
    code, stdout, stderr = server.stop(signum)
    assert code == 0
    assert "Traceback" not in stderr
    assert stderr.startswith(f"mcp-teach calculator: {transport} on {url}")
    assert stdout == ""  # no access log or banner
    assert refuses_connections(parts.port)


@pytest.fixture(scope="module")
def http_servers(cli_server):
    """One ``python -m mcp_teach.serve`` per HTTP transport, shared by the client-library tests."""
    servers = {t: cli_server([*PYTHON_M, "--transport", t, "--port", "0"]) for t in ("sse", "streamable-http")}
    urls = {t: s.url for t, s in servers.items()}
    yield urls
    for process in servers.values():
        code, _, stderr = process.stop(signal.SIGTERM)
        assert code == 0, stderr


async def _sdk_session(read, write, era: str) -> dict:
    """Drive a plain ``mcp.ClientSession``: handshake (or discover), list, call, errors."""
    async with ClientSession(read, write) as session:
        if era == "legacy":
            hello = await session.initialize()
            assert hello.protocol_version == "2025-11-25"
        else:
            hello = await session.discover()
            assert "2026-07-28" in hello.supported_versions
        tools = await session.list_tools()
        product = await session.call_tool("calculator_multiply", {"a": 6, "b": 7})
        by_zero = await session.call_tool("calculator_divide", {"a": 1, "b": 0})
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("calculator_modulo", {"a": 1, "b": 2})
        return {
            "server": session.server_info.model_dump(exclude_none=True),
            "tools": [(tool.name, tool.title, tool.input_schema["required"]) for tool in tools.tools],
            "product": (product.is_error, product.structured_content, [c.text for c in product.content]),
            "by_zero": (by_zero.is_error, by_zero.content[0].text),
            "unknown": (unknown.value.code, unknown.value.message),
        }


def _check_sdk_outcome(outcome: dict) -> None:
    assert outcome["server"] == PINNED_SERVER
    assert outcome["tools"] == [(name, name.replace("_", " ").title(), ["a", "b"]) for name in TOOL_NAMES]
    assert outcome["product"] == (False, {"result": 42.0}, ["42.0"])
    assert outcome["by_zero"] == (True, "Cannot divide by zero: argument 'b' must not be 0.")
    assert outcome["unknown"][0] == -32602  # a protocol error, not a tool result (server/tools, Error Handling)
    assert outcome["unknown"][1].startswith("Unknown tool: 'calculator_modulo'.")


@pytest.mark.parametrize("era", ["legacy", "discover"])
def test_mcp_sdk_client_over_stdio(run, tmp_path, era):
    """The SDK's own stdio client runs ``mcp-teach serve --transport stdio`` and uses it."""
    params = StdioServerParameters(command=MCP_TEACH, args=["serve", "--transport", "stdio"], cwd=str(tmp_path))

    async def scenario():
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                return await _sdk_session(read, write, era)

    _check_sdk_outcome(run(scenario))
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()


def test_mcp_sdk_client_over_sse(run, http_servers):
    async def scenario():
        async with sse_client(http_servers["sse"]) as (read, write):
            return await _sdk_session(read, write, "legacy")

    _check_sdk_outcome(run(scenario))


@pytest.mark.parametrize("era", ["legacy", "discover"])
def test_mcp_sdk_client_over_streamable_http(run, http_servers, era):
    async def scenario():
        async with streamable_http_client(http_servers["streamable-http"]) as (read, write):
            return await _sdk_session(read, write, era)

    _check_sdk_outcome(run(scenario))


def _sse_or_json(response: httpx2.Response) -> dict:
    """The one JSON-RPC message in a JSON or event-stream response."""
    if response.headers["content-type"].startswith("application/json"):
        return response.json()
    assert response.headers["content-type"].startswith("text/event-stream")
    [data] = [line[len("data: ") :] for line in response.text.splitlines() if line.startswith("data: ")]
    return json.loads(data)


def test_raw_json_rpc_over_streamable_http_without_an_mcp_library(run, http_servers):
    url = http_servers["streamable-http"]

    async def scenario():
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
            headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
            hello = await http.post(
                url,
                headers=headers,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": PINNED_SERVER},
                },
            )
            assert hello.status_code == 200
            session = {"mcp-session-id": hello.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            headers |= session
            initialized = await http.post(
                url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            listed = await http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            called = await http.post(
                url,
                headers=headers,
                json={
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "calculator_subtract", "arguments": {"a": 1.5, "b": 4}},
                },
            )
            closed = await http.delete(url, headers=session)
            return _sse_or_json(hello), initialized.status_code, _sse_or_json(listed), _sse_or_json(called), closed

    hello, initialized_status, listed, called, closed = run(scenario)
    assert hello["id"] == 1
    assert hello["result"]["serverInfo"] == PINNED_SERVER
    assert hello["result"]["protocolVersion"] == "2025-11-25"
    assert initialized_status == 202
    assert listed["id"] == 2
    assert [tool["name"] for tool in listed["result"]["tools"]] == TOOL_NAMES
    assert called == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {
            "_meta": {"fastmcp": {"wrap_result": True}},
            "content": [{"type": "text", "text": "-2.5"}],
            "structuredContent": {"result": -2.5},
            "isError": False,
        },
    }
    assert closed.status_code == 200


def test_stdio_server_speaks_only_json_rpc_on_stdout(json_line_peer):
    peer = json_line_peer([*PYTHON_M, "--transport", "stdio"])
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
    )
    hello = json.loads(peer.receive())
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    listed = json.loads(peer.receive())
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "calculator_add", "arguments": {"a": 2, "b": 3}},
        }
    )
    added = json.loads(peer.receive())
    # A bad call makes the server log a warning: it must go to stderr, not stdout.
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "calculator_add", "arguments": {"a": "x", "b": 3}},
        }
    )
    invalid = json.loads(peer.receive())
    code = peer.close_stdin()

    assert code == 0
    assert hello["result"]["serverInfo"] == PINNED_SERVER
    assert [tool["name"] for tool in listed["result"]["tools"]] == TOOL_NAMES
    assert added["result"]["structuredContent"] == {"result": 5.0}
    assert invalid["result"]["isError"] is True
    assert len(peer.stdout_lines) == 4  # one line per request, nothing else
    for line in peer.stdout_lines:
        assert line.endswith("\n")
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
    assert [json.loads(line)["id"] for line in peer.stdout_lines] == [1, 2, 3, 4]


def test_startup_errors_exit_with_a_reason_and_no_traceback(tmp_path, clean_env):
    """Bad settings exit 2 naming the variable and the valid values; a busy port exits 1. Run side by side."""
    with_env_file = tmp_path / "with-env-file"
    with_env_file.mkdir()
    (with_env_file / ".env").write_text("MCP_SSE_PATH=sse\n")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = str(taken.getsockname()[1])
        cases = {
            "env transport": (PYTHON_M, {"MCP_TRANSPORT": "tcp"}, tmp_path),
            "env port": (MCP_TEACH_SERVE, {"MCP_PORT": "abc"}, tmp_path),
            ".env path": ([*MCP_TEACH_SERVE, "--transport", "sse", "--port", "0"], {}, with_env_file),
            "busy port": ([*PYTHON_M, "--transport", "streamable-http", "--port", busy], {}, tmp_path),
        }
        started = {
            name: subprocess.Popen(
                argv, env=clean_env(**env), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for name, (argv, env, cwd) in cases.items()
        }
        done = {
            name: (*process.communicate(timeout=HANG_TIMEOUT), process.returncode) for name, process in started.items()
        }

    config_error = "mcp-teach: configuration error: "
    assert done["env transport"] == (
        "",
        config_error + "MCP_TRANSPORT='tcp' is not valid: expected one of stdio, sse, streamable-http.\n",
        2,
    )
    assert done["env port"] == (
        "",
        config_error + "MCP_PORT='abc' is not valid: expected a whole number from 1 to 65535.\n",
        2,
    )
    assert done[".env path"] == (
        "",
        config_error + "MCP_SSE_PATH='sse' is not valid: expected a URL path starting with '/'."
        f" (read from {with_env_file / '.env'})\n",
        2,
    )
    stdout, stderr, code = done["busy port"]
    assert (stdout, code) == ("", 1)
    assert stderr.startswith("mcp-teach: cannot start: [Errno 98]")
    assert "Address already in use" in stderr
    assert "Traceback" not in stderr


def test_settings_from_the_environment_choose_transport_and_path(run, cli_server):
    server = cli_server([*MCP_TEACH_SERVE, "--port", "0"], MCP_TRANSPORT="streamable_http", MCP_STREAMABLE_PATH="/rpc")
    url = server.url
    assert urlsplit(url).path == "/rpc"

    async def use():
        async with teaching_client(url) as client:
            return (await client.call_tool("calculator_add", {"a": 20, "b": 22})).data

    assert run(use) == 42.0
    assert server.stop()[0] == 0


def test_command_line_parsing_errors(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as no_command:
        cli.main([])
    assert no_command.value.code == 2
    with pytest.raises(SystemExit) as bad_choice:
        cli.main(["serve", "--transport", "tcp"])
    assert bad_choice.value.code == 2
    assert "invalid choice: 'tcp'" in capsys.readouterr().err
    monkeypatch.setenv("MCP_PORT", "70000")
    assert serve.main([]) == 2
    assert "MCP_PORT='70000'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("example.org", False),
    ],
)
def test_loopback_detection(host, loopback):
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
@pytest.mark.skipif(os.name != "posix", reason="Ctrl-C is SIGINT on POSIX")
def test_ctrl_c_the_moment_the_address_appears_stops_the_server(transport: str):
    """The address is printed once the server is up, its Ctrl-C handling in place: Ctrl-C right then stops it. Started
    as a shell's background job or a pytest-xdist worker starts it, Ctrl-C ignored until the server handles it (a
    Ctrl-C that came before was lost, and the server never stopped)."""
    command = [MCP_TEACH, "serve", "--transport", transport, "--port", "0"]
    ignoring = {"preexec_fn": lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)}
    servers = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **ignoring) for _ in "ab"]
    try:
        for server in servers:
            assert b"Ctrl-C stops it" in server.stderr.readline()
            server.send_signal(signal.SIGINT)
        assert [server.wait(timeout=20) for server in servers] == [0, 0]
    finally:
        for server in servers:
            if server.poll() is None:
                server.kill()
                server.wait()
            server.stderr.close()
