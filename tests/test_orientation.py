"""The setup lesson's checks report real problems with the fix, and every connection works."""

import asyncio

import pytest

from mcp_teach.client import CONNECTIONS
from mcp_teach.lessons.l00_setup import check_environment, try_connection


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


@pytest.mark.parametrize("connection", CONNECTIONS)
def test_each_connection_lists_four_tools_and_adds(connection):
    name, _, first, tools, total, messages = asyncio.run(try_connection(connection))
    assert (name, tools, total) == (connection, 4, 3.0)
    assert first == ("initialize" if connection == "sse" else "server/discover")
    assert messages == (7 if connection == "sse" else 6)
