"""Lesson 12's OAuth flow, safe to show: one view per exchange, the flow as a table, the rule behind each step.

Built from what :mod:`.l12_oauth_record` recorded and sanitized: every view is redacted and stable from run to
run (no ports, times or random ids), so a notebook can print it and nbval compare it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from mcp_teach.display.show import table
from mcp_teach.lessons.l12_oauth_record import Sanitizer, parse_json, query_pairs
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.plain_text import PlainText
from mcp_teach.wire.redact import oauth_placeholder, redact_url

MCP_PATH = "/mcp"
#: Headers left out of every view: they change per run or machine and say nothing about OAuth or MCP.
HIDDEN_HEADERS = frozenset(
    {"date", "user-agent", "content-length", "host", "accept-encoding", "connection", "server", "pragma"}
)


def _status_line(status: int | None) -> str:
    if status is None:
        return "(no response)"
    with contextlib.suppress(ValueError):
        return f"{status} {HTTPStatus(status).phrase}"
    return str(status)


def _jsonrpc_method(body: str) -> str | None:
    message = parse_json(body)
    return message.get("method") if isinstance(message, dict) else None


def step_name(exchange: HttpExchange) -> str:
    """What an exchange is in the OAuth flow, from its method, path and body."""
    path = urlsplit(exchange.target).path
    if path == MCP_PATH:
        what = _jsonrpc_method(exchange.request_body) or exchange.method
        return f"MCP {what}, {'with' if exchange.request_headers.get('authorization') else 'no'} token"
    if path.startswith("/.well-known/oauth-protected-resource"):
        return "protected resource metadata (RFC 9728)"
    if path.startswith("/.well-known/oauth-authorization-server"):
        return "authorization server metadata (RFC 8414)"
    if path.startswith("/.well-known/openid-configuration"):
        return "OpenID Connect discovery"
    if path == "/register":
        return "dynamic client registration (RFC 7591)"
    if path == "/authorize":
        return "authorization request, PKCE (RFC 7636)"
    if path == "/token":
        grant = dict(query_pairs(exchange.request_body)).get("grant_type", "?")
        return f"token request ({grant})"
    return f"{exchange.method} {path}"


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
        def headers(pairs: dict[str, str]) -> tuple[tuple[str, str], ...]:
            return tuple(
                (name, sanitizer.header(name, value)) for name, value in pairs.items() if name not in HIDDEN_HEADERS
            )

        return cls(
            number,
            step_name(raw),
            raw.method,
            redact_url(sanitizer.text(raw.target), mask=oauth_placeholder),
            headers(raw.request_headers),
            sanitizer.body(raw.request_body, raw.request_headers.get("content-type", "")),
            raw.status,
            headers(raw.response_headers),
            sanitizer.body(raw.response_body, raw.response_headers.get("content-type", "")),
        )

    def header(self, name: str) -> str | None:
        """A response header's (shown) value."""
        return next((value for key, value in self.response_headers if key == name), None)

    @property
    def json(self) -> Any:
        """The response body as JSON (already redacted), or None."""
        return parse_json(self.response_body)

    def text(self) -> str:
        lines = [f"── #{self.number} {self.step} " + "─" * max(4, 60 - len(self.step))]
        for arrow, first, headers, body in (
            ("→", f"{self.method} {self.url}", self.request_headers, self.request_body),
            ("←", _status_line(self.status), self.response_headers, self.response_body),
        ):
            lines.append(f"{arrow} {first}")
            lines += [f"  {name}: {value}" for name, value in headers]
            if body:
                lines.append("  │")
                lines += [f"  │ {line}" for line in body.rstrip("\n").splitlines()]
        return "\n".join(lines)


def _summary(exchange: OAuthStep) -> str:
    """The one fact of an exchange a lesson points at, for :meth:`OAuthFlow.table`."""
    body = exchange.json if isinstance(exchange.json, dict) else {}
    if exchange.status == 401 or exchange.status == 403:
        return f"WWW-Authenticate: {exchange.header('www-authenticate')}"
    if "authorization_servers" in body:
        return f"authorization_servers: {', '.join(body['authorization_servers'])}"
    if "code_challenge_methods_supported" in body:
        return f"code_challenge_methods_supported: {', '.join(body['code_challenge_methods_supported'])}"
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
    per-run id in it). :attr:`unredacted` and :attr:`secrets` hold the real values, for tests
    that prove the views leak none of them: never display them.
    """

    exchanges: list[OAuthStep]
    answer: str
    unredacted: list[HttpExchange] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_raw(cls, raw: list[HttpExchange], port: int, answer: str = "") -> OAuthFlow:
        sanitizer = Sanitizer(port)
        for exchange in raw:
            sanitizer.learn(exchange)
        exchanges = [OAuthStep.of(number, exchange, sanitizer) for number, exchange in enumerate(raw, start=1)]
        return cls(exchanges, sanitizer.text(answer), list(raw), dict(sanitizer.secrets))

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
