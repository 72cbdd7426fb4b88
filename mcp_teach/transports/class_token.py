"""An optional bearer token for a shared class server.

:class:`ClassTokenMiddleware` sits in front of every HTTP request (streamable
HTTP ``/mcp``; SSE ``GET /sse`` and ``POST /messages/``) and answers 401 unless
the request carries ``Authorization: Bearer <token>``. The 401 has an RFC 6750
``WWW-Authenticate: Bearer`` challenge and a JSON-RPC error body whose message
says how to send the token (mcp's streamable-HTTP client raises it as the
``MCPError``); it never echoes what was sent. Tokens are compared in constant time.

Not fastmcp's ``auth=`` (``StaticTokenVerifier`` and friends): its 401 for a
missing token has an empty body, and the one for a wrong token tells an OAuth
client to re-register, which is no lesson for a student with a class token.
"""

from __future__ import annotations

import hashlib
import hmac

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_teach.config import TOKEN_VARIABLE, check_token

#: JSON-RPC code of the refusal: the one MCP servers commonly use for "Unauthorized".
UNAUTHORIZED = -32001
HOW_TO_AUTHENTICATE = (
    "Send the class token with every request as the header 'Authorization: Bearer <token>'. "
    'In Python: Client(url, auth="<token>") or teaching_client(url, auth="<token>"); '
    f"for 'mcp-teach chat --url URL' and 'mcp-teach demo --url URL' set {TOKEN_VARIABLE}=<token>. "
    "Your instructor has the token."
)
MISSING_TOKEN = "This MCP server needs a class token and the request had none. " + HOW_TO_AUTHENTICATE
WRONG_TOKEN = "The class token sent is not this server's (check for typos or an old token). " + HOW_TO_AUTHENTICATE


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class ClassTokenMiddleware:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        # Only the digest is kept: comparing digests takes the same time whatever the length of the guess.
        self._expected = _digest(check_token(token).encode("ascii"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan events pass; websockets are not served
            await self.app(scope, receive, send)
            return
        scheme, _, credentials = Headers(scope=scope).get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            response = _unauthorized(MISSING_TOKEN, 'Bearer realm="mcp-teach"')
        elif hmac.compare_digest(_digest(credentials.strip().encode("latin-1")), self._expected):
            await self.app(scope, receive, send)
            return
        else:
            challenge = 'Bearer realm="mcp-teach", error="invalid_token", error_description="wrong class token"'
            response = _unauthorized(WRONG_TOKEN, challenge)
        await response(scope, receive, send)


def _unauthorized(message: str, challenge: str) -> JSONResponse:
    """401 with an RFC 6750 challenge and a JSON-RPC error (``id`` null: the request was not read)."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": UNAUTHORIZED, "message": message}}
    return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})
