"""The knowledge server on the connection helpers: ``stdio_transport(server=)``, ``calculator_target(server=)``."""

from __future__ import annotations

import pytest
from fastmcp import FastMCP

from mcp_teach.client import calculator_target, teaching_client
from mcp_teach.servers.knowledge import SERVER_NAME
from mcp_teach.transports.in_process import stdio_transport


def test_stdio_transport_names_the_server_only_when_it_is_not_the_default() -> None:
    assert stdio_transport().args == ["-m", "mcp_teach.serve", "--transport", "stdio"]
    assert stdio_transport(server="knowledge").args == [
        "-m", "mcp_teach.serve", "--transport", "stdio", "--server", "knowledge",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="calculator, knowledge"):
        stdio_transport(server="weather")


@pytest.mark.parametrize("connection", ["in-memory", "stdio", "streamable-http"])
def test_the_knowledge_server_on_each_connection(run, connection: str) -> None:
    async def scenario():
        async with calculator_target(connection, server="knowledge") as target:
            if connection == "in-memory":
                assert isinstance(target, FastMCP)
            async with teaching_client(target) as client:
                uris = [str(resource.uri) for resource in await client.list_resources()]
                return client.server_info.name, uris

    name, uris = run(scenario)
    assert name == SERVER_NAME
    assert "docs://images/connection.png" in uris


def test_the_default_is_still_the_calculator(run) -> None:
    async def scenario():
        async with calculator_target("in-memory") as target, teaching_client(target) as client:
            return [tool.name for tool in await client.list_tools()]

    assert run(scenario)[0] == "calculator_add"
