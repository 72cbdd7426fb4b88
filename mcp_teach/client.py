"""A fastmcp client with a fixed identity, so captured messages stay stable."""

from __future__ import annotations

from typing import Any

import mcp_types
from fastmcp import Client

#: Sent as ``clientInfo``; fixed by the package so captures do not change with fastmcp upgrades.
CLIENT_INFO = mcp_types.Implementation(name="mcp-teach-client", version="1.0.0")


def teaching_client(target: Any, *, mode: str = "auto", **kwargs: Any) -> Client:
    """``fastmcp.Client(target)`` with the course's ``clientInfo``.

    ``mode="legacy"`` speaks the 2025-11-25 ``initialize`` handshake; the
    default ``"auto"`` starts with the 2026-07-28 ``server/discover`` where the
    transport supports it (SSE always falls back to the handshake).
    """
    return Client(target, client_info=CLIENT_INFO, mode=mode, **kwargs)
