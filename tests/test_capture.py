"""CaptureTransport records every JSON-RPC message, on every kind of target, in both protocol eras."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.transports import FastMCPTransport, SSETransport, StreamableHttpTransport

from mcp_teach.client import CLIENT_INFO, teaching_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http, stdio_transport
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture

PINNED_SERVER = {"name": "mcp-teach-calculator", "version": "1.0.0"}
PINNED_CLIENT = {"name": "mcp-teach-client", "version": "1.0.0"}
PROTOCOL_2026 = "2026-07-28"
PROTOCOL_LEGACY = "2025-11-25"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
#: What ``CaptureTransport`` is given: a server object, a stdio transport, two URLs, and transport objects.
TARGETS = ("server", "stdio", "sse-url", "http-url", "http-transport", "sse-transport", "memory-transport")
#: Targets whose server only speaks the legacy handshake.
LEGACY_ONLY = {"sse-url", "sse-transport"}


@contextlib.asynccontextmanager
async def target_for(name: str, tmp_path) -> AsyncIterator[Any]:
    if name == "server":
        yield build_calculator_server()
    elif name == "stdio":
        yield stdio_transport(log_file=tmp_path / "stdio.log")
    elif name == "memory-transport":
        yield FastMCPTransport(build_calculator_server())
    else:
        transport = "sse" if name.startswith("sse") else "streamable-http"
        async with serve_http(transport) as url:
            if name.endswith("-url"):
                yield url
            else:
                yield SSETransport(url) if transport == "sse" else StreamableHttpTransport(url)


async def _session(target_name: str, mode: str, tmp_path) -> Capture:
    async with target_for(target_name, tmp_path) as target:
        capture = CaptureTransport(target)
        async with teaching_client(capture, mode=mode) as client:
            await client.list_tools()
            assert (await client.call_tool("calculator_multiply", {"a": 6, "b": 7})).data == 42.0
            await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
    return capture.capture


def _is_legacy(target_name: str, mode: str) -> bool:
    return mode == "legacy" or target_name in LEGACY_ONLY


ALL = [(t, m) for t in TARGETS for m in ("legacy", "auto")]
LEGACY = [p for p in ALL if _is_legacy(*p)]
MODERN = [p for p in ALL if not _is_legacy(*p)]


@pytest.fixture(scope="module")
def recorded(run, tmp_path_factory):
    """``recorded(target, mode)``: one session per pair (list tools, a good and a failing call), recorded once."""
    cache: dict[tuple[str, str], Capture] = {}

    def get(target_name: str, mode: str) -> Capture:
        if (target_name, mode) not in cache:
            cache[target_name, mode] = run(_session, target_name, mode, tmp_path_factory.mktemp(target_name))
        return cache[target_name, mode]

    return get


@pytest.mark.parametrize(("target_name", "mode"), ALL)
def test_method_sequence_matches_the_protocol_era(recorded, target_name, mode):
    capture = recorded(target_name, mode)
    work = [
        "tools/list",
        "tools/list (result)",
        "tools/call",
        "tools/call (result)",
        "tools/call",
        "tools/call (result)",
    ]
    if _is_legacy(target_name, mode):
        assert capture.methods() == ["initialize", "initialize (result)", "notifications/initialized", *work]
    else:
        assert capture.methods() == ["server/discover", "server/discover (result)", *work]


@pytest.mark.parametrize(("target_name", "mode"), LEGACY)
def test_legacy_handshake_carries_pinned_identities(recorded, target_name, mode):
    capture = recorded(target_name, mode)
    initialize, result, initialized = capture[0].message, capture[1].message, capture[2].message
    assert initialize["params"]["protocolVersion"] == PROTOCOL_LEGACY
    assert initialize["params"]["clientInfo"] == PINNED_CLIENT
    assert result["result"]["protocolVersion"] == PROTOCOL_LEGACY
    assert result["result"]["serverInfo"] == PINNED_SERVER
    assert result["result"]["instructions"].startswith("A four-function calculator")
    assert initialized == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert all(META_VERSION not in json.dumps(wire.message) for wire in capture)


@pytest.mark.parametrize(("target_name", "mode"), MODERN)
def test_2026_era_discovers_first_and_stamps_every_request(recorded, target_name, mode):
    capture = recorded(target_name, mode)
    discover, result = capture[0].message, capture[1].message
    assert discover["method"] == "server/discover"
    assert discover["params"]["_meta"][META_VERSION] == PROTOCOL_2026
    assert discover["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] == PINNED_CLIENT
    assert result["result"]["_meta"]["io.modelcontextprotocol/serverInfo"] == PINNED_SERVER
    assert PROTOCOL_2026 in result["result"]["supportedVersions"]
    for request in capture.requests():
        assert request.message["params"]["_meta"][META_VERSION] == PROTOCOL_2026
    assert "initialize" not in capture.methods()
    assert "notifications/initialized" not in capture.methods()


@pytest.mark.parametrize(("target_name", "mode"), ALL)
def test_requests_pair_with_their_responses(recorded, target_name, mode):
    capture = recorded(target_name, mode)
    pairs = capture.pairs()
    assert [request.method for request, _ in pairs][-3:] == ["tools/list", "tools/call", "tools/call"]
    assert [request.id for request, _ in pairs] == [1, 2, 3, 4]  # ids count up per connection
    for request, response in pairs:
        assert response is not None
        assert request.direction == CLIENT_TO_SERVER
        assert response.direction == SERVER_TO_CLIENT
        assert response.id == request.id
        assert response.kind == "response"
        assert capture.response_to(request) is response
        assert capture.request_for(response) is request
        assert capture.messages.index(request) < capture.messages.index(response)
    tools_result = pairs[-3][1].message["result"]
    assert [tool["name"] for tool in tools_result["tools"]] == [
        "calculator_add",
        "calculator_subtract",
        "calculator_multiply",
        "calculator_divide",
    ]
    assert pairs[-2][1].message["result"]["structuredContent"] == {"result": 42.0}
    assert pairs[-1][1].message["result"]["isError"] is True


@pytest.mark.parametrize(("target_name", "mode"), ALL)
def test_directions_and_timestamps(recorded, target_name, mode):
    capture = recorded(target_name, mode)
    for wire in capture:
        expected = CLIENT_TO_SERVER if wire.kind in ("request", "notification") else SERVER_TO_CLIENT
        assert wire.direction == expected
        assert wire.message["jsonrpc"] == "2.0"
    stamps = [wire.at for wire in capture]
    assert stamps == sorted(stamps)
    assert stamps[0] > 0


@pytest.mark.parametrize(("target_name", "mode"), ALL)
def test_iteration_indexing_and_length(recorded, target_name, mode):
    capture = recorded(target_name, mode)
    assert list(capture) == capture.messages
    assert len(capture) == len(capture.messages) == len(capture.methods())
    assert capture[0] is capture.messages[0]
    assert capture[-1].kind == "response"


@pytest.mark.parametrize(("target_name", "mode"), ALL)
def test_only_http_targets_record_http(recorded, target_name, mode):
    capture = recorded(target_name, mode)
    if target_name in ("server", "stdio", "memory-transport"):
        assert capture.http == []
    else:
        assert capture.http
        assert {exchange.method for exchange in capture.http} >= {"POST"}


def test_clear_forgets_messages_but_keeps_the_connection(run):
    async def scenario():
        capture = CaptureTransport(build_calculator_server())
        async with teaching_client(capture, mode="legacy") as client:
            await client.list_tools()
            assert len(capture.capture) == 5
            capture.capture.clear()
            assert len(capture.capture) == 0
            assert capture.capture.methods() == []
            assert (await client.call_tool("calculator_add", {"a": 1, "b": 2})).data == 3.0
        return capture.capture

    capture = run(scenario)
    assert capture.methods() == ["tools/call", "tools/call (result)"]
    assert capture[0].id == 3  # the connection went on counting


def test_a_capture_can_be_shared_and_nested(run):
    """Two transports writing into one Capture, one of them wrapped twice: both layers see the same traffic."""

    async def scenario():
        shared = Capture()
        inner = CaptureTransport(build_calculator_server())
        outer = CaptureTransport(inner, capture=shared)
        async with Client(outer) as client:
            await client.list_tools()
        return inner.capture, outer.capture, shared

    inner, outer, shared = run(scenario)
    assert outer is shared
    assert (
        inner.methods()
        == outer.methods()
        == [
            "server/discover",
            "server/discover (result)",
            "tools/list",
            "tools/list (result)",
        ]
    )
    assert [w.message for w in inner] == [w.message for w in outer]


def test_messages_property_and_repr():
    transport = CaptureTransport(build_calculator_server())
    assert transport.messages is transport.capture
    assert repr(transport).startswith("<CaptureTransport(")
    assert transport.legacy_only is False
    assert CaptureTransport("http://127.0.0.1:9/sse").legacy_only is True
    assert CLIENT_INFO.name == PINNED_CLIENT["name"]
    assert CLIENT_INFO.version == PINNED_CLIENT["version"]


def test_teaching_client_defaults_to_the_2026_era(run):
    async def scenario():
        capture = CaptureTransport(build_calculator_server())
        async with teaching_client(capture) as client:
            await client.list_tools()
        return capture.capture

    capture = run(scenario)
    assert capture.methods()[:2] == ["server/discover", "server/discover (result)"]
    assert capture[0].message["params"]["_meta"][META_VERSION] == PROTOCOL_2026
