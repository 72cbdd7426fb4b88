"""Lesson 14, shipping the capstone: the hosts' configuration files, MCP Inspector's CLI, a recorded host session.

A host (Claude Desktop, VS Code) starts a stdio server from a ``command`` and ``args`` in its JSON configuration;
the course wraps that command in ``mcp-teach tap`` so what the host really sends is recorded. Claude Desktop's
file has ``mcpServers`` (macOS ``~/Library/Application Support/Claude/claude_desktop_config.json``, Windows
``%APPDATA%\\Claude\\claude_desktop_config.json``; there is no Linux build), VS Code's ``.vscode/mcp.json`` has
``servers`` with ``type: "stdio"`` and ``inputs`` for secrets the editor asks for (modelcontextprotocol.io, "Connect
to local MCP servers"; code.visualstudio.com/docs/copilot/customization/mcp-servers). MCP Inspector's CLI
(``npx @modelcontextprotocol/inspector --cli``) is a real client from the command line: the stored
:data:`INSPECTOR_SESSION` is what it sent and got through the tap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_teach.display.console import console_script
from mcp_teach.wire.host_tap_recording import TapCapture, load_tap

#: The Inspector version the stored session was recorded with (its CLI runs on Node 20 and later).
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
#: The entry's name in both hosts' files: the user's name for the server, not the server's own.
ENTRY = "capstone-tapped"
#: What MCP Inspector's CLI sent and received through ``mcp-teach tap``: ``tools/list``, then ``tools/call``.
INSPECTOR_SESSION = Path(__file__).with_name("l14_inspector_session.jsonl")
CONFIG_FILES = {
    "Claude Desktop": (
        "macOS: ~/Library/Application Support/Claude/claude_desktop_config.json; "
        "Windows: %APPDATA%\\Claude\\claude_desktop_config.json (Settings → Developer → Edit Config)"
    ),
    "VS Code": '.vscode/mcp.json in the workspace, or the profile\'s mcp.json ("MCP: Open User Configuration")',
}


def capstone_command() -> list[str]:
    """How to start the capstone: its installed ``mcp-teach-capstone`` script, else this Python's ``-m`` form."""
    try:
        return [console_script("mcp-teach-capstone")]
    except FileNotFoundError:  # installed before the script existed: ``pip install -e .`` again adds it
        return [sys.executable, "-m", "mcp_teach.serve", "--server", "capstone"]


def tapped(command: list[str], record: Path) -> dict[str, Any]:
    """``command`` started through ``mcp-teach tap``, which appends every message to ``record`` (absolute paths:
    a host does not start in your folder)."""
    return {"command": console_script("mcp-teach"), "args": ["tap", "--out", str(record.resolve()), "--", *command]}


def claude_desktop_config(record: Path) -> dict[str, Any]:
    """``claude_desktop_config.json``: ``mcpServers`` entries with ``command``, ``args`` and ``env``.

    The file has no way to ask for a secret, so no token is written into it: without ``GITHUB_TOKEN`` the
    GitHub tool gets GitHub's 60 requests an hour.
    """
    entry = {**tapped(capstone_command(), record), "env": {"GITHUB_API_URL": "https://api.github.com"}}
    return {"mcpServers": {ENTRY: entry}}


def vscode_config(record: Path) -> dict[str, Any]:
    """``.vscode/mcp.json``: ``servers`` with ``type: "stdio"``; the token is an input VS Code asks for once and
    keeps in its secret storage, never in the file."""
    entry = {"type": "stdio", **tapped(capstone_command(), record), "env": {"GITHUB_TOKEN": "${input:github-token}"}}
    token = {"type": "promptString", "id": "github-token", "description": "GitHub token (optional)", "password": True}
    return {"inputs": [token], "servers": {ENTRY: entry}}


def print_host_configs(folder: Path) -> None:
    """Print both hosts' configuration for this machine, each recording to a file in ``folder``."""
    for host, config in (
        ("Claude Desktop", claude_desktop_config(folder / "claude-session.jsonl")),
        ("VS Code", vscode_config(folder / "vscode-session.jsonl")),
    ):
        print(f"{host}: {CONFIG_FILES[host]}")
        print(json.dumps(config, indent=2, ensure_ascii=False), end="\n\n")


def inspector_command(*arguments: str, server: list[str]) -> list[str]:
    """``npx --yes @modelcontextprotocol/inspector --cli ARGUMENTS -- SERVER...`` (``--`` keeps the server's own
    options, ``--server`` among them, from being read as the Inspector's)."""
    return [console_script("npx"), "--yes", INSPECTOR, "--cli", *arguments, "--", *server]


def run_inspector(*arguments: str, server: list[str], timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run MCP Inspector's CLI; the ``npx`` beside this Python comes first on ``PATH``, with the ``node`` it needs."""
    command = inspector_command(*arguments, server=server)
    path = os.pathsep.join([str(Path(command[0]).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path, "NO_COLOR": "1"}
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, check=False)


def record_inspector_session(record: Path, server: list[str]) -> None:
    """Record what the Inspector's CLI sends a server started through the tap: ``tools/list``, then a
    ``tools/call``, each its own connection. The commands are kept by name (``python``, not its path), so the
    record says nothing about the machine it was made on."""
    tap = [console_script("mcp-teach"), "tap", "--out", str(record), "--", *server]
    for arguments in (("--method", "tools/list"), ("--method", "tools/call", "--tool-name", "test_simple_text")):
        done = run_inspector(*arguments, server=tap)
        if done.returncode != 0:
            raise RuntimeError(f"the Inspector's CLI failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    records = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    for header in (item for item in records if item["type"] == "tap"):
        header["command"][0] = Path(header["command"][0]).name
    record.write_text("".join(json.dumps(item) + "\n" for item in records), encoding="utf-8")


def inspector_session() -> TapCapture:
    """The stored Inspector session, as a Capture for ``show`` and ``draw_sequence``."""
    return load_tap(INSPECTOR_SESSION)
