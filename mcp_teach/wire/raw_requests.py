"""JSON-RPC requests written by hand, as lesson 03 teaches them, for the lessons and tests that send broken lines."""

from __future__ import annotations

from typing import Any

PROTOCOL_VERSION = "2026-07-28"
RAW_CLIENT_INFO = {"name": "mcp-teach-raw", "version": "1.0.0"}


def envelope_meta() -> dict[str, Any]:
    """The `_meta` every 2026-07-28 request carries instead of an `initialize` handshake."""
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": dict(RAW_CLIENT_INFO),
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def raw_request(
    id: int | str | None,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    jsonrpc: str | None = "2.0",
    envelope: bool = True,
) -> dict[str, Any]:
    """A JSON-RPC request as a dict: `id=None` makes a notification; `jsonrpc=None`, `envelope=False` break it."""
    message: dict[str, Any] = {} if jsonrpc is None else {"jsonrpc": jsonrpc}
    if id is not None:
        message["id"] = id
    message["method"] = method
    params = dict(params or {})
    if envelope:
        params["_meta"] = {**envelope_meta(), **params.get("_meta", {})}
    if params:
        message["params"] = params
    return message
