"""An optional bearer token for a shared class server: the class secret, or a student's own token.

:class:`ClassTokenMiddleware` sits in front of every HTTP request (streamable
HTTP ``/mcp``; SSE ``GET /sse`` and ``POST /messages/``) and answers 401 unless
the request carries ``Authorization: Bearer <token>`` with the class secret (the
instructor) or a student token derived from it
(:mod:`mcp_teach.servers.student_tokens`). The 401 has an RFC 6750
``WWW-Authenticate: Bearer`` challenge and a JSON-RPC error body whose message
says how to send the token (mcp's streamable-HTTP client raises it as the
``MCPError``); it never echoes what was sent. Tokens are compared in constant time.

A request that passes names its person in ``scope["user"]``, as an authenticated
starlette user, and in the SDK's auth context (what its ``AuthContextMiddleware``
sets): the mcp SDK then binds each 2025-11-25 session to the student who opened
it (another student's ``Mcp-Session-Id`` answers 404) and each sealed
``requestState`` to the student it was given to (another student's echo of it
answers -32602), and the tools read who is calling with fastmcp's
``get_access_token()``.

Not fastmcp's ``auth=`` (``StaticTokenVerifier`` and friends): its 401 for a
missing token has an empty body, and the one for a wrong token tells an OAuth
client to re-register, which is no lesson for a student with a class token.
"""

from __future__ import annotations

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_teach.config import TOKEN_VARIABLE
from mcp_teach.servers.student_tokens import StudentTokens

#: JSON-RPC code of the refusal, the HTTP status's number: a new code for a purpose the specification does not
#: define SHOULD lie outside -32768..-32000, and -32001, which servers used to send, is in the legacy sub-range new
#: implementations SHOULD NOT use (2026-07-28, basic/index, Error Codes).
UNAUTHORIZED = 401
HOW_TO_AUTHENTICATE = (
    "Send the class token with every request as the header 'Authorization: Bearer <token>'. "
    'In Python: Client(url, auth="<token>") or teaching_client(url, auth="<token>"); '
    f"for 'mcp-teach chat --url URL' and 'mcp-teach demo --url URL' set {TOKEN_VARIABLE}=<token>. "
    "Use your own token, from your instructor ('mcp-teach class-tokens' makes one per student)."
)
MISSING_TOKEN = "This MCP server needs a class token and the request had none. " + HOW_TO_AUTHENTICATE
WRONG_TOKEN = (
    "The token sent is neither this server's class secret nor a student token made from it (check for typos "
    "or an old token). " + HOW_TO_AUTHENTICATE
)


class ClassTokenMiddleware:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, and says whose it is."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = AuthContextMiddleware(app)  # the SDK binds requestState to the person it reads there
        self._tokens = StudentTokens(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan events pass; websockets are not served
            await self.app(scope, receive, send)
            return
        scheme, _, credentials = Headers(scope=scope).get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            response = _unauthorized(MISSING_TOKEN, 'Bearer realm="mcp-teach"')
        elif (access := self._tokens.access_token(credentials.strip())) is not None:
            scope["user"], scope["auth"] = AuthenticatedUser(access), AuthCredentials(access.scopes)
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
