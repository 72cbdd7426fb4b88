"""mcp_teach.display.glossary: the error codes as the specification assigns them (2026-07-28, basic/index)."""

from __future__ import annotations

import pytest

from mcp_teach.display.glossary import ERROR_CODES, code_range


def test_every_meaning_starts_with_a_name() -> None:
    for code, meaning in ERROR_CODES.items():
        name, _, explanation = meaning.partition(": ")
        assert name and explanation, code


def test_mcp_codes_lie_in_the_ranges_the_specification_gives() -> None:
    jsonrpc = {-32700, -32600, -32601, -32602, -32603}
    mcp = set(ERROR_CODES) - jsonrpc
    assert jsonrpc <= set(ERROR_CODES)
    assert {-32020, -32021, -32022} <= mcp  # defined by 2026-07-28
    assert {-32002, -32042} <= mcp  # retired: earlier versions only (-32042 is URL_ELICITATION_REQUIRED in 2025-11-25)
    assert all(-32099 <= code <= -32000 for code in mcp)


@pytest.mark.parametrize(
    ("code", "meaning"),
    [
        (-32000, "legacy implementation-defined range"),
        (-32019, "legacy implementation-defined range"),
        (-32020, "reserved for the MCP specification, not defined by it"),
        (-32099, "reserved for the MCP specification, not defined by it"),
        (-32100, "reserved by JSON-RPC"),
        (-32768, "reserved by JSON-RPC"),
        (-32769, "application-defined"),
        (-31999, "application-defined"),
        (7, "application-defined"),
    ],
)
def test_code_range(code: int, meaning: str) -> None:
    assert code_range(code) == meaning
