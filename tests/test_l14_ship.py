"""Shipping the capstone: its console script over stdio, the hosts' configs through the tap, MCP Inspector's CLI,
and the same server over streamable HTTP behind the class token.

The script is tested as pip's generated wrapper runs it (``sys.exit(capstone_main())`` in this Python): the
shared environment was installed before ``[project.scripts]`` named it, so no ``mcp-teach-capstone`` file is
there to start. The Inspector's tests need ``npx`` and, once, the npm registry; they skip, saying which, without.
"""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path

import httpx2
import pytest
from fastmcp import Client
from support import initialize, talk_as_a_host

from mcp_teach.lessons.l14_ship import (
    ENTRY,
    INSPECTOR_SESSION,
    claude_desktop_config,
    inspector_session,
    print_host_configs,
    record_inspector_session,
    run_inspector,
    vscode_config,
)
from mcp_teach.transports.class_token import MISSING_TOKEN
from mcp_teach.wire.host_tap_recording import load_tap

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "class-token-Capst0neShip9Lq"  # made up for these tests
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def script_target() -> str:
    """``mcp-teach-capstone``'s ``module:function`` from pyproject.toml."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    return scripts["mcp-teach-capstone"]


def as_script() -> list[str]:
    """What pip's console-script wrapper for ``mcp-teach-capstone`` runs, in this Python."""
    module, function = script_target().split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())"]


def handshake(peer) -> tuple[dict, dict]:
    peer.send(initialize("2025-11-25"))
    hello = json.loads(peer.receive())
    peer.send(INITIALIZED)
    peer.send(TOOLS_LIST)
    return hello, json.loads(peer.receive())


def test_the_script_serves_the_capstone_over_stdio_by_default(json_line_peer) -> None:
    assert script_target() == "mcp_teach.serve:capstone_main"
    peer = json_line_peer(as_script())
    hello, tools = handshake(peer)
    assert hello["result"]["serverInfo"] == {"name": "mcp-teach-capstone", "version": "1.0.0"}
    names = [tool["name"] for tool in tools["result"]["tools"]]
    assert "test_simple_text" in names and "test_error_handling" in names
    assert peer.close_stdin() == 0


@pytest.mark.parametrize("config", [claude_desktop_config, vscode_config])
def test_each_host_config_parses_and_its_command_starts_the_server_through_the_tap(tmp_path, config) -> None:
    record = tmp_path / "session.jsonl"
    text = json.dumps(config(record))
    entries = json.loads(text)["mcpServers" if config is claude_desktop_config else "servers"]
    entry = entries[ENTRY]
    assert Path(entry["command"]).is_absolute() and entry["args"][:3] == ["tap", "--out", str(record)]
    if config is vscode_config:
        assert entry["type"] == "stdio" and entry["env"] == {"GITHUB_TOKEN": "${input:github-token}"}
    answers, returncode, stderr = talk_as_a_host([entry["command"], *entry["args"]], cwd=tmp_path)
    assert returncode == 0, stderr
    assert answers[0]["result"]["serverInfo"]["name"] == "mcp-teach-capstone"
    sent = [wire.message["method"] for wire in load_tap(record).messages if "method" in wire.message]
    assert sent == ["initialize", "notifications/initialized", "tools/list"]


def test_the_printed_configs_are_json_under_each_hosts_key(tmp_path, capsys) -> None:
    print_host_configs(tmp_path)
    printed = capsys.readouterr().out
    blocks = [block for block in printed.split("\n\n") if block.strip()]
    assert blocks[0].startswith("Claude Desktop: macOS: ~/Library/Application Support/Claude/")
    claude = json.loads(blocks[0].split("\n", 1)[1])
    vscode = json.loads(blocks[1].split("\n", 1)[1])
    assert list(claude) == ["mcpServers"] and list(vscode) == ["inputs", "servers"]
    assert "GITHUB_TOKEN" not in json.dumps(claude)  # Claude Desktop's file cannot ask for a secret


@pytest.fixture(scope="module")
def inspector() -> None:
    """Skip, saying why, when MCP Inspector's CLI cannot run here (no npx, or no registry and no cached copy)."""
    if shutil.which("npx", path=str(Path(sys.executable).parent)) is None and shutil.which("npx") is None:
        pytest.skip('npx is not installed: pip install -e ".[capstone]" brings Node 24 with npx')
    done = run_inspector("--version", server=[])
    if done.returncode != 0:
        pytest.skip(f"MCP Inspector's CLI does not start (no network and not in npx's cache?): {done.stderr[-300:]}")


def test_the_inspector_calls_the_capstones_tool_over_stdio(inspector) -> None:
    done = run_inspector("--method", "tools/call", "--tool-name", "test_simple_text", server=as_script())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "content": [{"type": "text", "text": "This is a simple text response for testing."}],
        "isError": False,
    }


def test_a_recorded_inspector_session_matches_the_stored_one(inspector, tmp_path) -> None:
    record = tmp_path / "inspector.jsonl"
    record_inspector_session(record, [sys.executable, "-m", "mcp_teach.serve", "--server", "capstone"])
    fresh, stored = load_tap(record), inspector_session()
    # A change to the capstone's tools changes tools/list: record the stored session again (record_inspector_session).
    assert [m.message for m in fresh.messages] == [m.message for m in stored.messages]
    assert f'"command": ["{Path(sys.executable).name}", "-m", "mcp_teach.serve"' in record.read_text()


def test_the_stored_session_is_the_inspectors_handshake_list_and_call() -> None:
    methods = [m.message.get("method") for m in inspector_session().messages if "method" in m.message]
    assert methods[:4] == ["initialize", "notifications/initialized", "logging/setLevel", "tools/list"]
    assert methods[-1] == "tools/call"
    stored = INSPECTOR_SESSION.read_text()
    assert stored.count('"type": "tap"') == 2  # two connections: list, then call
    assert "/home/" not in stored and "/work/" not in stored and "Bearer" not in stored


@pytest.fixture
def capstone_over_http(cli_server):
    """The capstone's script over streamable HTTP on a free port, the class token from MCP_AUTH_TOKEN."""
    server = cli_server([*as_script(), "--transport", "streamable-http", "--port", "0"], MCP_AUTH_TOKEN=TOKEN)
    yield server.url
    server.stop()


def test_over_http_without_the_token_it_is_401_and_with_it_tools_list_works(run, capstone_over_http) -> None:
    url = capstone_over_http
    refused = httpx2.post(url, json=initialize("2025-11-25"), headers={"Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401
    assert refused.json()["error"]["message"] == MISSING_TOKEN

    async def tool_names() -> list[str]:
        async with Client(url, auth=TOKEN) as client:
            return [tool.name for tool in await client.list_tools()]

    assert "test_simple_text" in run(tool_names)


def test_the_inspector_sends_the_class_token_as_a_header(inspector, capstone_over_http) -> None:
    url = capstone_over_http
    header = f"Authorization: Bearer {TOKEN}"
    listed = run_inspector("--transport", "http", "--method", "tools/list", "--header", header, server=[url])
    assert listed.returncode == 0, listed.stderr
    assert "test_simple_text" in [tool["name"] for tool in json.loads(listed.stdout)["tools"]]
    # Without it the server's 401 sends the Inspector to OAuth, which it will not start without a terminal.
    refused = run_inspector("--transport", "http", "--method", "tools/list", server=[url])
    assert refused.returncode != 0
    assert json.loads(refused.stderr.splitlines()[-1])["error"]["code"] == "auth_required"
    assert TOKEN not in refused.stdout + refused.stderr
