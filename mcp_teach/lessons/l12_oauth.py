"""OAuth 2.1 for an MCP server over streamable HTTP, every HTTP exchange captured on loopback (lesson 12).

One call runs the whole flow for real and returns it::

    flow = await run_oauth_flow()          # any FastMCP factory taking ``auth=``; default: the calculator
    flow.table()                           # one line per HTTP exchange
    flow[3]                                # one exchange in full: request line, headers, body; response

Who plays which part (2026-07-28, basic/authorization/index, "Roles"):

- resource server: the MCP server, ``server_factory(auth=provider)``, on 127.0.0.1 (:func:`oauth_server`);
- authorization server: fastmcp's ``InMemoryOAuthProvider``, mounted on the same app (the spec allows the
  authorization server to be "hosted with the resource server"). It approves every authorization request
  at once: there is no login page, so the "user" consents without being asked;
- client: the mcp SDK's ``OAuthClientProvider`` (an ``httpx2.Auth``) under a real ``fastmcp.Client``. Its
  ``redirect_handler`` would open a browser; :class:`HeadlessBrowser` sends the authorization request with
  httpx instead and reads the ``302``'s ``Location``; its ``callback_handler`` hands over the code and
  ``state`` from it. Nothing listens on :data:`REDIRECT_URI`: nothing needs to.

Every request the client sends, the SDK's discovery and token requests included, goes through one recording
httpx transport (:class:`RecordingTransport`), so the flow is the wire in order. What is shown is made safe
and stable by :class:`Sanitizer`: credentials (access and refresh tokens, the authorization code, the PKCE
``code_verifier``, a client secret, the ``Authorization`` header's credential) become ``<access-token>`` and
the like; values that change every run become ``<port>``, ``<client-id>``, ``<state>``, ``<code-challenge>``,
``<session-id>``, ``<issued-at>``. Headers that vary and teach nothing (``date``, ``user-agent``,
``content-length``, ``host``, ...) are left out. No nbval sanitizing is needed for these views.

Client registration: the 2026-07-28 spec prefers Client ID Metadata Documents, then Dynamic Client
Registration as a deprecated fallback (basic/authorization/client-registration, priority order 1-4). The
lesson registers dynamically (RFC 7591) because fastmcp's ``OAuthProvider`` (and so ``InMemoryOAuthProvider``)
does not advertise ``client_id_metadata_document_supported``: fastmcp 4.2 supports CIMD only in its
``OAuthProxy`` (``fastmcp/server/auth/cimd.py``), and a CIMD ``client_id`` must be an ``https`` URL the
authorization server fetches, which a loopback lesson has none of. :func:`client_id_metadata_document`
shows the document a CIMD client would publish instead.

Where fastmcp 4.2 / mcp 2.3 choose what the spec leaves open, or fall short of it (seen in the captured flow):

- discovery: the SDK follows ``resource_metadata`` from the 401, then tries RFC 8414 first and OIDC discovery
  only if that fails (authorization-server-discovery: that order is a MUST); here the first answers;
- the ``issuer`` is rendered with a trailing slash (``http://127.0.0.1:<port>/``, pydantic's URL form);
- no ``iss`` in the redirect and no ``authorization_response_iss_parameter_supported``: RFC 9207 is a SHOULD for
  servers, and the client's table (index, "Authorization Response Validation") then says "proceed";
- the metadata lists ``client_secret_post``/``client_secret_basic`` only, yet registers a public client
  (``none``), which the SDK asks for;
- audience: the provider takes ``resource`` but does not bind the token to it, and fastmcp does not pass
  ``resource_server_url`` to the SDK's bearer check, so the "MUST validate ... intended audience" (index,
  "Token Handling") holds only because the tokens are opaque and known to this one server;
- the authorization code lives 5 minutes, the access token 1 hour, the refresh token forever (in_memory.py).

The 2025-11-25 authorization page (one page, no split) said the same on discovery, PKCE and ``resource``;
it listed Dynamic Client Registration as a plain MAY (not deprecated), had no RFC 9207 ``iss`` check, no
``application_type`` rule and no refresh-token section.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2
from fastmcp import FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from fastmcp.utilities.logging import temporary_log_level
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, PKCEParameters
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from mcp_teach.client import teaching_client
from mcp_teach.config import LOOPBACK
from mcp_teach.lessons.l12_oauth_record import RecordingTransport
from mcp_teach.lessons.l12_oauth_views import MCP_PATH, Exchange, OAuthFlow
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.http_app import guarded_http_app
from mcp_teach.transports.in_process import serve_asgi
from mcp_teach.transports.sockets import bind_socket, server_url
from mcp_teach.wire.modern_post import modern_post

#: The scope the lesson's server requires; the 401 challenge names it (2026-07-28, basic/authorization/index,
#: "Scope Selection Strategy") and the client asks for exactly that.
DEFAULT_SCOPES = ("mcp:tools",)
#: Where the authorization server sends the browser back. A loopback redirect URI is allowed (2026-07-28,
#: basic/authorization/security-considerations, "Communication Security": localhost or https); nothing listens
#: on it because :class:`HeadlessBrowser` reads the redirect instead of following it.
REDIRECT_URI = "http://127.0.0.1:3000/callback"
CLIENT_NAME = "mcp-teach lesson 12"


# ── the servers ────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class OAuthServer:
    """A running MCP server with its authorization server: what :func:`oauth_server` yields."""

    url: str
    port: int
    provider: InMemoryOAuthProvider

    @property
    def issuer(self) -> str:
        return str(self.provider.issuer_url).rstrip("/")


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
    provider = InMemoryOAuthProvider(
        base_url=base,
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=list(scopes)),
        required_scopes=list(scopes),
    )
    app = guarded_http_app(server_factory(auth=provider), "streamable-http", MCP_PATH, LOOPBACK)
    async with serve_asgi(app, sock):
        yield OAuthServer(server_url(LOOPBACK, port, MCP_PATH), port, provider)


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
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        application_type="native",
    )
    return OAuthClientProvider(
        server.url,
        metadata,
        MemoryTokenStorage(),
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )


def client_id_metadata_document(client_id: str = "https://app.example/mcp-teach/client.json") -> dict[str, Any]:
    """The document a CIMD client publishes at ``client_id`` instead of registering (not used on loopback).

    2026-07-28, basic/authorization/client-registration, "Client ID Metadata Documents": an ``https`` URL with
    a path, ``client_id`` equal to that URL, at least ``client_id``, ``client_name``, ``redirect_uris``.
    """
    return {
        "client_id": client_id,
        "client_name": CLIENT_NAME,
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }


async def authorize_and_call(
    server: OAuthServer, tool: str = "calculator_add", arguments: dict[str, Any] | None = None
) -> OAuthFlow:
    """Connect a fresh client to ``server``, let the SDK run the OAuth flow, call ``tool``; return the flow."""
    recorder = RecordingTransport()
    browser = HeadlessBrowser(recorder)
    auth = oauth_client_provider(server, browser)
    transport = StreamableHttpTransport(server.url, auth=auth, httpx_client_factory=recorder.client_factory())
    async with teaching_client(transport) as client:
        await client.list_tools()  # first, or the client lists tools after the call to check its output schema
        result = await client.call_tool(tool, arguments if arguments is not None else {"a": 2, "b": 3})
    answer = "\n".join(getattr(block, "text", "") for block in result.content)
    return OAuthFlow.from_raw(recorder.exchanges, server.port, answer)


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


# ── single steps, for the refusals ─────────────────────────────────────────────────────────────────────

def _port(url: str) -> int:
    return urlsplit(url).port or 80


async def mcp_request(url: str, token: str | None = None) -> Exchange:
    """One MCP ``tools/list`` POST to ``url``, with ``Authorization: Bearer <token>`` if given; the exchange.

    Without a token, or with one the server does not know or that has expired: ``401`` and a
    ``WWW-Authenticate: Bearer`` challenge (2026-07-28, basic/authorization/index, "Token Handling":
    "Invalid or expired tokens MUST receive a HTTP 401 response").
    """
    recorder = RecordingTransport()
    post = modern_post("tools/list")  # 2026-07-28: no session needed; without a good token it is refused unread
    if token is not None:
        post = post.with_headers({"authorization": f"Bearer {token}"})
    # fastmcp logs each refused token at INFO, with a timestamp: not something a lesson's output should hold
    with temporary_log_level("WARNING"):
        async with httpx2.AsyncClient(transport=recorder) as client:
            await client.post(url, content=post.json(), headers=post.headers)
    return OAuthFlow.from_raw(recorder.exchanges, _port(url))[0]


async def redeem_code(server: OAuthServer, *, code_verifier: str | None = None) -> OAuthFlow:
    """Register, get a code for a real PKCE pair, redeem it with ``code_verifier`` (default: the right one).

    Done with plain httpx, step by step, to show what PKCE protects: a stolen code is worthless without the
    verifier (2026-07-28, basic/authorization/security-considerations, "Authorization Code Protection").
    fastmcp answers a wrong verifier ``401 invalid_grant`` (the mcp SDK says 400; fastmcp's ``TokenHandler``
    turns ``invalid_grant`` into 401). A refused code stays valid: the right verifier still redeems it.
    """
    recorder = RecordingTransport()
    pkce = PKCEParameters.generate()
    base = f"http://{LOOPBACK}:{server.port}"
    async with httpx2.AsyncClient(transport=recorder, base_url=base) as client:
        registration = {
            "client_name": CLIENT_NAME,
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "application_type": "native",
            "scope": " ".join(server.provider.required_scopes),
        }
        client_id = (await client.post("/register", json=registration)).json()["client_id"]
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "state": "lesson-12",
            "code_challenge": pkce.code_challenge,
            "code_challenge_method": "S256",
            "resource": server.url,
            "scope": " ".join(server.provider.required_scopes),
        }
        location = (await client.get("/authorize", params=query)).headers["location"]
        answer = dict(parse_qsl(urlsplit(location).query))
        if "code" not in answer:
            raise OAuthFlowError(f"no code in the redirect: {answer.get('error')} {answer.get('error_description')}")
        code = answer["code"]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": code_verifier or pkce.code_verifier,
            "resource": server.url,
        }
        await client.post("/token", data=form)
    flow = OAuthFlow.from_raw(recorder.exchanges, server.port)
    flow.secrets.setdefault(pkce.code_verifier, "<code-verifier>")  # the right one, even if never sent
    return flow
