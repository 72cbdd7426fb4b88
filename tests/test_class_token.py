"""A shared class server can require a bearer token: real HTTP on 127.0.0.1, both transports, servers and clients.

Missing or wrong tokens get 401 with a message that says how to authenticate; the right one gets a working
session; the token never shows in a capture, a log, a banner or an error message.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from mcp.shared.exceptions import MCPError
from support import recorded_text

from mcp_teach.cli import main
from mcp_teach.client import teaching_client
from mcp_teach.serve import main as serve_main
from mcp_teach.transports.class_token import HOW_TO_AUTHENTICATE, MISSING_TOKEN, UNAUTHORIZED, WRONG_TOKEN
from mcp_teach.transports.foreground import run_server
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.redact import REDACTED

TOKEN = "class-token-q7Zp2Lx9Rk4Wm8Tn"  # made up for these tests
WRONG = "wrong-token-B3vN6cY1dF5gH0jK"
HTTP_TRANSPORTS = ["sse", "streamable-http"]
MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def _endpoints(transport: str, url: str) -> list[tuple[str, str]]:
    """Every HTTP endpoint of the transport: streamable HTTP's one URL; SSE's stream and message URLs."""
    if transport == "sse":
        return [("GET", url), ("POST", url.replace("/sse", "/messages/?session_id=0123456789abcdef"))]
    return [("POST", url), ("GET", url)]


def _assert_refused(response: httpx2.Response, message: str, sent: str | None) -> None:
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="mcp-teach"')
    assert ('error="invalid_token"' in challenge) == (message == WRONG_TOKEN)
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": UNAUTHORIZED, "message": message}}
    if sent:
        assert sent not in response.text and sent not in str(response.headers)


REFUSED = [
    ({}, MISSING_TOKEN),
    ({"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}, MISSING_TOKEN),
    ({"Authorization": "Bearer"}, MISSING_TOKEN),  # the scheme alone
    ({"Authorization": f"Bearer {WRONG}"}, WRONG_TOKEN),
    ({"Authorization": f"Bearer {TOKEN[:-1]}"}, WRONG_TOKEN),  # a prefix is not the token
    ({"Authorization": f"Bearer {TOKEN}x"}, WRONG_TOKEN),  # nor is the token with more after it
    ({"Authorization": f"Bearer {TOKEN.upper()}"}, WRONG_TOKEN),  # tokens are case-sensitive
    ({"Authorization": TOKEN}, MISSING_TOKEN),  # the token without the Bearer scheme
]


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
def test_missing_or_wrong_tokens_get_401_saying_how_to_authenticate(run, transport):
    async def scenario() -> int:
        checked = 0
        async with serve_http(transport, token=TOKEN) as url, httpx2.AsyncClient() as http:
            for method, endpoint in _endpoints(transport, url):
                for headers, message in REFUSED:
                    response = await http.request(method, endpoint, json=TOOLS_LIST, headers=headers)
                    _assert_refused(response, message, headers.get("Authorization", "").partition(" ")[2])
                    checked += 1
            # The token is checked before the body is read: an unreadable body is still a 401, not a parse error.
            garbage = await http.post(_endpoints(transport, url)[-1][1], content=b"\xff not json")
            _assert_refused(garbage, MISSING_TOKEN, None)
        return checked

    assert run(scenario) == 2 * len(REFUSED)
    assert "Authorization: Bearer <token>" in HOW_TO_AUTHENTICATE and 'Client(url, auth="<token>")' in MISSING_TOKEN
    assert "MCP_AUTH_TOKEN=<token>" in WRONG_TOKEN


async def _captured_call(transport: str) -> tuple[CaptureTransport, object]:
    async with serve_http(transport, token=TOKEN) as url:
        capture = CaptureTransport(url)
        async with teaching_client(capture, auth=TOKEN) as client:
            await client.list_tools()
            result = await client.call_tool("calculator_add", {"a": 1, "b": 2})
        async with httpx2.AsyncClient() as http:  # the scheme is case-insensitive (RFC 7235)
            lower = await http.request(
                *_endpoints(transport, url)[-1], json=TOOLS_LIST, headers={"Authorization": f"bearer {TOKEN}"}
            )
    assert lower.status_code != 401
    return capture, result


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
def test_the_right_token_gives_a_full_session_and_never_lands_in_the_capture_or_logs(run, tmp_path, caplog, transport):
    caplog.set_level(logging.DEBUG)
    capture, result = run(_captured_call, transport)
    assert result.data == 3
    assert "tools/call" in capture.capture.methods()
    exchanges = capture.capture.http
    assert exchanges and all(e.request_headers["authorization"] == f"Bearer {REDACTED}" for e in exchanges)
    recorded = recorded_text(capture.capture)
    for text in (recorded, caplog.text):
        assert TOKEN not in text
    assert f'"authorization": "Bearer {REDACTED}"' in recorded


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
def test_a_client_without_the_right_token_is_told_what_to_do(run, transport):
    async def attempt(auth: str | None) -> BaseException:
        async with serve_http(transport, token=TOKEN) as url:
            with pytest.raises((MCPError, httpx2.HTTPStatusError)) as raised:
                async with Client(url, auth=auth) as client:
                    await client.list_tools()
        return raised.value

    for auth, message in ((None, MISSING_TOKEN), (WRONG, WRONG_TOKEN)):
        error = run(attempt, auth)
        if transport == "streamable-http":  # mcp's client raises the JSON-RPC error of the 401 body
            assert isinstance(error, MCPError) and error.error.code == UNAUTHORIZED
            assert str(error) == message
        else:  # the SSE client raises on the status of the GET and never reads its body
            assert isinstance(error, httpx2.HTTPStatusError) and error.response.status_code == 401


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
def test_the_host_and_origin_guard_stays_in_front_of_the_token(run, transport):
    async def statuses() -> list[int]:
        async with serve_http(transport, token=TOKEN) as url, httpx2.AsyncClient() as http:
            method, endpoint = _endpoints(transport, url)[-1]
            answers = []
            for auth in ({}, {"Authorization": f"Bearer {TOKEN}"}):
                for bad in ({"Host": "evil.example"}, {"Origin": "http://evil.example"}):
                    response = await http.request(method, endpoint, json=TOOLS_LIST, headers={**auth, **bad})
                    answers.append(response.status_code)
        return answers

    assert run(statuses) == [421, 403, 421, 403]  # the right token does not open the guard


def test_stdio_with_a_token_is_refused_clearly(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MCP_TRANSPORT", raising=False)
    for entry_point, argv in (
        (main, ["serve", "--token", TOKEN]),
        (serve_main, ["--transport", "stdio", "--token", TOKEN]),
    ):
        assert entry_point(argv) == 2
        out, err = capsys.readouterr()
        assert (out, err) == (
            "",
            "mcp-teach: configuration error: --token protects an HTTP server: "
            "add --transport streamable-http or sse, or drop --token\n",
        )
    with pytest.raises(ValueError, match="stdio has no requests to check it on"):
        run_server("stdio", token=TOKEN)


def test_a_malformed_token_option_is_refused_without_repeating_it(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["serve", "--transport", "sse", "--token", "tiny-é"])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert "argument --token: a class token needs at least 8 characters" in err and "(value not shown)" in err
    assert "tiny" not in err


def test_a_students_token_variable_does_not_stop_their_own_stdio_server(run, tmp_path, clean_env):
    """Students set MCP_AUTH_TOKEN to reach the class server; stdio servers they start must keep working."""

    async def call() -> float:
        transport = StdioTransport(
            sys.executable,
            ["-m", "mcp_teach.serve", "--transport", "stdio"],
            env=clean_env(MCP_AUTH_TOKEN=TOKEN),
            cwd=str(tmp_path),
            log_file=tmp_path / "stdio.log",
            keep_alive=False,
        )
        async with Client(transport) as client:
            return (await client.call_tool("calculator_add", {"a": 2, "b": 3})).data

    assert run(call) == 5
    assert TOKEN not in (tmp_path / "stdio.log").read_text(encoding="utf-8")


async def _check_cli_server(url: str, allowed: str, refused: str | None) -> None:
    async with Client(url, auth=allowed) as client:
        assert (await client.call_tool("calculator_multiply", {"a": 3, "b": 4})).data == 12
    with pytest.raises((MCPError, httpx2.HTTPStatusError)):
        async with Client(url, auth=refused) as client:
            await client.list_tools()


def test_terminal_servers_take_the_token_from_the_variable_or_the_option(run, cli_server):
    from_env = cli_server([MCP_TEACH, "serve", "--transport", "streamable-http", "--port", "0"], MCP_AUTH_TOKEN=TOKEN)
    # The option wins over the variable (WRONG here, which the server must then refuse).
    from_option = cli_server(
        [sys.executable, "-m", "mcp_teach.serve", "--transport", "sse", "--port", "0", "--token", TOKEN],
        MCP_AUTH_TOKEN=WRONG,
    )
    run(_check_cli_server, from_env.url, TOKEN, None)
    run(_check_cli_server, from_option.url, TOKEN, WRONG)
    for server in (from_env, from_option):
        code, stdout, stderr = server.stop()
        assert code == 0 and stdout == ""
        assert "(class token required; Ctrl-C stops it)" in stderr
        assert TOKEN not in stderr and WRONG not in stderr


@pytest.fixture
def course_env(monkeypatch, tmp_path):
    """No .env, no course settings: the offline model, and MCP_AUTH_TOKEN only where a test sets it."""
    monkeypatch.chdir(tmp_path)
    for name in ("MCP_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "LLM_MAX_TOOL_ROUNDS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
def test_chat_and_demo_send_the_token_from_the_variable_and_explain_a_401(run, capsys, course_env, transport):
    questions = iter(["What is 1 + 2?", "exit"])
    course_env.setattr("builtins.input", lambda prompt: next(questions))

    async def commands() -> list[tuple[int, str, str]]:
        outcomes = []
        async with serve_http(transport, token=TOKEN) as url:
            for token in (None, TOKEN):
                if token:
                    course_env.setenv("MCP_AUTH_TOKEN", token)
                for command in ("chat", "demo"):
                    code = await anyio.to_thread.run_sync(main, [command, "--url", url])
                    outcomes.append((code, *capsys.readouterr()))
        return outcomes

    (chat_code, _, chat_err), (demo_code, _, demo_err), chat_ok, demo_ok = run(commands)
    assert chat_code == demo_code == 1
    for err in (chat_err, demo_err):
        if transport == "streamable-http":
            assert err == f"mcp-teach: MCP error: {MISSING_TOKEN}\n"
        else:
            assert err.endswith(f"/sse answered 401 Unauthorized. {HOW_TO_AUTHENTICATE}\n")
    assert chat_ok[0] == demo_ok[0] == 0
    assert "sending the class token from MCP_AUTH_TOKEN" in chat_ok[1]
    assert "assistant> " in chat_ok[1] and "3" in chat_ok[1].split("assistant> ")[1]
    assert "tools/call" in demo_ok[1]
    for _, out, err in (chat_ok, demo_ok):
        assert TOKEN not in out + err
