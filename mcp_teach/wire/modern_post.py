"""A 2026-07-28 request written by hand (lessons 05, 12): its JSON body and the headers that mirror it.

In 2026-07-28 streamable HTTP keeps no session, so one POST is a whole exchange and any HTTP client can call a
tool. :func:`modern_post` builds the request as an MCP client sends it: the body carries the ``_meta``
envelope (protocol version and client capabilities are required, client info is a SHOULD; 2026-07-28,
basic/index, ``_meta``), and the headers mirror the body (``MCP-Protocol-Version``, ``Mcp-Method``, and
``Mcp-Name`` for ``tools/call``, ``resources/read``, ``prompts/get``; 2026-07-28,
basic/transports/streamable-http, Request Metadata).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PROTOCOL_VERSION = "2026-07-28"
#: The methods whose ``Mcp-Name`` header mirrors a body parameter, and which one.
NAME_PARAMS: Mapping[str, str] = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}
#: Both reply formats, as a client MUST accept them (2026-07-28, basic/transports/streamable-http, Sending Messages).
ACCEPT = "application/json, text/event-stream"
CLIENT_INFO = {"name": "by-hand", "version": "1.0.0"}


def _header_safe(value: str) -> bool:
    """A plain header value: visible ASCII or inner spaces, and not the Base64 sentinel (Value Encoding)."""
    sentinel = value.startswith("=?base64?") and value.endswith("?=")
    return bool(value) and value == value.strip() and all(" " <= c <= "~" for c in value) and not sentinel


@dataclass(frozen=True)
class ModernPost:
    """One JSON-RPC request and the HTTP headers it is POSTed with."""

    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> str:
        """The body as one compact line (what ``curl --data`` sends)."""
        return json.dumps(self.body, separators=(",", ":"))

    def with_headers(self, changes: Mapping[str, str | None]) -> ModernPost:
        """The same request with headers replaced or added (``None``: left out)."""
        headers = {**self.headers, **changes}
        return ModernPost(self.body, {name: value for name, value in headers.items() if value is not None})


def modern_post(method: str, params: Mapping[str, Any] | None = None, *, request_id: int = 1) -> ModernPost:
    """``method`` with ``params`` as a 2026-07-28 client POSTs it: ``_meta`` envelope in the body, headers to match.

    Names and URIs outside plain ASCII would go into ``Mcp-Name`` Base64-encoded; this helper, for the
    lesson's plain names, refuses them instead.
    """
    meta = {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}
    headers = {
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-protocol-version": PROTOCOL_VERSION,
        "mcp-method": method,
    }
    if method in NAME_PARAMS:
        name = str(body["params"].get(NAME_PARAMS[method], ""))
        if not _header_safe(name):
            raise ValueError(f"{name!r} needs the Base64 form of Mcp-Name, which this helper does not write")
        headers["mcp-name"] = name
    return ModernPost(body, headers)
