"""A one-tool server whose tool asks for a parameter to be mirrored into an HTTP header (lesson 05, Going deeper).

The calculator marks no parameter with ``x-mcp-header``, so the lesson needs a tool that does to show what a
2026-07-28 client then adds to a ``tools/call`` POST: ``Mcp-Param-{Name}`` (2026-07-28, server/tools,
x-mcp-header; basic/transports/streamable-http, Custom Headers from Tool Parameters).
"""

from __future__ import annotations

from typing import Annotated

from fastmcp import FastMCP
from pydantic import Field

TOOL = "forecast"
#: The name part of the header: the client sends ``Mcp-Param-Region``.
HEADER_NAME = "Region"


def region_server() -> FastMCP:
    """A server with one tool, ``forecast(region, days)``, whose ``region`` is marked ``x-mcp-header: Region``."""
    server = FastMCP("mcp-teach-forecast", version="1.0.0")

    @server.tool(name=TOOL, description="A made-up weather forecast for a cloud region.")
    def forecast(
        region: Annotated[
            str, Field(description="the region, e.g. us-west1", json_schema_extra={"x-mcp-header": HEADER_NAME})
        ],
        days: int = 1,
    ) -> str:
        return f"{days}-day forecast for {region}: sunny"

    return server
