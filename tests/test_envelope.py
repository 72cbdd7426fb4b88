"""A request of neither era (no ``_meta`` envelope, no handshake before it) is told what is missing and how to fix
it, on stdio and over streamable HTTP; params that do not fit the method name the wrong field.

Real servers: the stdio server as a subprocess, streamable HTTP on 127.0.0.1 (with sessions, and stateless).
"""

from __future__ import annotations

import json
import subprocess
import sys

import httpx2
import mcp_types as types
import pytest
from raw_peers import StdioPeer, http_server
from support import HANG_TIMEOUT

from mcp_teach.transports.envelope import ENVELOPE_KEYS, MODERN, stdio_refusal
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.raw_requests import raw_request

BARE_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INITIALIZE = raw_request(
    0,
    "initialize",
    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    envelope=False,
)


@pytest.fixture
def stdio_peer(tmp_path, clean_env):
    peer = StdioPeer(cwd=tmp_path, stderr=tmp_path / "server.log", env=clean_env())
    yield peer
    assert peer.close() == 0


def test_a_bare_stdio_request_is_told_both_ways_to_fix_it_and_the_connection_stays_usable(stdio_peer):
    stdio_peer.send_message(BARE_LIST)
    error = stdio_peer.next_message()["error"]
    assert error["code"] == -32602
    assert error["data"] == {"missing": list(ENVELOPE_KEYS)}
    for fix in ('"io.modelcontextprotocol/protocolVersion": "2026-07-28"', '"initialize"', "notifications/initialized"):
        assert fix in error["message"]
    # Not answered by the SDK, so the connection's era is not fixed by it: a correct request now succeeds.
    assert stdio_peer.add(2) == 3.0


def test_after_a_2026_request_a_bare_one_is_not_offered_the_handshake_the_sdk_would_refuse(stdio_peer):
    assert stdio_peer.add(2) == 3.0  # a complete 2026-07-28 request: the SDK now answers initialize with -32022
    stdio_peer.send_message(BARE_LIST)
    error = stdio_peer.next_message()["error"]
    assert error["code"] == -32602
    assert '"io.modelcontextprotocol/protocolVersion": "2026-07-28"' in error["message"]
    assert "initialize" not in error["message"]
    stdio_peer.send_message(INITIALIZE)
    assert stdio_peer.next_message()["error"]["code"] == -32022  # what that advice would have led to


def test_a_bare_server_discover_is_not_called_an_unknown_method(stdio_peer):
    stdio_peer.send_message({"jsonrpc": "2.0", "id": 1, "method": "server/discover"})
    error = stdio_peer.next_message()["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Invalid params: server/discover has no _meta")


def test_after_the_handshake_a_request_without_envelope_is_a_normal_legacy_request(stdio_peer):
    stdio_peer.modern = False
    stdio_peer.handshake()
    stdio_peer.send_message(BARE_LIST)
    tools = stdio_peer.next_message()["result"]["tools"]
    assert tools[0]["name"] == "calculator_add"


def test_half_an_envelope_names_the_missing_key():
    request = types.JSONRPCRequest(
        jsonrpc="2.0", id=3, method="tools/list", params={"_meta": {ENVELOPE_KEYS[0]: "2026-07-28"}}
    )
    error = stdio_refusal(request, handshake_seen=False).reply.error
    assert error.data == {"missing": [ENVELOPE_KEYS[1]]}
    assert f"tools/list has no {ENVELOPE_KEYS[1]} in _meta" in error.message
    assert stdio_refusal(request, handshake_seen=True) is None


@pytest.mark.parametrize("params", [{"arguments": {"a": 1}}, {"name": 5, "arguments": {}}])
def test_params_that_do_not_fit_the_method_name_the_field(stdio_peer, params):
    stdio_peer.send_message(stdio_peer.request(1, "tools/call", params))
    error = stdio_peer.next_message()["error"]
    expected = "params.name is missing" if "name" not in params else "params.name should be a valid string (got 5)"
    assert (error["code"], error["message"]) == (-32602, f"Invalid params for tools/call: {expected}.")
    assert error["data"]["problems"][0]["field"] == "params.name"


def test_a_bare_http_post_is_told_how_to_join_either_era_and_opens_no_session():
    with http_server("streamable-http") as url:
        bare = httpx2.post(url, json=BARE_LIST, headers=HEADERS)
        opened = httpx2.post(url, json=INITIALIZE, headers=HEADERS)
    assert bare.status_code == 400 and "mcp-session-id" not in bare.headers
    error = bare.json()["error"]
    assert (bare.json()["id"], error["code"]) == (1, -32020)
    assert error["data"]["missing"] == ["MCP-Protocol-Version", *ENVELOPE_KEYS]
    assert '"MCP-Protocol-Version: 2026-07-28"' in error["message"] and "Mcp-Session-Id header" in error["message"]
    assert opened.status_code == 200 and opened.headers["mcp-session-id"]


MODERN_LIST = raw_request(3, "tools/list", {})  # carries the 2026-07-28 envelope in _meta


@pytest.mark.parametrize("stateless", [False, True], ids=["sessions", "stateless"])
@pytest.mark.parametrize("header", ["2025-11-25", "2099-01-01"])
def test_a_version_header_that_disagrees_with_meta_is_a_header_mismatch(run, stateless, header):
    async def scenario():
        async with serve_http("streamable-http", stateless=stateless) as url, httpx2.AsyncClient() as client:
            headers = {**HEADERS, "mcp-protocol-version": header, "mcp-method": "tools/list"}
            mismatched = await client.post(url, json=MODERN_LIST, headers=headers)
            agreeing = await client.post(url, json=MODERN_LIST, headers={**headers, "mcp-protocol-version": MODERN})
            return mismatched, agreeing

    mismatched, agreeing = run(scenario)
    assert mismatched.status_code == 400
    assert (mismatched.json()["id"], mismatched.json()["error"]["code"]) == (3, -32020)
    assert mismatched.json()["error"]["data"] == {"header": header, "body": MODERN}
    assert agreeing.status_code == 200 and '"calculator_add"' in agreeing.text


def test_a_stateless_server_answers_a_bare_post(run):
    async def scenario():
        async with serve_http("streamable-http", stateless=True) as url, httpx2.AsyncClient() as client:
            return await client.post(url, json=BARE_LIST, headers=HEADERS)

    answer = run(scenario)
    assert answer.status_code == 200
    assert '"calculator_add"' in answer.text


def test_a_bare_line_piped_into_the_server_gets_one_explained_answer(clean_env):
    finished = subprocess.run(
        [sys.executable, "-m", "mcp_teach.serve"],
        input=json.dumps(BARE_LIST) + "\n",
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=HANG_TIMEOUT,
    )
    (line,) = finished.stdout.splitlines()
    assert json.loads(line)["error"]["message"].startswith("Invalid params: tools/list has no _meta")
