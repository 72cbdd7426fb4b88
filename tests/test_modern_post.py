"""mcp_teach.wire.modern_post: a 2026-07-28 request by hand and its mirrored headers."""

from __future__ import annotations

import json

import pytest

from mcp_teach.wire.modern_post import modern_post


def test_tools_call_carries_the_envelope_and_the_mirrored_headers():
    post = modern_post("tools/call", {"name": "calculator_add", "arguments": {"a": 1, "b": 2}}, request_id=7)
    assert post.body["id"] == 7 and post.body["params"]["name"] == "calculator_add"
    meta = post.body["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert post.headers == {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "calculator_add",
    }
    assert json.loads(post.json()) == post.body and " " not in post.json()


def test_mcp_name_mirrors_the_uri_of_resources_read_and_only_name_bearing_methods():
    assert modern_post("resources/read", {"uri": "file:///a.txt"}).headers["mcp-name"] == "file:///a.txt"
    assert modern_post("prompts/get", {"name": "greet"}).headers["mcp-name"] == "greet"
    assert "mcp-name" not in modern_post("tools/list").headers


@pytest.mark.parametrize("name", ["Grüße", " padded", "=?base64?x?=", ""])
def test_names_that_need_base64_are_refused(name):
    with pytest.raises(ValueError, match="Base64"):
        modern_post("tools/call", {"name": name, "arguments": {}})


def test_with_headers_replaces_adds_and_leaves_out():
    post = modern_post("tools/call", {"name": "t", "arguments": {}})
    changed = post.with_headers({"mcp-name": "u", "origin": "http://x", "mcp-method": None})
    assert changed.headers["mcp-name"] == "u" and changed.headers["origin"] == "http://x"
    assert "mcp-method" not in changed.headers and post.headers["mcp-method"] == "tools/call"
