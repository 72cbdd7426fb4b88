"""mcp_teach.lessons.l05_terminals: terminal A's server and terminal B's commands, run as real processes."""

from __future__ import annotations

import json

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l05_terminals import plain_environment, run_command, terminal_server


def test_run_command_gives_a_plain_transcript():
    script = "import os; print('\\x1b[1mbold\\x1b[0m', os.environ.get('FORCE_COLOR')); raise SystemExit(4)"
    result = run_command(["python", "-c", script])
    assert result.output == "bold None\n"
    assert result.returncode == 4
    assert repr(result).startswith("$ python -c 'import os;")
    assert repr(result).endswith("bold None\n(exit code 4)")
    assert "FORCE_COLOR" not in plain_environment()


def test_terminal_server_serves_until_the_block_ends(run):
    with terminal_server("streamable-http") as terminal_a:
        assert terminal_a.banner.startswith("mcp-teach calculator: streamable-http on http://127.0.0.1:")
        assert terminal_a.url.endswith("/mcp")

        async def add() -> float:
            async with teaching_client(terminal_a.url) as client:
                return (await client.call_tool("calculator_add", {"a": 1, "b": 2})).data

        assert run(add) == 3.0
    with pytest.raises(RuntimeError, match="did not start"), terminal_server("carrier-pigeon"):
        pass


def test_fastmcp_call_against_a_terminal_server():
    with terminal_server("sse") as terminal_a:
        result = run_command(["fastmcp", "call", terminal_a.url, "calculator_add", "a=1", "b=2"])
    assert result.returncode == 0
    assert json.loads(result.output) == {"result": 3.0}
    assert repr(result).startswith(f"$ fastmcp call {terminal_a.url} calculator_add a=1 b=2\n")
