"""``RawMemoryServer`` and ``RawStdioServer`` answer the same hand-written lines alike (lesson 01 says they do).

Both read a line with the stdio server's :class:`~mcp_teach.transports.stdio_loop.LineReader`; here over a real
stdio pipe (a server process) and in this process, the requests a student gets wrong first.
"""

from __future__ import annotations

import pytest
from support import discover

from mcp_teach.transports.envelope import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcp_teach.wire.raw_memory import RawMemoryServer
from mcp_teach.wire.raw_stdio import RawStdioServer

#: ``server/discover`` with only one of the envelope's two required keys, and with neither.
ONLY_CAPABILITIES = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {"_meta": {CLIENT_CAPABILITIES_KEY: {}}},
}
ONLY_VERSION = {**ONLY_CAPABILITIES, "params": {"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}}
NO_META = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
LINES = {
    "discover with only clientCapabilities": ONLY_CAPABILITIES,
    "discover with only protocolVersion": ONLY_VERSION,
    "tools/list with no _meta": NO_META,
    "not JSON": "{not json",
}


@pytest.mark.parametrize("name", list(LINES))
def test_in_memory_and_over_a_stdio_pipe_the_same_line_gets_the_same_answer(run, tmp_path, name):
    line = LINES[name]

    async def both() -> tuple[dict | None, dict | None]:
        async with RawMemoryServer() as memory:
            in_memory = await memory.exchange(line)
        async with RawStdioServer(log_file=tmp_path / "server.log") as stdio:
            over_stdio = await stdio.exchange(line)
        return in_memory, over_stdio

    in_memory, over_stdio = run(both)
    assert in_memory == over_stdio
    if name.startswith("discover"):  # a required _meta key is missing: -32602 (2026-07-28, basic/index, _meta)
        assert in_memory["error"]["code"] == -32602


def test_a_good_discover_is_answered_alike_too(run, tmp_path):
    async def both():
        async with RawMemoryServer() as memory:
            in_memory = await memory.exchange(discover("2026-07-28"))
        async with RawStdioServer(log_file=tmp_path / "server.log") as stdio:
            over_stdio = await stdio.exchange(discover("2026-07-28"))
        return in_memory, over_stdio

    in_memory, over_stdio = run(both)
    assert "result" in in_memory and in_memory == over_stdio
