"""mcp_teach.display.console: terminal A's server and terminal B's commands, run as real processes."""

from __future__ import annotations

import gc
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.display.console import (
    plain_environment,
    run_command,
    shown_command,
    start_console,
    start_terminal_server,
)
from mcp_teach.wire.modern_post import modern_post


def test_run_command_gives_a_plain_transcript():
    script = "import os; print('\\x1b[1mbold\\x1b[0m', os.environ.get('FORCE_COLOR')); raise SystemExit(4)"
    result = run_command(["python", "-c", script])
    assert result.output == "bold None\n"
    assert result.returncode == 4
    assert repr(result).startswith("$ python \\\n    -c 'import os;")  # a long command: one option per line
    assert repr(result).endswith("bold None\n(exit code 4)")
    assert "FORCE_COLOR" not in plain_environment()


def test_a_terminal_server_serves_a_client_until_stopped(run):
    terminal_a = start_terminal_server("streamable-http")
    try:
        assert terminal_a.banner.startswith("mcp-teach calculator: streamable-http on http://127.0.0.1:")
        assert terminal_a.url.endswith("/mcp")

        async def add() -> float:
            async with teaching_client(terminal_a.url) as client:
                return (await client.call_tool("calculator_add", {"a": 1, "b": 2})).data

        assert run(add) == 3.0
    finally:
        terminal_a.stop()
    with pytest.raises(RuntimeError, match="did not start"):
        start_terminal_server("carrier-pigeon")


def test_fastmcp_call_against_a_terminal_server():
    terminal_a = start_terminal_server("sse")
    try:
        result = run_command(["fastmcp", "call", terminal_a.url, "calculator_add", "a=1", "b=2"])
    finally:
        terminal_a.stop()
    assert result.returncode == 0
    assert json.loads(result.output) == {"result": 3.0}
    assert repr(result).startswith(f"$ fastmcp call {terminal_a.url} calculator_add a=1 b=2\n")


def test_a_started_server_runs_until_stopped_and_shows_terminal_a():
    terminal_a = start_terminal_server("streamable-http")
    assert terminal_a.running and terminal_a.url.endswith("/mcp")
    assert repr(terminal_a).endswith("(Ctrl-C stops it)\n(running)")
    transcript = repr(terminal_a.stop())
    assert not terminal_a.running
    assert transcript.startswith("$ mcp-teach serve --transport streamable-http --port 0\nmcp-teach calculator:")
    assert transcript.endswith("^C\n(stopped, exit code 0)")
    assert repr(terminal_a).endswith("(stopped, exit code 0)")


def test_a_forgotten_server_is_stopped_when_collected():
    terminal_a = start_terminal_server("sse")
    process = terminal_a._process
    del terminal_a
    gc.collect()
    assert process.poll() is not None


def test_long_commands_are_shown_one_option_per_line():
    assert shown_command(["fastmcp", "list", "http://x/mcp"]) == "fastmcp list http://x/mcp"
    long = ["curl", "http://127.0.0.1:1/mcp", "--silent", "--header", "a: " + "b" * 90, "--data", '{"x": 1}']
    assert shown_command(long).splitlines() == [
        "curl http://127.0.0.1:1/mcp \\",
        "    --silent \\",
        f"    --header 'a: {'b' * 90}' \\",
        """    --data '{"x": 1}'""",
    ]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_calls_a_tool_on_a_terminal_server_in_one_post():
    add = modern_post("tools/call", {"name": "calculator_add", "arguments": {"a": 1, "b": 2}})
    terminal_a = start_terminal_server("streamable-http")
    try:
        headers = [argument for name, value in add.headers.items() for argument in ("--header", f"{name}: {value}")]
        result = run_command(["curl", terminal_a.url, "--silent", "--show-error", *headers, "--data", add.json()])
    finally:
        terminal_a.stop()
    assert result.returncode == 0
    reply = json.loads(result.output)
    assert reply["id"] == 1 and reply["result"]["structuredContent"] == {"result": 3.0}


def test_a_command_that_does_not_start_is_named_without_its_options():
    command = [sys.executable, "-c", "raise SystemExit(3)", "--api-key", "sk-made-up-key-000000000000"]
    with pytest.raises(RuntimeError) as refused:
        start_console(command, re.compile("never printed"))
    assert str(refused.value) == f"{Path(sys.executable).name} did not start: no output"
