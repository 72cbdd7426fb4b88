"""Settings come from .env and the environment, the environment wins, and bad values are named clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_teach.config import OFFLINE_MODEL, ConfigError, Settings, load_settings

KEY = "sk-test-abcdefghijklmnopqrstuvwx"


def write_env(tmp_path: Path, text: str) -> Path:
    path = tmp_path / ".env"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_env_file_or_variables(tmp_path):
    settings = load_settings(env_file=tmp_path / "missing.env", environ={})
    assert settings == Settings()
    assert settings.mcp_transport == "stdio"
    assert (settings.mcp_host, settings.mcp_port) == ("127.0.0.1", 8000)
    assert (settings.mcp_sse_path, settings.mcp_streamable_path) == ("/sse", "/mcp")
    assert settings.llm_max_tool_rounds == 5
    assert settings.openai_model == OFFLINE_MODEL
    assert settings.uses_offline_model
    assert settings.env_file is None
    assert settings.path_for("sse") == "/sse"
    assert settings.path_for("streamable-http") == "/mcp"


def test_values_come_from_the_env_file(tmp_path):
    path = write_env(
        tmp_path,
        "# course settings\n"
        "MCP_TRANSPORT=sse\n"
        "MCP_HOST=localhost\n"
        "MCP_PORT=9123\n"
        "MCP_SSE_PATH=/events\n"
        "MCP_STREAMABLE_PATH=/rpc\n"
        "LLM_MAX_TOOL_ROUNDS=3\n"
        "OPENAI_BASE_URL=http://127.0.0.1:11434/v1/\n"
        "OPENAI_MODEL=llama3\n",
    )
    settings = load_settings(env_file=path, environ={})
    assert settings.mcp_transport == "sse"
    assert settings.mcp_host == "localhost"
    assert settings.mcp_port == 9123
    assert settings.path_for("sse") == "/events"
    assert settings.path_for("streamable-http") == "/rpc"
    assert settings.llm_max_tool_rounds == 3
    assert settings.openai_base_url == "http://127.0.0.1:11434/v1"  # trailing slash dropped
    assert settings.openai_model == "llama3"
    assert settings.env_file == path
    assert not settings.uses_offline_model


def test_real_environment_wins_over_env_file(tmp_path):
    path = write_env(tmp_path, "MCP_TRANSPORT=sse\nMCP_PORT=9000\nOPENAI_MODEL=from-file\n")
    settings = load_settings(env_file=path, environ={"MCP_PORT": "9001", "OPENAI_MODEL": "from-env"})
    assert (settings.mcp_transport, settings.mcp_port, settings.openai_model) == ("sse", 9001, "from-env")


def test_nearest_env_file_is_found_from_the_working_directory(tmp_path, monkeypatch):
    write_env(tmp_path, "MCP_PORT=9321\n")
    nested = tmp_path / "notebooks" / "lesson"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    settings = load_settings(environ={})
    assert settings.mcp_port == 9321
    assert settings.env_file == tmp_path / ".env"


@pytest.mark.parametrize("spelling", ["streamable-http", "streamable_http", "STREAMABLE_HTTP", " sse ", "Stdio"])
def test_transport_spellings(spelling):
    expected = spelling.strip().lower().replace("_", "-")
    assert load_settings(env_file="/nonexistent/.env", environ={"MCP_TRANSPORT": spelling}).mcp_transport == expected


@pytest.mark.parametrize(
    ("name", "value", "valid"),
    [
        ("MCP_TRANSPORT", "tcp", "one of stdio, sse, streamable-http"),
        ("MCP_PORT", "abc", "a whole number from 1 to 65535"),
        ("MCP_PORT", "70000", "a whole number from 1 to 65535"),
        ("MCP_PORT", "0", "a whole number from 1 to 65535"),
        ("MCP_SSE_PATH", "sse", "a URL path starting with '/'"),
        ("MCP_STREAMABLE_PATH", "/m cp", "a URL path starting with '/'"),
        ("LLM_MAX_TOOL_ROUNDS", "0", "a whole number from 1 to 50"),
        ("LLM_MAX_TOOL_ROUNDS", "many", "a whole number from 1 to 50"),
        ("OPENAI_BASE_URL", "ftp://x", "an http:// or https:// URL"),
    ],
)
def test_bad_values_name_the_variable_and_what_is_valid(tmp_path, name, value, valid):
    with pytest.raises(ConfigError) as raised:
        load_settings(env_file=tmp_path / "missing.env", environ={name: value})
    assert str(raised.value) == f"{name}={value!r} is not valid: expected {valid}."
    assert isinstance(raised.value, ValueError)


def test_a_bad_value_in_the_env_file_names_the_file(tmp_path):
    path = write_env(tmp_path, "MCP_PORT=eighty\n")
    with pytest.raises(ConfigError, match=r"MCP_PORT='eighty' is not valid: .* \(read from .*\.env\)$"):
        load_settings(env_file=path, environ={})


def test_empty_values_fall_back_to_defaults(tmp_path):
    settings = load_settings(
        env_file=tmp_path / "none", environ={"MCP_PORT": "", "MCP_TRANSPORT": "  ", "OPENAI_API_KEY": ""}
    )
    assert (settings.mcp_port, settings.mcp_transport, settings.openai_api_key) == (8000, "stdio", None)


def test_api_key_never_shows_in_repr_or_description(tmp_path):
    path = write_env(tmp_path, f"OPENAI_API_KEY={KEY}\n")
    settings = load_settings(env_file=path, environ={})
    assert settings.openai_api_key == KEY
    assert KEY not in repr(settings)
    assert KEY not in str(settings)
    description = settings.describe_llm()
    assert KEY not in description
    assert (
        description
        == f"OpenAI-compatible provider at https://api.openai.com/v1, model {OFFLINE_MODEL}, API key set (hidden)"
    )
    assert not settings.uses_offline_model


def test_describe_llm_for_offline_and_keyless_local_provider():
    offline = load_settings(env_file="/nonexistent/.env", environ={})
    assert offline.describe_llm() == f"offline teaching model ({OFFLINE_MODEL}), no API key needed"
    local = load_settings(env_file="/nonexistent/.env", environ={"OPENAI_BASE_URL": "http://localhost:8080/v1"})
    assert (
        local.describe_llm()
        == f"OpenAI-compatible provider at http://localhost:8080/v1, model {OFFLINE_MODEL}, no API key"
    )


CLASS_TOKEN = "class-token-0123456789abcdef"


def test_class_token_comes_from_env_file_or_environment_and_never_shows(tmp_path):
    path = write_env(tmp_path, "MCP_AUTH_TOKEN=from-the-env-file-123\n")
    assert load_settings(env_file=path, environ={}).mcp_auth_token == "from-the-env-file-123"
    settings = load_settings(env_file=path, environ={"MCP_AUTH_TOKEN": f" {CLASS_TOKEN} "})
    assert settings.mcp_auth_token == CLASS_TOKEN
    assert CLASS_TOKEN not in repr(settings)
    assert load_settings(env_file=tmp_path / "none", environ={"MCP_AUTH_TOKEN": ""}).mcp_auth_token is None


@pytest.mark.parametrize("bad", ["short12", "has space inside", "tök-with-umlaut", "colon:in-the-middle"])
def test_a_bad_class_token_is_refused_without_repeating_it(tmp_path, bad):
    with pytest.raises(ConfigError) as raised:
        load_settings(env_file=tmp_path / "none", environ={"MCP_AUTH_TOKEN": bad})
    message = str(raised.value)
    assert message.startswith("MCP_AUTH_TOKEN (value not shown) is not valid: expected at least 8 characters")
    assert "secrets.token_urlsafe" in message
    assert bad not in message
