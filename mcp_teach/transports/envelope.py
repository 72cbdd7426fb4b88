"""Answer a request that belongs to neither protocol era with an error that says how to fix it.

A request is understood in one of two ways (2026-07-28, basic/versioning):

- **2026-07-28** (modern): it carries its own protocol version and client capabilities in
  ``params._meta`` (``io.modelcontextprotocol/protocolVersion`` and ``…/clientCapabilities``, both
  required; basic/index, "Per-request protocol fields"), and over HTTP also the ``MCP-Protocol-Version``
  and ``Mcp-Method`` headers (basic/transports/streamable-http, "Request Metadata");
- **2025-11-25** (legacy): it comes after an ``initialize`` handshake, which opened a session
  (over HTTP: the ``Mcp-Session-Id`` header).

A request with neither (say ``{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`` typed by hand) gets
from the mcp SDK ``-32602 "Invalid request parameters"`` with empty ``data`` on stdio (``server/discover``
even gets ``-32601 Method not found``), and ``"Bad Request: Missing session ID"`` over HTTP. Here it gets
the rule's own code, the missing pieces in ``data.missing`` and both ways to fix it:

- stdio: ``-32602`` Invalid params, which 2026-07-28 requires for a request missing a required ``_meta``
  field (basic/index, "Per-request protocol fields");
- HTTP: ``400`` with ``-32020`` header mismatch, which 2026-07-28 requires when ``MCP-Protocol-Version``
  is missing (basic/transports/streamable-http, "Server Validation").

A request whose ``MCP-Protocol-Version`` header names another version than its ``_meta`` gets ``400`` with
``-32020`` too (same page, "Protocol Version Header": the server MUST reject it); the SDK would take the header's
word, and answer a 2025-11-25 header ``"Bad Request: Missing session ID"`` with ``"id": null``.

Answering before the SDK sees the request has one more use on stdio: the SDK fixes a connection's era
with its first request, so a bare first request would lock the connection in the handshake era and the
corrected request would then be refused too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types

from mcp_teach.transports.frames import Rejected

PROTOCOL_VERSION_KEY = types.PROTOCOL_VERSION_META_KEY
CLIENT_CAPABILITIES_KEY = types.CLIENT_CAPABILITIES_META_KEY
#: What every 2026-07-28 request must carry in ``params._meta``.
ENVELOPE_KEYS = (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY)
MODERN = types.LATEST_PROTOCOL_VERSION
#: 2026-07-28's code for missing or disagreeing HTTP headers (basic/transports/streamable-http).
HEADER_MISMATCH = -32020
#: What a stdio server answers before any handshake: the handshake itself, and ``ping`` (the SDK's choice).
NO_ERA_NEEDED = frozenset({"initialize", "ping"})
HANDSHAKE_FIX = 'or open a 2025-11-25 session first ("initialize", then "notifications/initialized")'


def missing_envelope_keys(params: Mapping[str, Any] | None) -> list[str]:
    """The required 2026-07-28 ``_meta`` keys a request with these params lacks (all of them without ``_meta``)."""
    meta = (params or {}).get("_meta")
    return [key for key in ENVELOPE_KEYS if not isinstance(meta, dict) or key not in meta]


def _envelope_example() -> str:
    return f'"_meta": {{"{PROTOCOL_VERSION_KEY}": "{MODERN}", "{CLIENT_CAPABILITIES_KEY}": {{}}}}'


def stdio_refusal(request: types.JSONRPCRequest, handshake_seen: bool, modern_seen: bool = False) -> Rejected | None:
    """The error for a stdio request with an incomplete envelope and no handshake before it, else None.

    ``modern_seen``: the connection already served a 2026-07-28 request, so a handshake would be refused (the
    mcp SDK answers ``initialize`` there with -32022): the error then offers only the envelope.
    """
    missing = [] if handshake_seen or request.method in NO_ERA_NEEDED else missing_envelope_keys(request.params)
    if not missing:
        return None
    has = (
        "no _meta, so it names no protocol version"
        if len(missing) == len(ENVELOPE_KEYS)
        else f"no {' and no '.join(missing)} in _meta"
    )
    add = f"add {_envelope_example()} to params"
    fix = (
        f"Add {_envelope_example()} to params (this connection speaks 2026-07-28: every request carries both keys)."
        if modern_seen
        else f"Either {add} (2026-07-28: every request carries both keys), {HANDSHAKE_FIX}."
    )
    message = f"Invalid params: {request.method} has {has}. {fix}"
    return _refused(request.id, types.INVALID_PARAMS, message, {"missing": missing})


def http_refusal(request: Mapping[str, Any], headers: dict[bytes, bytes]) -> Rejected | None:
    """The error for a POSTed request without ``MCP-Protocol-Version`` and without a session, else None.

    ``request``: a request as :func:`~mcp_teach.transports.frames.read_frame` returns it (a dict with an
    ``id``); ``headers``: the request's headers that matter here, names in lower case.
    """
    method = request["method"]
    if b"mcp-protocol-version" in headers or b"mcp-session-id" in headers or method == "initialize":
        return None
    message = (
        f"Header mismatch: {method} came without an MCP-Protocol-Version header and without an "
        f'Mcp-Session-Id. Either send the headers "MCP-Protocol-Version: {MODERN}" and "Mcp-Method: '
        f'{method}" with {_envelope_example()} in params (2026-07-28), {HANDSHAKE_FIX} and send the '
        "Mcp-Session-Id header it returns."
    )
    missing = ["MCP-Protocol-Version", *missing_envelope_keys(request.get("params"))]
    return _refused(request["id"], HEADER_MISMATCH, message, {"missing": missing})


def version_header_mismatch(request: Mapping[str, Any], headers: dict[bytes, bytes]) -> Rejected | None:
    """The error for a POSTed request whose ``MCP-Protocol-Version`` header disagrees with its ``_meta``, else None."""
    header = headers.get(b"mcp-protocol-version")
    meta = (request.get("params") or {}).get("_meta")
    body = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    if header is None or not isinstance(body, str) or header.decode("latin-1") == body:
        return None
    message = (
        f"Header mismatch: MCP-Protocol-Version {header.decode('latin-1')!r} does not match "
        f"params._meta[{PROTOCOL_VERSION_KEY!r}] {body!r}. Send the same version in both "
        "(2026-07-28, basic/transports/streamable-http, Protocol Version Header)."
    )
    return _refused(request["id"], HEADER_MISMATCH, message, {"header": header.decode("latin-1"), "body": body})


def _refused(id: types.RequestId, code: int, message: str, data: dict[str, Any]) -> Rejected:
    error = types.ErrorData(code=code, message=message, data=data)
    return Rejected(types.JSONRPCError(jsonrpc="2.0", id=id, error=error))
