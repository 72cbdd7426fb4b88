"""``mcp-teach tap`` records no credential: a whole OAuth flow, custom credential headers, stdio arguments and logs.

The secrets are collected on the unredacted side (what the client really sent and received), then looked for in
the recording and in the HAR made from it. Recordings are readable by their owner only.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx2
import pytest
from fastmcp.client.transports import StreamableHttpTransport
from support import HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l12_oauth import HeadlessBrowser, oauth_client_provider, oauth_server
from mcp_teach.lessons.l12_oauth_views import OAuthFlow
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.har import to_har, write_har
from mcp_teach.wire.host_tap_recording import load_tap
from mcp_teach.wire.http_recording import HttpExchange, RecordingHTTPTransport

PYTHON = sys.executable
MCP_TEACH = str(Path(PYTHON).with_name("mcp-teach"))
#: Values no shape rule knows: only a name (of a header, an option, a variable) marks them as credentials.
API_KEY, TOKEN, AUTH_HEADER, API_HEADER = "kx-3c9f1e7a05", "tv-5d2b8e41c7", "ah-0e6f2a9d11", "at-7b1c4e8f23"
#: A GitHub-shaped token, built here rather than written out: its shape alone marks it.
GITHUB_SHAPED = "ghp_" + "A1b2" * 9
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"  # a private key's first line of base64 (made up)
#: A stdio "server" that logs its credentials on stderr, the way careless servers do, then echoes stdin.
LEAKY_SERVER = (
    "import sys\n"
    "args = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n"
    "sys.stderr.write(f'OPENAI_API_KEY={args[\"--api-key\"]}\\n')\n"
    f"sys.stderr.write('connecting with {GITHUB_SHAPED}\\n')\n"
    f"sys.stderr.write('-----BEGIN PRIVATE KEY-----\\n{PEM_BODY}\\n-----END PRIVATE KEY-----\\n')\n"
    "sys.stderr.flush()\n"
    "for line in sys.stdin.buffer:\n"
    "    sys.stdout.buffer.write(line); sys.stdout.flush()\n"
)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_absent(secrets: list[str], *texts: str) -> None:
    for secret in secrets:
        for text in texts:
            assert secret not in text and quote(secret, safe="") not in text


class _ThroughTap(httpx2.AsyncHTTPTransport):
    """Sends what is meant for the upstream to the tap instead: the client uses the tap as its proxy.

    Needed because the authorization server's metadata names its own origin (the upstream's), which the client
    then calls directly; so every step of the flow, discovery and token requests included, crosses the tap.
    """

    def __init__(self, upstream_port: int, tap_port: int) -> None:
        super().__init__()
        self._upstream_port, self._tap_port = upstream_port, tap_port

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.port == self._upstream_port:
            request.url = request.url.copy_with(port=self._tap_port)
        return await super().handle_async_request(request)


async def _oauth_flow_through_tap(out: Path, cli_server) -> OAuthFlow:
    """The lesson 12 flow (l12_oauth.authorize_and_call's steps) with the tap between client and servers."""
    async with oauth_server() as server:
        tap = cli_server([MCP_TEACH, "tap", "--out", str(out), "--listen", "127.0.0.1:0", "--upstream", server.url])
        tap_port = httpx2.URL(await anyio.to_thread.run_sync(lambda: tap.url)).port
        recorded: list[HttpExchange] = []  # the unredacted exchanges: where the real secrets come from
        recorder = RecordingHTTPTransport(recorded.append, redact=False, inner=_ThroughTap(server.port, tap_port))
        browser = HeadlessBrowser(recorder)
        auth = oauth_client_provider(server, browser)
        factory = functools.partial(httpx2.AsyncClient, transport=recorder)
        transport = StreamableHttpTransport(server.url, auth=auth, httpx_client_factory=factory)
        async with teaching_client(transport) as client:
            assert (await client.call_tool("calculator_add", {"a": 2, "b": 3})).data == 5
        code, _, _ = await anyio.to_thread.run_sync(tap.stop)
        assert code == 0
        return OAuthFlow.from_raw(recorded, server.port)


def test_an_oauth_flow_through_the_http_tap_leaves_no_credential_in_the_recording_or_the_har(tmp_path, run, cli_server):
    out = tmp_path / "oauth.jsonl"
    flow = run(_oauth_flow_through_tap, out, cli_server)
    kinds = set(flow.secrets.values())
    assert {"<access-token>", "<refresh-token>", "<code>", "<code-verifier>"} <= kinds
    recorded = load_tap(out)
    paths = [httpx2.URL(exchange.url).path for exchange in recorded.http]
    assert {"/register", "/authorize", "/token", "/mcp"} <= set(paths)  # the whole flow crossed the tap
    har_path = write_har(recorded, tmp_path / "oauth.har")
    har = json.dumps(to_har(recorded))
    assert_absent(list(flow.secrets), out.read_text(), har, har_path.read_text())
    # what teaches stays readable
    (token,) = [e for e in recorded.http if e.target.startswith("/token")]
    answer = json.loads(token.response_body)
    assert answer["token_type"] == "Bearer" and answer["expires_in"] == 3600 and answer["scope"] == "mcp:tools"
    assert "code_verifier=[REDACTED]" in token.request_body and "grant_type=authorization_code" in token.request_body
    (authorize,) = [e for e in recorded.http if e.target.startswith("/authorize")]
    assert "code_challenge_method=S256" in authorize.target
    assert "code=[REDACTED]" in authorize.response_headers["location"]
    assert "resource_metadata=" in recorded.http[0].response_headers["www-authenticate"]
    assert recorded.http[-1].request_headers["authorization"] == "Bearer [REDACTED]"
    assert mode_of(out) == mode_of(har_path) == 0o600


def test_custom_credential_headers_are_redacted_by_the_http_tap(tmp_path, run, cli_server):
    out = tmp_path / "headers.jsonl"

    async def session() -> int:
        async with serve_http("streamable-http") as upstream:
            tap = cli_server([MCP_TEACH, "tap", "--out", str(out), "--listen", "127.0.0.1:0", "--upstream", upstream])
            url = await anyio.to_thread.run_sync(lambda: tap.url)
            headers = {"X-Auth-Token": AUTH_HEADER, "X-Api-Token": API_HEADER, "accept": "application/json"}
            async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
                response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
            await anyio.to_thread.run_sync(tap.stop)
            return response.status_code

    assert run(session) != 502  # the request reached the upstream
    (exchange,) = load_tap(out).http
    assert exchange.request_headers["x-auth-token"] == exchange.request_headers["x-api-token"] == "[REDACTED]"
    assert_absent([AUTH_HEADER, API_HEADER], out.read_text(), json.dumps(to_har(load_tap(out))))


def test_the_stdio_tap_records_no_credential_from_arguments_or_stderr(tmp_path):
    out = tmp_path / "stdio.jsonl"
    server = [PYTHON, "-c", LEAKY_SERVER, "--api-key", API_KEY, "--token=" + TOKEN]
    done = subprocess.run(
        [MCP_TEACH, "tap", "--out", str(out), "--", *server], input=b"{}\n", capture_output=True, timeout=HANG_TIMEOUT
    )
    assert done.returncode == 0 and done.stdout == b"{}\n"
    assert API_KEY.encode() in done.stderr and GITHUB_SHAPED.encode() in done.stderr  # the host still gets all
    recorded = load_tap(out)
    assert recorded.header["command"][-3:] == ["--api-key", "[REDACTED]", "--token=[REDACTED]"]
    assert recorded.log == ["OPENAI_API_KEY=[REDACTED]\n", "connecting with [REDACTED]\n", *["[REDACTED]\n"] * 3]
    assert_absent([API_KEY, TOKEN, GITHUB_SHAPED, PEM_BODY], out.read_text())
    assert mode_of(out) == 0o600


def test_the_stdio_tap_hides_short_and_uncommon_credential_options_and_tool_arguments(tmp_path):
    out = tmp_path / "options.jsonl"
    options = ["-k", "ok-1a7", "--bearer", "ob-2b8", "--pass", "op-3c9", "--pin", "49518273", "--port", "8"]
    arguments = {"pin": "73162948", "passphrase": "pp-4d0", "auth_token": "at-5e1", "sessionToken": "st-6f2"}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "login", "arguments": arguments}}
    line = json.dumps(call).encode() + b"\n"
    server = [PYTHON, "-c", "import sys; sys.stdout.write(sys.stdin.readline())", *options]
    done = subprocess.run(
        [MCP_TEACH, "tap", "--out", str(out), "--", *server], input=line, capture_output=True, timeout=HANG_TIMEOUT
    )
    assert done.returncode == 0 and done.stdout == line  # the server and the host still get everything
    recorded = load_tap(out)
    assert recorded.header["command"][-10:] == [
        *("-k", "[REDACTED]", "--bearer", "[REDACTED]", "--pass", "[REDACTED]", "--pin", "[REDACTED]", "--port", "8")
    ]
    assert [message.message["params"]["arguments"] for message in recorded.messages] == [
        dict.fromkeys(arguments, "[REDACTED]")
    ] * 2
    assert_absent([*options[1:8:2], *arguments.values()], out.read_text())


def test_one_huge_stdio_line_is_cut_in_the_recording_which_says_so(tmp_path):
    out = tmp_path / "huge.jsonl"
    pad = "x" * (1024 * 1024 - 40)  # the credential straddles the first mebibyte
    line = f'{{"pad": "{pad}", "access_token": "cut-Secret-4Hq8", "more": "{"y" * 1024 * 1024}"}}\n'.encode()
    server = [PYTHON, "-c", "import sys; sys.stdout.write(sys.stdin.readline())"]
    done = subprocess.run(
        [MCP_TEACH, "tap", "--out", str(out), "--", *server], input=line, capture_output=True, timeout=HANG_TIMEOUT
    )
    assert done.returncode == 0 and done.stdout == line
    records = [json.loads(text) for text in out.read_text().splitlines()]
    cut = [record for record in records if record["type"] == "raw"]
    assert len(cut) == 2 and all(record["truncated_from"] == len(line) for record in cut)
    assert out.stat().st_size < 2 * (1024 * 1024 + 4096) and "4Hq8" not in out.read_text()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="making another user's file needs root")
def test_a_recording_file_another_user_created_is_refused(tmp_path):
    out = tmp_path / "theirs.jsonl"
    out.touch()
    os.chown(out, 65534, 65534)  # nobody's, writable by all: whoever planted it reads what the tap would record
    out.chmod(0o666)
    done = subprocess.run(
        [MCP_TEACH, "tap", "--out", str(out), "--", PYTHON, "-c", "pass"], capture_output=True, timeout=HANG_TIMEOUT
    )
    assert done.returncode == 2 and out.read_bytes() == b""
    assert b"belongs to another user" in done.stderr and b"Traceback" not in done.stderr


def test_the_http_tap_listens_on_loopback_only(tmp_path, cli_server):
    out = tmp_path / "open.jsonl"
    upstream = "http://127.0.0.1:9/mcp"
    tap = cli_server([MCP_TEACH, "tap", "--out", str(out), "--listen", "0.0.0.0:0", "--upstream", upstream])
    (said,) = tap.matches(re.compile(r"listening on|error: .*"))
    assert said.group(0).startswith("error: --listen 0.0.0.0 would open the tap to other machines")
    assert tap.process.wait(HANG_TIMEOUT) == 2
    assert "use --listen 127.0.0.1:PORT" in tap.stop()[2] and not out.exists()
