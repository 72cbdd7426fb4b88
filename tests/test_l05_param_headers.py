"""mcp_teach.lessons.l05_param_headers: a 2026-07-28 client mirrors an x-mcp-header parameter into Mcp-Param-*."""

from __future__ import annotations

import httpx2

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l05_param_headers import HEADER_NAME, TOOL, region_server
from mcp_teach.lessons.l05_probes import Probe, send_probe
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.modern_post import modern_post


def test_the_region_parameter_travels_as_a_header(run):
    async def call():
        async with serve_http("streamable-http", server=region_server()) as url:
            capture = CaptureTransport(url)
            async with teaching_client(capture) as client:
                tools = await client.list_tools()
                result = await client.call_tool(TOOL, {"region": "us-west1", "days": 2})
        return tools, result, capture

    tools, result, capture = run(call)
    assert tools[0].input_schema["properties"]["region"]["x-mcp-header"] == HEADER_NAME
    assert result.data == "2-day forecast for us-west1: sunny"
    calls = [e for e in capture.capture.http if e.request_headers.get("mcp-method") == "tools/call"]
    assert [e.request_headers.get("mcp-param-region") for e in calls] == ["us-west1"]
    assert all("mcp-param-region" not in e.request_headers for e in capture.capture.http if e not in calls)


def test_the_server_checks_the_mirrored_parameter_against_the_body(run):
    """What the lesson says: a missing or different Mcp-Param-Region is -32020 HeaderMismatch."""
    call = modern_post("tools/call", {"name": TOOL, "arguments": {"region": "us-west1"}})

    async def probe():
        async with serve_http("streamable-http", server=region_server()) as url, httpx2.AsyncClient() as client:
            return [
                await send_probe(client, url, Probe("as sent", call, {"mcp-param-region": "us-west1"})),
                await send_probe(client, url, Probe("other region", call, {"mcp-param-region": "eu-west1"})),
                await send_probe(client, url, Probe("no header", call)),
            ]

    (ok, ok_text), *refused = run(probe)
    assert (ok, ok_text) == (200, "result (complete)")
    assert [(status, text.split(":")[0]) for status, text in refused] == [(400, "error -32020")] * 2
