"""OAuth 2.1 plumbing for lesson 12: an MCP server with its authorization server on loopback, and the SDK's client.

The lesson builds the registration, authorization and token requests by hand; this module starts what they talk
to and runs the same flow through the mcp SDK for comparison. Who plays which part (2026-07-28,
basic/authorization/index, Roles):

- resource server: ``server_factory(auth=provider)`` on 127.0.0.1 (:func:`oauth_server`);
- authorization server: fastmcp's ``InMemoryOAuthProvider`` on the same app ("hosted with the resource server").
  It approves every authorization request at once: there is no login page;
- client (:func:`run_oauth_flow`): the mcp SDK's ``OAuthClientProvider`` under a ``fastmcp.Client``;
  :class:`HeadlessBrowser` sends the authorization request and reads the ``302``'s ``Location`` instead of a
  browser. Nothing listens on :data:`REDIRECT_URI`: nothing needs to.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2
from fastmcp import FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from mcp_teach.client import teaching_client
from mcp_teach.config import LOOPBACK
from mcp_teach.lessons.l12_oauth_views import MCP_PATH, OAuthFlow
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.http_app import guarded_http_app
from mcp_teach.transports.in_process import serve_asgi
from mcp_teach.transports.sockets import bind_socket, server_url
from mcp_teach.wire.http_recording import HttpExchange, RecordingHTTPTransport, recording_client_factory

#: The scope the lesson's server requires; the 401 challenge names it (2026-07-28, basic/authorization/index,
#: "Scope Selection Strategy") and the client asks for exactly that.
DEFAULT_SCOPES = ("mcp:tools",)
#: Where the authorization server sends the browser back. A loopback redirect URI is allowed (2026-07-28,
#: basic/authorization/security-considerations, "Communication Security": localhost or https); nothing listens
#: on it because :class:`HeadlessBrowser` reads the redirect instead of following it.
REDIRECT_URI = "http://127.0.0.1:3000/callback"
CLIENT_NAME = "mcp-teach lesson 12"
#: What the client registers as (the SDK's client and the by-hand steps alike): a public, native client with PKCE.
CLIENT_METADATA = {
    "client_name": CLIENT_NAME, "redirect_uris": [REDIRECT_URI], "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"], "token_endpoint_auth_method": "none", "application_type": "native",
}  # fmt: skip


# ── the servers ────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class OAuthServer:
    """A running MCP server with its authorization server: what :func:`oauth_server` yields."""

    url: str
    port: int
    provider: InMemoryOAuthProvider
    #: The origin both servers share: ``http://127.0.0.1:<port>``.
    base: str


@contextlib.asynccontextmanager
async def oauth_server(
    server_factory: Callable[..., FastMCP] = build_calculator_server, *, scopes: tuple[str, ...] = DEFAULT_SCOPES
) -> AsyncIterator[OAuthServer]:
    """Serve ``server_factory(auth=InMemoryOAuthProvider(...))`` over streamable HTTP on 127.0.0.1 until the block ends.

    The socket is bound first: the provider must know its own URL, which it puts in its metadata
    (``issuer``, endpoints) and in the protected resource metadata (``resource``). Dynamic registration is
    switched on and limited to ``scopes``; every MCP request needs a token carrying them.
    """
    sock = bind_socket(LOOPBACK)
    port = sock.getsockname()[1]
    base = f"http://{LOOPBACK}:{port}"
    options = ClientRegistrationOptions(enabled=True, valid_scopes=list(scopes))
    provider = InMemoryOAuthProvider(base_url=base, client_registration_options=options, required_scopes=list(scopes))
    async with serve_asgi(guarded_http_app(server_factory(auth=provider), "streamable-http", MCP_PATH, LOOPBACK), sock):
        yield OAuthServer(server_url(LOOPBACK, port, MCP_PATH), port, provider, base)


async def token_by_hand(
    http: httpx2.AsyncClient, server: OAuthServer, scope: str, client_id: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The by-hand OAuth steps of Going deeper in one call (metadata, registration, PKCE authorization, token).

    ``http`` is a client on ``server.base``. Without ``client_id`` a new public client registers (for every
    scope the server offers, so that a later step-up can ask for more); with it, that client authorizes again.
    Returns the ``client_id`` and the token response (``access_token``, ``refresh_token``, ``scope``, ...).
    """
    metadata = (await http.get("/.well-known/oauth-authorization-server")).json()
    if client_id is None:
        scopes = " ".join(metadata.get("scopes_supported") or [scope])
        registration = await http.post(metadata["registration_endpoint"], json={**CLIENT_METADATA, "scope": scopes})
        client_id = registration.raise_for_status().json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(16)
    authorize = await http.get(metadata["authorization_endpoint"], params={
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI, "scope": scope,
        "state": state, "code_challenge": challenge, "code_challenge_method": "S256", "resource": server.url,
    })  # fmt: skip
    redirect = dict(parse_qsl(urlsplit(authorize.headers.get("location", "")).query))
    if redirect.get("state") != state or "code" not in redirect:
        raise OAuthFlowError(f"the authorization request was not granted: {authorize.status_code} {redirect}")
    token = await http.post(metadata["token_endpoint"], data={
        "grant_type": "authorization_code", "code": redirect["code"], "redirect_uri": REDIRECT_URI,
        "client_id": client_id, "code_verifier": verifier, "resource": server.url,
    })  # fmt: skip
    return client_id, token.raise_for_status().json()


# ── the client ─────────────────────────────────────────────────────────────────────────────────────────


class MemoryTokenStorage:
    """The SDK's ``TokenStorage``, in memory: one flow, one client, nothing written to disk."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class HeadlessBrowser:
    """Plays the user's browser for the SDK's ``redirect_handler`` and ``callback_handler``.

    :meth:`open` sends the authorization request (through the flow's recorder, so it is captured) without
    following the redirect; :meth:`callback` reads ``code``, ``state`` and ``iss`` from the ``Location`` the
    authorization server answered with, which a browser would have delivered to :data:`REDIRECT_URI`.
    """

    def __init__(self, transport: httpx2.AsyncBaseTransport) -> None:
        self._transport = transport
        self._location: str | None = None

    async def open(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(transport=self._transport) as client:
            response = await client.get(authorization_url, follow_redirects=False)
        if response.status_code not in (302, 303) or "location" not in response.headers:
            raise OAuthFlowError(
                f"the authorization endpoint answered {response.status_code}, not a redirect to the client: "
                f"{response.text[:200]}"
            )
        self._location = response.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        if self._location is None:
            raise OAuthFlowError("callback() before open(): the SDK asks for the code only after the redirect")
        query = dict(parse_qsl(urlsplit(self._location).query))
        if "error" in query:
            reason = f"{query['error']} {query.get('error_description', '')}".strip()
            raise OAuthFlowError(f"the authorization server refused: {reason}")
        return AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"), iss=query.get("iss"))


def oauth_client_provider(server: OAuthServer, browser: HeadlessBrowser) -> OAuthClientProvider:
    """The mcp SDK's OAuth client for ``server``: dynamic registration as a public, native client with PKCE.

    ``token_endpoint_auth_method: none`` (a public client has no secret to keep) and ``application_type:
    native`` (2026-07-28, basic/authorization/client-registration: "MCP clients MUST specify an appropriate
    application_type"; a loopback redirect is native). No ``scope``: the SDK takes it from the 401
    challenge, then from ``scopes_supported`` (basic/authorization/index, "Scope Selection Strategy").
    """
    metadata = OAuthClientMetadata.model_validate(CLIENT_METADATA)
    handlers = {"redirect_handler": browser.open, "callback_handler": browser.callback}
    return OAuthClientProvider(server.url, metadata, MemoryTokenStorage(), **handlers)


async def authorize_and_call(
    server: OAuthServer, tool: str = "calculator_add", arguments: dict[str, Any] | None = None
) -> OAuthFlow:
    """Connect a fresh client to ``server``, let the SDK run the OAuth flow, call ``tool``; return the flow."""
    recorded: list[HttpExchange] = []  # unredacted: the views learn the flow's secrets from it, then hide them
    browser = HeadlessBrowser(RecordingHTTPTransport(recorded.append, redact=False))
    auth, factory = oauth_client_provider(server, browser), recording_client_factory(recorded.append, redact=False)
    async with teaching_client(StreamableHttpTransport(server.url, auth=auth, httpx_client_factory=factory)) as client:
        await client.list_tools()  # first, or the client lists tools after the call to check its output schema
        result = await client.call_tool(tool, arguments if arguments is not None else {"a": 2, "b": 3})
    return OAuthFlow.from_raw(recorded, server.port, "\n".join(getattr(block, "text", "") for block in result.content))


async def run_oauth_flow(
    server_factory: Callable[..., FastMCP] = build_calculator_server,
    tool: str = "calculator_add",
    arguments: dict[str, Any] | None = None,
    *,
    scopes: tuple[str, ...] = DEFAULT_SCOPES,
) -> OAuthFlow:
    """The whole flow, from the first 401 to the authenticated ``tools/call``, on a server that lives for it."""
    async with oauth_server(server_factory, scopes=scopes) as server:
        return await authorize_and_call(server, tool, arguments)
