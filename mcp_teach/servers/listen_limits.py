"""How many ``subscriptions/listen`` streams one person may hold, on every course server that serves them.

The mcp SDK's ``ListenHandler`` takes any number of streams: on a class server one student held 49 and was sent
each change 49 times. The assistant, the untrusted server and the capstone serve listen streams through
:func:`serve_listen`, which counts them per person (the bearer token's client id: a student's name on a class
server).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import mcp_types
from fastmcp import FastMCP
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

#: How many 2026-07-28 ``subscriptions/listen`` streams one person may hold open at once.
LISTEN_STREAMS_PER_PERSON = 8


def person_of(ctx: ServerRequestContext) -> str | None:
    """Whose request it is: its bearer token's client id (a student's name on a class server); None without one."""
    user = getattr(ctx.request, "scope", {}).get("user")
    return user.access_token.client_id if isinstance(user, AuthenticatedUser) else None


def serve_listen(mcp: FastMCP, listen: ListenHandler) -> None:
    """Serve ``subscriptions/listen`` with ``listen``, at most :data:`LISTEN_STREAMS_PER_PERSON` open per person.

    The next one is refused (-32603, as the SDK refuses a stream past its own limit). Without a token everyone is
    one person; the count is per process (``--workers N`` allows N times as many).
    """
    listening: Counter[str | None] = Counter()  # person -> open listen streams

    async def bounded_listen(ctx: ServerRequestContext, params: mcp_types.SubscriptionsListenRequestParams) -> Any:
        who = person_of(ctx)
        if listening[who] >= LISTEN_STREAMS_PER_PERSON:
            limit = f"at most {LISTEN_STREAMS_PER_PERSON} per person"
            raise MCPError(INTERNAL_ERROR, f"Too many subscriptions/listen streams ({limit}): close one you can spare.")
        listening[who] += 1
        try:
            return await listen(ctx, params)
        finally:
            listening[who] -= 1

    # fastmcp serves no subscriptions/listen: the mcp SDK's low-level server takes a handler for any method.
    method, params_type = "subscriptions/listen", mcp_types.SubscriptionsListenRequestParams
    mcp._mcp_server.add_request_handler(method, params_type, bounded_listen)
