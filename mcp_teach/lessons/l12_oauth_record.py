"""Lesson 12's OAuth flow on the wire: the exchanges recorded unredacted, and what must be hidden learnt from them.

:class:`RecordingTransport` is :mod:`mcp_teach.wire.http_recording`'s recorder with ``redact=False``: here the
flow's own values must be known first, to be hidden wherever they reappear (a code in a ``Location`` header
comes back in the token request's form). :class:`Sanitizer` learns the credentials (access and refresh tokens,
the code, the PKCE ``code_verifier``, a client secret, the ``Authorization`` header's credential) and the values
that change every run (port, ``state``, ``code_challenge``, client id, session id), then replaces them
everywhere they appear, as written and URL-encoded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import httpx2

from mcp_teach.config import LOOPBACK
from mcp_teach.wire.http_recording import HttpExchange, RecordingHTTPTransport
from mcp_teach.wire.redact import (
    is_credential_header,
    is_secret_field,
    oauth_placeholder,
    redact_body,
    redact_header,
    redact_json,
)


class RecordingTransport(RecordingHTTPTransport):
    """The wire recorder, unredacted: :attr:`exchanges` is every exchange so far, in order."""

    def __init__(self) -> None:
        self.recorded: list[HttpExchange] = []
        super().__init__(self.recorded.append, redact=False)

    @property
    def exchanges(self) -> list[HttpExchange]:
        return list(self.recorded)

    def client_factory(self) -> Callable[..., httpx2.AsyncClient]:
        """An ``httpx_client_factory`` for fastmcp's HTTP transport whose clients send through this recorder."""

        def factory(**kwargs: Any) -> httpx2.AsyncClient:
            kwargs.setdefault("timeout", httpx2.Timeout(30.0, read=300.0))
            return httpx2.AsyncClient(transport=self, **kwargs)

        return factory


#: JSON members holding a time (seconds since 1970): shown as ``<issued-at>`` / ``<expires-at>``.
TIME_FIELDS = {"client_id_issued_at": "<issued-at>", "client_secret_expires_at": "<expires-at>"}
#: Random values that are not credentials but change every run, by parameter or member name.
RUN_VALUES = {"state": "<state>", "code_challenge": "<code-challenge>", "client_id": "<client-id>"}
_PLACEHOLDER = re.compile(r"(?:[A-Za-z]+ )?<[a-z-]+>")


def query_pairs(text: str) -> list[tuple[str, str]]:
    """The ``name=value`` pairs of a query string or form body, empty values kept."""
    return parse_qsl(text, keep_blank_values=True)


def parse_json(text: str) -> Any:
    """``text`` as JSON, or None if it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


class Sanitizer:
    """Learns the credentials and run-specific values in a flow's exchanges, then replaces them everywhere.

    :attr:`secrets` maps each real credential to its placeholder: the tests check that none of them is left
    in any view. Whatever a field is called, :mod:`mcp_teach.wire.redact` redacts it again by name.
    """

    def __init__(self, port: int) -> None:
        self.secrets: dict[str, str] = {}
        self._run_values: dict[str, str] = {
            f"{LOOPBACK}:{port}": f"{LOOPBACK}:<port>",
            f"{LOOPBACK}%3A{port}": f"{LOOPBACK}%3A<port>",
        }

    def _learn_pair(self, name: str, value: str) -> None:
        if not value:
            return
        if is_secret_field(name):
            self.secrets.setdefault(value, oauth_placeholder(name))
        elif name in RUN_VALUES and not value.startswith("https://"):
            self._run_values.setdefault(value, RUN_VALUES[name])

    def _learn_json(self, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str):
                    self._learn_pair(key, item)
                else:
                    self._learn_json(item)
        elif isinstance(value, list):
            for item in value:
                self._learn_json(item)

    def learn(self, exchange: HttpExchange) -> None:
        authorization = exchange.request_headers.get("authorization")
        if authorization and " " in authorization:
            scheme, credential = authorization.split(" ", 1)
            name = "access_token" if scheme.lower() == "bearer" else "client_credentials"
            self.secrets.setdefault(credential, oauth_placeholder(name))
        for name, value in query_pairs(urlsplit(exchange.target).query):
            self._learn_pair(name, value)
        if (exchange.request_headers.get("content-type") or "").startswith("application/x-www-form-urlencoded"):
            for name, value in query_pairs(exchange.request_body):
                self._learn_pair(name, value)
        self._learn_json(parse_json(exchange.request_body))
        self._learn_json(parse_json(exchange.response_body))
        for name, value in query_pairs(urlsplit(exchange.response_headers.get("location") or "").query):
            self._learn_pair(name, value)
        for header in (exchange.request_headers.get("mcp-session-id"), exchange.response_headers.get("mcp-session-id")):
            if header:
                self._run_values.setdefault(header, "<session-id>")

    def text(self, text: str) -> str:
        """``text`` with every learnt value replaced (as written and URL-encoded), longest first."""
        replacements = {**self._run_values, **self.secrets}
        for value in sorted(replacements, key=len, reverse=True):
            placeholder = replacements[value]
            text = text.replace(value, placeholder)
            if (encoded := quote(value, safe="")) != value:
                text = text.replace(encoded, placeholder)
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
        if is_credential_header(name) and _PLACEHOLDER.fullmatch(value):
            return value
        return redact_header(name, value, mask=oauth_placeholder)

    def body(self, text: str, content_type: str) -> str:
        """The tap's body rule, after the learnt values; JSON indented for reading."""
        if content_type.startswith("application/json") and (parsed := parse_json(text)) is not None:
            return json.dumps(redact_json(self.json(parsed), mask=oauth_placeholder), indent=2, ensure_ascii=False)
        return redact_body(self.text(text), content_type, mask=oauth_placeholder)
