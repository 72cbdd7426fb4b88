"""Lesson 12's OAuth flow, safe to show: one view per exchange, the flow as a table, the rule behind each step.

The exchanges are recorded unredacted (``RecordingHTTPTransport(..., redact=False)``): the flow's own values must be
known first, to be hidden wherever they reappear (a code in a ``Location`` header comes back in the token request's
form). :class:`Sanitizer` learns the credentials (access and refresh tokens, the code, the PKCE ``code_verifier``, a
client secret, the ``Authorization`` header's credential) and the values that change every run (port, ``state``,
``code_challenge``, client id, session id), then replaces them everywhere they appear, as written and URL-encoded.
Every view is redacted and stable from run to run (no ports, times or random ids), so a notebook can print it and
nbval compare it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from mcp_teach.config import LOOPBACK
from mcp_teach.display.http_views import exchange_lines, status_line
from mcp_teach.display.show import table
from mcp_teach.wire import redact
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.messages import json_or_none
from mcp_teach.wire.plain_text import PlainText

#: JSON members holding a time (seconds since 1970): shown as ``<issued-at>`` / ``<expires-at>``.
TIME_FIELDS = {"client_id_issued_at": "<issued-at>", "client_secret_expires_at": "<expires-at>"}
#: Random values that are not credentials but change every run, by parameter or member name.
RUN_VALUES = {"state": "<state>", "code_challenge": "<code-challenge>", "client_id": "<client-id>"}
_PLACEHOLDER = re.compile(r"(?:[A-Za-z]+ )?<[a-z-]+>")
#: The content type of a form body (a token request's), whose parameters are learnt like a query's.
FORM = "application/x-www-form-urlencoded"


class Sanitizer:
    """Learns the credentials and run-specific values in a flow's exchanges, then replaces them everywhere.

    :attr:`secrets` maps each real credential to its placeholder: the tests check that none of them is left
    in any view. Whatever a field is called, :mod:`mcp_teach.wire.redact` redacts it again by name.
    """

    def __init__(self, port: int) -> None:
        self.secrets: dict[str, str] = {}
        self._run_values = {f"{LOOPBACK}{colon}{port}": f"{LOOPBACK}{colon}<port>" for colon in (":", "%3A")}

    def _learn_pair(self, name: str, value: str) -> None:
        if value and redact.is_secret_field(name):
            self.secrets.setdefault(value, redact.oauth_placeholder(name))
        elif value and name in RUN_VALUES and not value.startswith("https://"):
            self._run_values.setdefault(value, RUN_VALUES[name])

    def _learn_json(self, value: Any, name: str = "") -> None:
        """Every string in a JSON value, at any depth, under its member's name (a list item's: its index)."""
        if isinstance(value, str):
            self._learn_pair(name, value)
        members = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in members:
            self._learn_json(item, str(key))

    def learn(self, exchange: HttpExchange) -> None:
        request, response = exchange.request_headers, exchange.response_headers
        if (authorization := request.get("authorization")) and " " in authorization:
            scheme, credential = authorization.split(" ", 1)
            name = "access_token" if scheme.lower() == "bearer" else "client_credentials"
            self.secrets.setdefault(credential, redact.oauth_placeholder(name))
        # The URL's query, a form body, and the query of a redirect's Location.
        form = exchange.request_body if request.get("content-type", "").startswith(FORM) else ""
        queries = (urlsplit(exchange.target).query, form, urlsplit(response.get("location") or "").query)
        for name, value in (pair for query in queries for pair in parse_qsl(query, keep_blank_values=True)):
            self._learn_pair(name, value)
        self._learn_json([json_or_none(exchange.request_body), json_or_none(exchange.response_body)])
        for session_id in filter(None, (request.get("mcp-session-id"), response.get("mcp-session-id"))):
            self._run_values.setdefault(session_id, "<session-id>")

    def text(self, text: str) -> str:
        """``text`` with every learnt value replaced (as written and URL-encoded), longest first."""
        replacements = {**self._run_values, **self.secrets}
        for value, placeholder in sorted(replacements.items(), key=lambda item: len(item[0]), reverse=True):
            text = text.replace(value, placeholder).replace(quote(value, safe=""), placeholder)
        return text

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {
                key: TIME_FIELDS[key] if key in TIME_FIELDS and item else self.json(item) for key, item in value.items()
            }
        return value

    def header(self, name: str, value: str) -> str:
        """The tap's header rule, after the learnt values: a credential header already a placeholder stays."""
        value = self.text(value)
        if redact.is_credential_header(name) and _PLACEHOLDER.fullmatch(value):
            return value
        return redact.redact_header(name, value, mask=redact.oauth_placeholder)

    def body(self, text: str, content_type: str) -> str:
        """The tap's body rule, after the learnt values; JSON indented for reading."""
        mask = redact.oauth_placeholder
        if content_type.startswith("application/json") and (parsed := json_or_none(text)) is not None:
            return json.dumps(redact.redact_json(self.json(parsed), mask=mask), indent=2, ensure_ascii=False)
        return redact.redact_body(self.text(text), content_type, mask=mask)


MCP_PATH = "/mcp"
#: Headers left out of every view: they change per run or machine and say nothing about OAuth or MCP.
HIDDEN_HEADERS = frozenset(
    {"date", "user-agent", "content-length", "host", "accept-encoding", "connection", "server", "pragma"}
)


#: What a request to each path (or below it) is in the flow.
STEP_NAMES = {
    "/.well-known/oauth-protected-resource": "protected resource metadata (RFC 9728)",
    "/.well-known/oauth-authorization-server": "authorization server metadata (RFC 8414)",
    "/.well-known/openid-configuration": "OpenID Connect discovery",
    "/register": "dynamic client registration (RFC 7591)",
    "/authorize": "authorization request, PKCE (RFC 7636)",
}


def step_name(exchange: HttpExchange) -> str:
    """What an exchange is in the OAuth flow, from its method, path and body."""
    path = urlsplit(exchange.target).path
    if path == MCP_PATH:
        message = json_or_none(exchange.request_body)
        what = (message.get("method") if isinstance(message, dict) else None) or exchange.method
        return f"MCP {what}, {'with' if exchange.request_headers.get('authorization') else 'no'} token"
    if path == "/token":
        grant = dict(parse_qsl(exchange.request_body, keep_blank_values=True)).get("grant_type", "?")
        return f"token request ({grant})"
    known = (name for start, name in STEP_NAMES.items() if path == start or path.startswith(f"{start}/"))
    return next(known, f"{exchange.method} {path}")


@dataclass(frozen=True, repr=False)
class OAuthStep(PlainText):
    """One HTTP exchange of the flow, safe to show: credentials redacted, run-specific values replaced."""

    number: int
    step: str
    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    request_body: str
    status: int | None
    response_headers: tuple[tuple[str, str], ...]
    response_body: str

    @classmethod
    def of(cls, number: int, raw: HttpExchange, sanitizer: Sanitizer) -> OAuthStep:
        def half(headers: dict[str, str], body: str) -> tuple[tuple[tuple[str, str], ...], str]:
            """The headers shown, safe, and the body, safe: of the request or of the response."""
            shown = [
                (name, sanitizer.header(name, value)) for name, value in headers.items() if name not in HIDDEN_HEADERS
            ]
            return tuple(shown), sanitizer.body(body, headers.get("content-type", ""))

        url = redact.redact_url(sanitizer.text(raw.target), mask=redact.oauth_placeholder)
        request, response = half(raw.request_headers, raw.request_body), half(raw.response_headers, raw.response_body)
        return cls(number, step_name(raw), raw.method, url, *request, raw.status, *response)

    def header(self, name: str) -> str | None:
        """A response header's (shown) value."""
        return next((value for key, value in self.response_headers if key == name), None)

    @property
    def json(self) -> Any:
        """The response body as JSON (already redacted), or None."""
        return json_or_none(self.response_body)

    def text(self) -> str:
        lines = [f"── #{self.number} {self.step} " + "─" * max(4, 60 - len(self.step))]
        for arrow, first, headers, body in (
            ("→", f"{self.method} {self.url}", self.request_headers, self.request_body),
            ("←", status_line(self.status), self.response_headers, self.response_body),
        ):
            lines += exchange_lines(f"{arrow} {first}", headers, body.rstrip("\n").splitlines())
        return "\n".join(lines)


def _summary(exchange: OAuthStep) -> str:
    """The one fact of an exchange a lesson points at, for :meth:`OAuthFlow.table`."""
    body = exchange.json if isinstance(exchange.json, dict) else {}
    if exchange.status == 401 or exchange.status == 403:
        return f"WWW-Authenticate: {exchange.header('www-authenticate')}"
    for key in ("authorization_servers", "code_challenge_methods_supported"):
        if key in body:
            return f"{key}: {', '.join(body[key])}"
    if "client_id" in body and exchange.step.startswith("dynamic"):
        return f"client_id {body['client_id']}, token_endpoint_auth_method {body.get('token_endpoint_auth_method')}"
    if exchange.header("location"):
        return f"Location: {exchange.header('location')}"
    if "token_type" in body:
        return f"token_type {body['token_type']}, expires_in {body.get('expires_in')}, scope {body.get('scope')!r}"
    if "error" in body:
        return f"error {body['error']}: {body.get('error_description')}"
    return ""


@dataclass(repr=False)
class OAuthFlow(PlainText):
    """The exchanges of one OAuth flow in order (``flow[0]`` is the first; ``flow.step(1)`` the same, as numbered).

    :attr:`answer` is the tool's text, made safe like the exchanges (the notes server names the OAuth client's
    per-run id in it). :attr:`secrets` holds the real credentials, for tests that prove the views leak none of
    them: never display it.
    """

    exchanges: list[OAuthStep]
    answer: str
    secrets: dict[str, str]

    @classmethod
    def from_raw(cls, raw: list[HttpExchange], port: int, answer: str = "") -> OAuthFlow:
        sanitizer = Sanitizer(port)
        for exchange in raw:
            sanitizer.learn(exchange)
        exchanges = [OAuthStep.of(number, exchange, sanitizer) for number, exchange in enumerate(raw, start=1)]
        return cls(exchanges, sanitizer.text(answer), dict(sanitizer.secrets))

    def __getitem__(self, index: int) -> OAuthStep:
        return self.exchanges[index]

    def __len__(self) -> int:
        return len(self.exchanges)

    def __iter__(self) -> Iterator[OAuthStep]:
        return iter(self.exchanges)

    def first(self, path: str) -> OAuthStep:
        """The first exchange whose URL path starts with ``path`` (``"/token"``, ``"/.well-known/oauth-pro"``)."""
        for exchange in self.exchanges:
            if urlsplit(exchange.url).path.startswith(path):
                return exchange
        raise KeyError(f"no exchange to {path!r}; paths in this flow: {sorted({urlsplit(e.url).path for e in self})}")

    def table(self) -> PlainText:
        """One row per exchange: number, request (path only), status, the one fact it shows (cut at 60)."""
        rows = [(e.number, f"{e.method} {urlsplit(e.url).path}", e.status, _summary(e)[:60]) for e in self.exchanges]
        return table(["#", "request", "status", "what it shows"], rows)

    def text(self) -> str:
        return self.table().text()
