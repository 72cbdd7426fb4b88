"""The setup lesson's helpers: environment checks with the fix, and the terminal commands it prints start the
server from any folder."""

import json
import shlex
import subprocess
import sys

from support import HANG_TIMEOUT

from mcp_teach.lessons.l00_environment import check_environment, terminal_commands


def test_bad_env_file_is_reported_with_the_variable_and_the_fix(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("MCP_TRANSPORT=tcp\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MCP_TRANSPORT", raising=False)
    rows = dict(check_environment().rows)
    assert rows[".env"].startswith("fix it: MCP_TRANSPORT='tcp' is not valid")
    assert "stdio, sse, streamable-http" in rows[".env"]


def test_api_key_from_env_file_is_never_shown(tmp_path, monkeypatch):
    secret = "sk-test-" + "x" * 30
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={secret}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    shown = check_environment()
    assert secret not in repr(shown) + shown._repr_html_()
    assert "API key set (hidden)" in dict(shown.rows)["LLM backend (notebook 04)"]


def _commands() -> dict[str, list[str]]:
    return {what.split(" ")[0].rstrip(":"): shlex.split(command) for what, command in terminal_commands().rows}


def test_terminal_commands_use_the_kernels_interpreter_by_its_full_path():
    commands = _commands()
    assert list(commands) == ["stdio", "streamable", "SSE"]
    assert all(command[0] == sys.executable for command in commands.values())


def test_the_printed_stdio_command_answers_from_another_folder(tmp_path):
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "terminal", "version": "0"}}
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    answer = subprocess.run(
        _commands()["stdio"], input=request + "\n", capture_output=True, text=True, timeout=HANG_TIMEOUT, cwd=tmp_path
    )
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["result"]["serverInfo"]["name"] == "mcp-teach-calculator"


def test_the_printed_http_command_serves_from_another_folder(tmp_path):
    command = [*_commands()["streamable"], "--port", "0"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "text": True}
    with subprocess.Popen(command, cwd=tmp_path, **quiet) as server:
        try:
            line = server.stderr.readline()
            assert "streamable-http on http://127.0.0.1:" in line, line
        finally:
            server.terminate()
            server.wait(timeout=HANG_TIMEOUT)
