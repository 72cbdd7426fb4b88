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

ERROR_CODES: dict[int, str] = {
    -32700: "Parse error: the bytes were not valid JSON",
    -32600: "Invalid Request: valid JSON, but not a valid JSON-RPC request",
    -32601: "Method not found: the server does not implement this method",
    -32602: "Invalid params: the method exists but the parameters are wrong",
    -32603: "Internal error: the server failed while handling the request",
    -32022: "Unsupported protocol version (MCP): error.data lists the versions the server supports",
}


def purpose(method: str | None) -> str:
    """What a message with this method is for ('' if the course has no note on it)."""
    return PURPOSE.get(method or "", "")
