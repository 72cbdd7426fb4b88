"""Errors the mcp SDK raises itself, in JSON-RPC form, that no server sent: a timeout and a closed connection.

mcp 2.3 raises ``MCPError`` for an error response from the server, and also, with codes from JSON-RPC's range,
for two things that happen in this process (``mcp/shared/jsonrpc_dispatcher.py``, ``send_raw_request``):

- ``REQUEST_TIMEOUT`` (-32001), ``"Request 'tools/call' timed out"``: no answer within the time limit
  (``Client(timeout=...)`` or ``call_tool(..., timeout=...)``); the server may still be working on it;
- ``CONNECTION_CLOSED`` (-32000), ``"Connection closed"``: the connection ended first (the server process
  exited, the pipe or stream broke); over streamable HTTP also ``"SSE stream ended without a response"``.

"Implementations surfacing local errors in JSON-RPC-shaped structures should ensure they cannot be mistaken for
errors received from the peer" (2026-07-28, basic/index, Error Codes). The code alone cannot tell them apart:
-32000 to -32019 are "legacy" codes servers used for errors of their own, and receivers "MUST NOT assume any
specific meaning for these codes" (same section). The SDK's exact message with the code can: :func:`local_error`.
"""

from __future__ import annotations

import math
import re

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

#: The SDK's timeout message, for any method.
_TIMED_OUT = re.compile(r"Request '[^']+' timed out")
#: The SDK's messages for a connection that ended before the answer, and what each means.
CLOSED = {
    "Connection closed": "the connection to the MCP server closed before it answered",
    "SSE stream ended without a response": "the MCP server's event stream ended before it answered",
}


def local_error(error: MCPError, waited: float | None = None) -> str | None:
    """What ``error`` means if the mcp SDK raised it itself (no server sent it), else ``None``: a peer's error.

    ``waited``: how long the call had waited, in seconds, said in the timeout's sentence.
    """
    if error.code == REQUEST_TIMEOUT and _TIMED_OUT.fullmatch(error.message):
        # to the tenth below, so a wait the machine's load stretched by a few milliseconds reads as the limit it was
        within = f" within {math.floor(waited * 10) / 10:g} s" if waited is not None else " within the time limit"
        return f"no answer from the MCP server{within}: the client stopped waiting, the call may still run"
    return CLOSED.get(error.message) if error.code == CONNECTION_CLOSED else None
