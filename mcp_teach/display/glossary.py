"""One-line explanations of the JSON-RPC methods students meet in the course."""

from __future__ import annotations

PURPOSE: dict[str, str] = {
    "initialize": "client proposes a protocol version and introduces itself (2025-11-25 handshake)",
    "notifications/initialized": "client confirms the handshake is done; normal requests may follow",
    "server/discover": "client asks which versions and capabilities the server has (2026-07-28, no handshake)",
    "tools/list": "client asks which tools the server offers",
    "tools/call": "client asks the server to run one tool with arguments",
    "ping": "either side checks the other is still there (2025-11-25 sessions; not a 2026-07-28 method)",
    "notifications/cancelled": "a side gives up on a request it sent",
    "notifications/progress": "progress report for a long-running request",
    "notifications/message": "a log message from the server",
    "notifications/tools/list_changed": "server says its list of tools changed",
}

#: JSON-RPC 2.0's five codes, then MCP's; each value reads ``Name: what it means`` (the name ends at the colon).
#: MCP's own codes as of 2026-07-28 (basic/index, "Error Codes"; schema.ts): -32020 … -32022 defined, -32002 and
#: -32042 retired (no 2026-07-28 implementation may send them, clients should still accept -32002).
ERROR_CODES: dict[int, str] = {
    -32700: "Parse error: the bytes were not valid JSON",
    -32600: "Invalid Request: valid JSON, but not a valid JSON-RPC request",
    -32601: "Method not found: the server does not implement this method",
    -32602: "Invalid params: the method exists but the parameters are wrong (in MCP also: unknown tool)",
    -32603: "Internal error: the server failed while handling the request",
    -32020: "Header mismatch (MCP 2026-07-28): HTTP headers missing or disagreeing with the request body",
    -32021: "Missing required client capability (MCP 2026-07-28): error.data.requiredCapabilities says which",
    -32022: "Unsupported protocol version (MCP 2026-07-28): error.data lists the supported versions",
    -32002: "Resource not found (MCP up to 2025-11-25): 2026-07-28 uses -32602 and must not send it",
    -32042: "URL elicitation required (MCP 2025-11-25 only): 2026-07-28 must not send it",
}

#: Where a code without an entry in :data:`ERROR_CODES` falls (JSON-RPC 2.0; 2026-07-28 basic/index, "Error Codes").
CODE_RANGES: tuple[tuple[int, int, str], ...] = (
    (-32099, -32020, "reserved for the MCP specification, not defined by it"),
    (-32019, -32000, "legacy implementation-defined range"),
    (-32768, -32100, "reserved by JSON-RPC"),
)


def code_range(code: int) -> str:
    """What the specification says about ``code`` when it has no entry of its own, e.g. ``-32000`` → legacy range."""
    return next((meaning for low, high, meaning in CODE_RANGES if low <= code <= high), "application-defined")


def purpose(method: str | None) -> str:
    """What a message with this method is for ('' if the course has no note on it)."""
    return PURPOSE.get(method or "", "")
