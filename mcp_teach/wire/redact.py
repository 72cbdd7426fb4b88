"""Keep credentials out of everything the course records or prints."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

REDACTED = "[REDACTED]"

#: Header names whose values are credentials, compared in lower case.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"})
#: Of those, the ones written ``<scheme> <credentials>``: a well-known scheme stays visible (``Bearer [REDACTED]``).
SCHEME_HEADERS = frozenset({"authorization", "proxy-authorization"})
_SCHEME = re.compile(r"(?:Basic|Bearer|Digest|DPoP|Negotiate|NTLM|Token) ", re.IGNORECASE)

#: Strings that look like API keys or bearer tokens wherever they appear (``sk-`` only at the start of a word,
#: so ``risk-assessment-...`` stays as it is).
SECRET_PATTERN = re.compile(
    r"(?:(?<![A-Za-z0-9_-])sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,})|(?:(?<=Bearer )[A-Za-z0-9._~+/=-]{8,})"
)


def redact_text(text: str) -> str:
    """Replace key-like substrings (``sk-...``, bearer tokens) in ``text``."""
    return SECRET_PATTERN.sub(REDACTED, text)


def _redact_header(name: str, value: str) -> str:
    if name in SCHEME_HEADERS and (scheme := _SCHEME.match(value)):
        return f"{scheme.group(0)}{REDACTED}"
    return REDACTED if name in SECRET_HEADERS else redact_text(value)


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Copy ``headers`` (names in lower case) with credential values replaced (``Bearer [REDACTED]``)."""
    return {name.lower(): _redact_header(name.lower(), value) for name, value in headers.items()}


def redact_json(value: Any) -> Any:
    """Return ``value`` with key-like strings redacted at any depth (same object if clean)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_json(item) for key, item in value.items()}
    return value


#: Query parameters whose values are credentials (``?token=…``, ``?api_key=…``), compared in lower case.
SECRET_PARAMETER = re.compile(r"token|key|secret|password|passwd|auth|signature|sig|code|credential", re.IGNORECASE)
#: ``?name=value`` or ``&name=value`` in a URL's query.
_QUERY_PAIR = re.compile(r"([?&])([^=&#]*)=([^&#]*)")


def redact_url(url: str) -> str:
    """``url`` (or a path and query) with a password and token-like query values replaced, key-like strings redacted.

    Everything else stays as it was sent, encoding included.
    """
    parts = urlsplit(url)
    if "@" in parts.netloc:
        url = url.replace(parts.netloc, f"{REDACTED}@{parts.netloc.rpartition('@')[2]}", 1)

    def value(match: re.Match[str]) -> str:
        name = unquote(match.group(2))
        return f"{match.group(1)}{match.group(2)}={REDACTED}" if SECRET_PARAMETER.search(name) else match.group(0)

    return redact_text(_QUERY_PAIR.sub(value, url))


#: OAuth parameters and JSON members whose values are credentials: tokens (RFC 6749 §5.1), the authorization
#: code (§4.1.2), the PKCE verifier (RFC 7636 §4.1), client secrets and assertions (RFC 7591, RFC 7523). What
#: teaches stays: ``token_type``, ``expires_in``, ``scope``, ``code_challenge_method``, ``state``, ``resource``.
OAUTH_SECRET_FIELDS = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "code",
        "code_verifier",
        "client_secret",
        "assertion",
        "client_assertion",
        "device_code",
        "registration_access_token",
    }
)


def oauth_placeholder(name: str) -> str:
    """What stands for an OAuth credential in output: ``access_token`` → ``<access-token>``."""
    return f"<{name.replace('_', '-')}>"


def redact_oauth_json(value: Any) -> Any:
    """``value`` with every :data:`OAUTH_SECRET_FIELDS` member that holds a string replaced by its placeholder.

    Only strings: OAuth credentials are strings, and a JSON-RPC error's numeric ``code`` stays as it is.
    """
    if isinstance(value, list):
        return [redact_oauth_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _redact_oauth_member(key, item) for key, item in value.items()}
    return value


def _redact_oauth_member(key: str, item: Any) -> Any:
    return oauth_placeholder(key) if key in OAUTH_SECRET_FIELDS and isinstance(item, str) else redact_oauth_json(item)


def redact_oauth_query(text: str) -> str:
    """A URL, query or form body (``a=1&b=2``) with the :data:`OAUTH_SECRET_FIELDS` values replaced.

    Unlike :func:`redact_url` it keeps ``code_challenge`` and ``code_challenge_method``: only exact names count.
    """

    def value(match: re.Match[str]) -> str:
        name = unquote(match.group(2))
        if name not in OAUTH_SECRET_FIELDS:
            return match.group(0)
        return f"{match.group(1)}{match.group(2)}={oauth_placeholder(name)}"

    return _FORM_PAIR.sub(value, text)


#: ``name=value`` at the start of a form body or after ``?`` or ``&``.
_FORM_PAIR = re.compile(r"(^|[?&])([^=&#?]*)=([^&#]*)")
