"""Lesson 12's servers keep the 2026-07-28 rules the lesson teaches about them, run for real.

- the untrusted server's rug pull announces the changed tool list only where a client asked for it: on a
  ``subscriptions/listen`` stream in 2026-07-28 (basic/patterns/subscriptions, "MUST NOT send notification types
  the client has not explicitly requested"), on the session in 2025-11-25;
- an unknown tool is JSON-RPC ``-32602`` on the workspace and the untrusted server (server/tools, Error Handling);
- the OAuth server of the lesson answers a token without a required scope with ``403 insufficient_scope`` and the
  scopes to ask for, rotates refresh tokens, and accepts the stepped-up token (basic/authorization).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools

import anyio
import httpx2
import pytest
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError
from support import HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l12_oauth import oauth_server, token_by_hand
from mcp_teach.servers.notes import build_notes_server
from mcp_teach.servers.untrusted import build_untrusted_server
from mcp_teach.servers.workspace import build_workspace_server, make_workspace
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.modern_post import modern_post

CHANGED = "notifications/tools/list_changed"


def rug_pull(mode: str, *, listening: bool) -> list[dict]:
    """Call the rug-pull ``add`` once; every message the server sent that is not a response."""

    async def go() -> list[dict]:
        rug = CaptureTransport(build_untrusted_server(rug_pull=True))
        async with teaching_client(rug, mode=mode) as client, contextlib.AsyncExitStack() as streams:
            subscription = None
            if listening:
                subscription = await streams.enter_async_context(listen(client.session, tools_list_changed=True))
            await client.call_tool("add", {"a": 1, "b": 1})
            if subscription is not None:
                with anyio.fail_after(HANG_TIMEOUT):
                    await subscription.__anext__()
            tools = {tool.name: tool.description for tool in await client.list_tools()}
        assert "<IMPORTANT>" in tools["add"]  # the pull happened either way
        return [m.message for m in rug.capture if m.direction == "server->client" and m.method]

    return asyncio.run(go())


def test_modern_rug_pull_sends_no_change_notification_without_a_listen_stream():
    assert rug_pull("auto", listening=False) == []


def test_modern_rug_pull_announces_the_change_on_the_listen_stream_only():
    sent = rug_pull("auto", listening=True)
    assert [m["method"] for m in sent] == ["notifications/subscriptions/acknowledged", CHANGED]
    listen_id = sent[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
    assert sent[1]["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": listen_id}


def test_legacy_rug_pull_announces_the_change_on_the_session():
    assert [m["method"] for m in rug_pull("legacy", listening=False)] == [CHANGED]


@pytest.mark.parametrize("which", ["workspace", "untrusted"])
def test_an_unknown_tool_is_a_protocol_error(tmp_path, which):
    server = build_workspace_server(make_workspace(tmp_path)) if which == "workspace" else build_untrusted_server()

    async def go() -> MCPError:
        async with teaching_client(server) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool_mcp("format_disk", {})
        return raised.value

    error = asyncio.run(go())
    assert error.error.code == -32602
    assert "format_disk" in error.error.message


def test_insufficient_scope_rotation_and_step_up(tmp_path):
    post = modern_post("server/discover")
    notes = functools.partial(build_notes_server, notes_dir=tmp_path)

    def bearer(token: dict) -> dict[str, str]:
        return {**post.headers, "Authorization": f"Bearer {token['access_token']}"}

    async def go() -> None:
        async with (
            oauth_server(notes, scopes=("notes:read", "notes:write")) as server,
            httpx2.AsyncClient(base_url=server.base) as http,
        ):
            client_id, narrow = await token_by_hand(http, server, "notes:read")
            assert narrow["scope"] == "notes:read"
            refused = await http.post("/mcp", content=post.json(), headers=bearer(narrow))
            assert refused.status_code == 403
            challenge = refused.headers["www-authenticate"]
            assert challenge.startswith("Bearer ") and 'error="insufficient_scope"' in challenge
            assert 'scope="notes:read notes:write"' in challenge
            assert f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"' in challenge

            # a refresh is a token request: it carries resource (basic/authorization/index, Resource Parameter Impl.)
            refresh = {
                "grant_type": "refresh_token",
                "refresh_token": narrow["refresh_token"],
                "client_id": client_id,
                "resource": server.url,
            }
            rotated = await http.post("/token", data=refresh)
            assert rotated.status_code == 200
            assert rotated.json()["refresh_token"] != narrow["refresh_token"]
            reused = await http.post("/token", data=refresh)
            assert reused.json()["error"] == "invalid_grant"  # rotated: the used refresh token is dead

            _, wide = await token_by_hand(http, server, "notes:read notes:write", client_id)
            assert wide["scope"] == "notes:read notes:write"
            answer = await http.post("/mcp", content=post.json(), headers=bearer(wide))
            assert answer.status_code == 200
            assert "result" in answer.json()

    asyncio.run(go())
