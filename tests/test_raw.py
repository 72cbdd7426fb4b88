"""RawStdioServer: hand-written JSON-RPC lines to the real stdio server and its exact replies."""

import asyncio

from mcp_teach.wire.raw_stdio import RawStdioServer

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def test_unknown_version_gets_the_servers_own_version_and_unknown_method_gets_32601():
    async def run():
        async with RawStdioServer() as server:
            hello = await server.exchange(INITIALIZE)
            silent = await server.exchange({"jsonrpc": "2.0", "method": "notifications/initialized"})
            missing = await server.exchange({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"})
        return server, hello, silent, missing

    server, hello, silent, missing = asyncio.run(run())
    assert hello["result"]["protocolVersion"] == "2025-11-25"
    assert silent is None
    assert missing["error"]["code"] == -32601
    assert [m.direction for m in server.capture] == [
        "client->server",
        "server->client",
        "client->server",
        "client->server",
        "server->client",
    ]


def test_text_that_is_not_json_is_recorded_as_raw_and_answered_with_a_parse_error():
    async def run():
        async with RawStdioServer() as server:
            parse_error = await server.exchange("this is not json")
            await server.exchange({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE["params"]})
        return server, parse_error

    server, parse_error = asyncio.run(run())
    assert server.capture[0].message == {"raw": "this is not json"}
    assert (parse_error["id"], parse_error["error"]["code"]) == (None, -32700)
    assert server.capture[-1].message["id"] == 1


def test_receive_all_collects_one_reply_per_line():
    async def run():
        async with RawStdioServer() as server:
            await server.send("{\n}\n[]")
            return await server.receive_all()

    replies = asyncio.run(run())
    assert [reply["error"]["code"] for reply in replies] == [-32700, -32700, -32600]
