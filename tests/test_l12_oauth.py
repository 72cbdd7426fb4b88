"""Lesson 12's OAuth 2.1 flow, for real over loopback HTTP: fastmcp's in-memory authorization server, the mcp SDK's
OAuth client, every exchange captured, nothing secret in what is shown."""

from __future__ import annotations

import functools
import json
import logging
import re
import time

import httpx2
from fastmcp import FastMCP
from fastmcp.utilities.logging import temporary_log_level

from mcp_teach.lessons.l12_oauth import authorize_and_call, oauth_server, run_oauth_flow
from mcp_teach.lessons.l12_oauth_views import OAuthFlow
from mcp_teach.servers.notes import build_notes_server
from mcp_teach.wire.modern_post import modern_post
from mcp_teach.wire.redact import oauth_placeholder, redact_json, redact_url

STEPS = [
    ("MCP server/discover, no token", 401),
    ("protected resource metadata (RFC 9728)", 200),
    ("authorization server metadata (RFC 8414)", 200),
    ("dynamic client registration (RFC 7591)", 201),
    ("authorization request, PKCE (RFC 7636)", 302),
    ("token request (authorization_code)", 200),
    ("MCP server/discover, with token", 200),
    ("MCP tools/list, with token", 200),
    ("MCP tools/call, with token", 200),
]


def echo_server(auth) -> FastMCP:
    """A server of the test's own: any factory taking ``auth=`` works, as the notes server will."""
    server = FastMCP("echo", version="1.0.0", auth=auth)

    @server.tool
    def echo(text: str) -> str:
        """Say ``text`` back."""
        return f"echo: {text}"

    return server


def everything_shown(flow: OAuthFlow) -> str:
    return "\n".join([flow.table().text(), *(exchange.text() for exchange in flow), repr(flow), flow.answer])


async def mcp_request(url: str, token: str | None = None) -> httpx2.Response:
    """One 2026-07-28 ``tools/list`` POST, with ``Authorization: Bearer <token>`` if given."""
    post = modern_post("tools/list")
    if token is not None:
        post = post.with_headers({"authorization": f"Bearer {token}"})
    with temporary_log_level("WARNING"):  # fastmcp logs each refused token at INFO
        async with httpx2.AsyncClient() as client:
            return await client.post(url, content=post.json(), headers=post.headers)


def test_the_whole_flow_ends_in_an_authenticated_tools_call_that_answers(run, caplog):
    caplog.set_level(logging.INFO)  # at DEBUG, httpcore traces raw response headers (the code in Location)
    started = time.perf_counter()
    flow = run(run_oauth_flow)
    elapsed = time.perf_counter() - started
    assert [(e.step, e.status) for e in flow] == STEPS
    assert flow.answer == "5.0"
    assert elapsed < 10  # about 0.5 s alone; only catches a hang-like slowdown on a loaded machine
    shown = everything_shown(flow)
    # the values that change per run are replaced, so the views are the same every time
    assert re.search(r"127\.0\.0\.1(:|%3A)(?!3000%2F|3000/)\d", shown) is None and "127.0.0.1:<port>" in shown
    assert "<client-id>" in shown and "<state>" in shown and "<code-challenge>" in shown
    # what teaches stays visible
    token = flow.first("/token")
    assert token.json["token_type"] == "Bearer" and token.json["expires_in"] == 3600
    assert token.json["scope"] == "mcp:tools" and token.json["access_token"] == "<access-token>"
    authorize = flow.first("/authorize")
    for parameter in ("code_challenge=<code-challenge>", "code_challenge_method=S256", "state=<state>", "resource="):
        assert parameter in authorize.url
    assert "code_verifier=<code-verifier>" in token.request_body and "resource=" in token.request_body
    call = flow[8]
    assert ("authorization", "Bearer <access-token>") in call.request_headers
    # no real credential anywhere: not in the views, not in the log
    kinds = set(flow.secrets.values())
    assert {"<access-token>", "<refresh-token>", "<code>", "<code-verifier>"} <= kinds
    for value in flow.secrets:
        assert value not in shown and value not in caplog.text


def test_any_server_factory_taking_auth_works(run):
    flow = run(run_oauth_flow, echo_server, "echo", {"text": "hi"})
    assert flow.answer == "echo: hi"
    assert flow[-1].status == 200 and flow[0].status == 401


def test_without_a_token_401_names_the_protected_resource_metadata(run):
    async def probe():
        async with oauth_server() as server:
            return await mcp_request(server.url)

    refused = run(probe)
    assert refused.status_code == 401
    challenge = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", refused.headers["www-authenticate"])
    assert challenge.startswith("Bearer ")
    assert 'resource_metadata="http://127.0.0.1:<port>/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'scope="mcp:tools"' in challenge


def test_a_wrong_or_expired_token_is_refused_and_a_good_one_accepted(run):
    async def probe():
        async with oauth_server() as server:
            flow = await authorize_and_call(server)
            token = next(value for value, kind in flow.secrets.items() if kind == "<access-token>")
            good = await mcp_request(server.url, token)
            wrong = await mcp_request(server.url, "not-a-token-issued-here-0123456789")
            server.provider.access_tokens[token].expires_at = int(time.time()) - 1
            expired = await mcp_request(server.url, token)
            return good, wrong, expired

    good, wrong, expired = run(probe)
    assert good.status_code == 200 and '"tools"' in good.text
    for refused in (wrong, expired):
        assert refused.status_code == 401
        assert 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_the_oauth_redaction_helpers_keep_what_teaches():
    form = "grant_type=authorization_code&code=abc123&code_verifier=v3r1f13r&code_challenge_method=S256&state=s"
    assert redact_url(form, mask=oauth_placeholder) == (
        "grant_type=authorization_code&code=<code>&code_verifier=<code-verifier>&code_challenge_method=S256&state=s"
    )
    assert redact_url("http://x/cb?code=abc&state=s", mask=oauth_placeholder) == "http://x/cb?code=<code>&state=s"
    token = {"access_token": "at", "refresh_token": "rt", "token_type": "Bearer", "expires_in": 60, "scope": "a"}
    assert redact_json(token, mask=oauth_placeholder) == {
        "access_token": "<access-token>",
        "refresh_token": "<refresh-token>",
        "token_type": "Bearer",
        "expires_in": 60,
        "scope": "a",
    }


def test_on_the_notes_server_the_oauth_client_is_the_user_and_its_id_is_never_shown(run, tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_TEACH_NOTES_DIR", str(tmp_path))
    monkeypatch.setenv("MCP_TEACH_WRITE_HOURS", "00:00-24:00")  # the real clock: a save must work at any hour
    flow = run(
        functools.partial(run_oauth_flow, scopes=("student",)),
        build_notes_server,
        "save_note",
        {"title": "via oauth", "content": "hi"},
    )
    assert flow.answer == "Saved note 'via oauth' (owner <client-id>, 2 characters)."
    owner = json.loads((tmp_path / "via oauth.json").read_text())["owner"]
    assert owner != "<client-id>" and owner not in everything_shown(flow)
