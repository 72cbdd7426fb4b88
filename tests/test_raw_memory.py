"""RawMemoryServer: hand-written JSON-RPC to an in-kernel calculator answers as the stdio server does."""

from __future__ import annotations

import pytest
from support import discover, initialize

from mcp_teach.wire.raw_memory import RawMemoryServer
from mcp_teach.wire.raw_stdio import RawStdioServer

#: One connection's worth: a refused version, an accepted one, initialize on a modern connection, a broken line.
MODERN_CONNECTION = [discover("2099-01-01"), discover("2026-07-28", 2), initialize("2025-11-25", 3), "{not json"]


async def _replies(server_class: type, messages: list) -> list:
    async with server_class() as server:
        return [await server.exchange(message, timeout=30) for message in messages]


def test_every_block_is_a_fresh_connection_with_the_handshake_rules(run):
    async def negotiate():
        answers = {}
        for version in ["2024-11-05", "1999-01-01"]:
            async with RawMemoryServer() as server:
                reply = await server.exchange(initialize(version))
                silent = await server.exchange({"jsonrpc": "2.0", "method": "notifications/initialized"})
            answers[version] = (reply["result"]["protocolVersion"], silent, server.capture.methods())
        return answers

    answers = run(negotiate)
    assert answers["2024-11-05"][:2] == ("2024-11-05", None)
    assert answers["1999-01-01"][:2] == ("2025-11-25", None)
    assert answers["1999-01-01"][2] == ["initialize", "initialize (result)", "notifications/initialized"]


def test_replies_are_those_of_the_stdio_server(run):
    in_memory = run(_replies, RawMemoryServer, MODERN_CONNECTION)
    over_stdio = run(_replies, RawStdioServer, MODERN_CONNECTION)
    assert in_memory == over_stdio
    assert [reply["error"]["code"] for reply in in_memory if "error" in reply] == [-32022, -32022, -32700]
    assert in_memory[1]["result"]["supportedVersions"] == ["2026-07-28"]


def test_the_capture_holds_both_directions_in_order(run):
    async def talk():
        async with RawMemoryServer() as server:
            await server.exchange(discover("2026-07-28"))
            await server.exchange("{not json")
        return server.capture

    capture = run(talk)
    assert [wire.direction for wire in capture] == ["client->server", "server->client"] * 2
    assert capture.methods() == ["server/discover", "server/discover (result)", "(invalid)", "? (error)"]
    assert capture[2].message == {"raw": "{not json"}


def test_receive_gives_none_when_nothing_comes(run):
    async def wait():
        async with RawMemoryServer() as server:
            return await server.receive(timeout=0.05)

    assert run(wait) is None


def test_it_must_be_opened_first(run):
    async def send():
        await RawMemoryServer().send(discover("2026-07-28"))

    with pytest.raises(RuntimeError, match="async with RawMemoryServer"):
        run(send)
