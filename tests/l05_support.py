"""What lesson 05's test modules share: the lesson's session, recorded on every transport it compares."""

from __future__ import annotations

from typing import Any

from mcp_teach.client import teaching_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport


async def _session(target: Any, mode: str) -> CaptureTransport:
    capture = CaptureTransport(target)
    async with teaching_client(capture, mode=mode) as client:
        await client.list_tools()
        await client.call_tool("calculator_add", {"a": 1, "b": 2})
        await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
    return capture


async def record_sessions() -> dict[tuple[str, str], CaptureTransport]:
    """The lesson's session in memory and over both HTTP transports, in both eras (SSE: legacy only)."""
    found = {}
    for mode in ("legacy", "auto"):
        found["memory", mode] = await _session(build_calculator_server(), mode)
        for transport in ("sse", "streamable-http"):
            if transport == "sse" and mode == "auto":
                continue
            async with serve_http(transport) as url:
                found[transport, mode] = await _session(url, mode)
    return found
