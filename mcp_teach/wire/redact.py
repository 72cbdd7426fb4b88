"""Keep credentials out of everything the course records or prints: one redactor for every recorder and view.

The tap (stdio and HTTP), the HAR export, :mod:`~mcp_teach.wire.http_recording` and lesson 12's OAuth views all
call the functions here, so a credential hidden in one place is hidden in all. Two kinds of rules:

- by name (structural): OAuth parameters and JSON members (:func:`is_secret_field`), credential-like header
  names (:func:`is_credential_header`), command-line options and ``NAME=value`` assignments whose name says
  credential. No secret detector knows OAuth, so these are ours; what teaches (``token_type``, ``expires_in``,
  ``scope``, ``state``, ``code_challenge``, ``resource``, ``client_id``, ``WWW-Authenticate`` challenges,
  ``Mcp-Session-Id``, JSON-RPC error ``code`` numbers) stays readable.
- by shape (:data:`SECRET_PATTERN`): well-known token prefixes wherever they appear, taken from the vendor
  plugins of Yelp's detect-secrets 1.5.0 (Apache-2.0; AWS, GitHub, GitLab, Slack, Stripe, JWT, private keys,
  PyPI, SendGrid, basic-auth URLs) and, for GitHub fine-grained and Google API keys, gitleaks' rules (MIT).
  The rules are copied rather than imported, because of startup: a host starts the stdio tap for every
  connection, and ``mcp-teach tap`` imports in about 50 ms, while importing detect-secrets' plugins takes
  150-190 ms more (it pulls in ``requests``). Per line its nine plugins take 15 µs to detect (not replace);
  the shape rules here take 6 µs, all rules 30 µs. Its entropy and keyword detectors are left out anyway:
  they flag protocol data (ids, hashes, ``code_challenge``).

A ``mask`` says what replaces a value redacted by name: ``[REDACTED]`` by default, :func:`oauth_placeholder`
(``<access-token>``) in lesson 12's views.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

REDACTED = "[REDACTED]"
#: What replaces a value redacted by name, given that name.
Mask = Callable[[str], str]


def redacted(name: str) -> str:
    """The default mask: ``[REDACTED]`` whatever the name."""
    return REDACTED


def oauth_placeholder(name: str) -> str:
    """What stands for an OAuth credential in lesson 12's output: ``access_token`` → ``<access-token>``."""
    return f"<{name.replace('_', '-')}>"


# ── by shape ─────────────────────────────────────────────────────────────────────────────────────────────

#: Token prefixes (detect-secrets 1.5.0 plugins, gitleaks for ``github_pat_`` and ``AIza``), ``sk-`` keys
#: (OpenAI, Anthropic; only at the start of a word, so ``risk-assessment-...`` stays) and bearer tokens
#: (not an auth-param such as ``Bearer resource_metadata="..."``).
SECRET_PATTERN = re.compile(
    "|".join(
        (
            r"(?<![A-Za-z0-9_-])sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}",
            r"(?<=Bearer )(?![A-Za-z_]+=)[A-Za-z0-9._~+/=-]{8,}",
            r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}",  # aws
            r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}|github_pat_\w{82}",  # github_token; gitleaks
            r"(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_-]{20,1024}(?!\w)",  # gitlab
            r"GR1348941[A-Za-z0-9_-]{20,50}(?!\w)",  # gitlab runner registration
            r"xox[abposr]-(?:\d+-)+[A-Za-z0-9]+|https://hooks\.slack\.com/services/T\w+/B\w+/\w+",  # slack
            r"[rs]k_live_[0-9a-zA-Z]{24}",  # stripe
            r"eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+(?:\.[A-Za-z0-9_.+/=-]*)?",  # jwt
            r"pypi-AgE[A-Za-z0-9_-]{70,}",  # pypi_token
            r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}",  # sendgrid
            r"AIza[0-9A-Za-z_-]{35}",  # gitleaks gcp-api-key
            r"-----BEGIN[A-Z ]* PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[A-Z ]* PRIVATE KEY(?: BLOCK)?-----|[^\n]*)",
        )
    ),
    re.DOTALL,
)
#: The password (or whole user-info) of a URL in text: ``https://user:pw@host`` (detect-secrets' basic_auth).
_URL_USERINFO = re.compile(r"(?<=://)[^:/?#\[\]@!$&'()*+,;=\s\"]+:[^:/?#\[\]@!$&'()*+,;=\s\"]+(?=@)")
#: ``Authorization: <scheme> <credentials>`` written out in text (a log line, a config dump): the scheme stays.
_AUTHORIZATION = re.compile(
    r"((?i:(?:proxy-)?authorization)[\"']?\s*[:=]\s*[\"']?)((?i:Basic|Bearer|Digest|DPoP|Negotiate|NTLM|Token) )?+"
    r"(?![<\[])[^\s\"',;]+"
)
#: ``X-Auth-Token: value`` written out in text (unquoted; JSON members are :data:`_JSON_MEMBER`'s).
_HEADER_LINE = re.compile(r"(?<![\w\"'-])([A-Za-z]\w*(?:-\w+)+)(\s*:\s*)(?![<\[{\"'])([^\s\"',;]+)")
#: A PEM private key's first line: the lines after it are part of the key until its ``-----END`` line.
PEM_BEGIN = re.compile(r"-----BEGIN[A-Z ]* PRIVATE KEY(?: BLOCK)?-----")
PEM_END = re.compile(r"-----END[A-Z ]* PRIVATE KEY(?: BLOCK)?-----")


# ── by name ──────────────────────────────────────────────────────────────────────────────────────────────

#: OAuth parameters and JSON members whose values are credentials: tokens (RFC 6749 §5.1, RFC 8693), the
#: authorization code (§4.1.2), the PKCE verifier (RFC 7636 §4.1), client secrets and assertions (RFC 7591,
#: RFC 7523), the device code (RFC 8628), a password grant's password (§4.3), a token to revoke (RFC 7009).
OAUTH_SECRET_FIELDS = frozenset({
    "access_token", "refresh_token", "id_token", "code", "code_verifier", "client_secret", "assertion",
    "client_assertion", "device_code", "registration_access_token", "subject_token", "actor_token", "token",
    "password", "api_key"
})  # fmt: skip
_SECRET_FIELD_KEYS = frozenset(name.replace("_", "") for name in OAUTH_SECRET_FIELDS)
#: Names that teach and stay, though they look like credentials (``token_type``, ``code_challenge``...).
TEACHING_FIELDS = frozenset({
    "token_type", "token_type_hint", "requested_token_type", "subject_token_type", "actor_token_type", "expires_in",
    "scope", "state", "code_challenge", "code_challenge_method", "resource", "redirect_uri", "client_id",
    "response_type", "grant_type", "session_id"
})  # fmt: skip
#: A query or form parameter whose name says credential (``?token=…``, ``?api_key=…``, ``X-Amz-Signature``).
SECRET_PARAMETER = re.compile(r"token|key|secret|password|passwd|auth|signature|sig|code|credential", re.IGNORECASE)
#: One ``-``/``_``-separated word of a header or option name that says credential (``x-auth-token``,
#: ``--api-key``; not ``x-ratelimit-remaining-tokens``, ``www-authenticate``, ``--max-tokens``).
_CREDENTIAL_WORD = re.compile(
    r"\w*(?:token|apikey|secret|passwd|password|credentials?|cookie)|key|auth|authorization|authentication|signature",
    re.IGNORECASE,
)
#: The last word of an assignment's name that says credential (``GITHUB_TOKEN=``, ``api_key=``, ``DB_PASSWORD=``).
_CREDENTIAL_NOUN = re.compile(r"key|apikey|token|secret|password|passwd|credentials?|auth|verifier", re.IGNORECASE)
#: Headers whose value is ``<scheme> <credentials>``: a well-known scheme stays visible (``Bearer [REDACTED]``).
SCHEME_HEADERS = frozenset({"authorization", "proxy-authorization"})
_SCHEME = re.compile(r"(?:Basic|Bearer|Digest|DPoP|Negotiate|NTLM|Token) ", re.IGNORECASE)
#: Headers holding a URL, whose query may carry a code or token (a redirect's ``Location``).
URL_HEADERS = frozenset({"location", "content-location", "referer"})
#: Challenges (``WWW-Authenticate: Bearer resource_metadata="..."``) and CORS lists name credentials, hold none.
_READABLE_HEADERS = re.compile(r"(?:www|proxy)-authenticate|access-control-.*")


def is_secret_field(name: str) -> bool:
    """Whether an OAuth parameter or JSON member ``name`` holds a credential (``accessToken`` as ``access_token``)."""
    return name.replace("_", "").replace("-", "").lower() in _SECRET_FIELD_KEYS


def _is_secret_parameter(name: str) -> bool:
    return is_secret_field(name) or (name.lower() not in TEACHING_FIELDS and SECRET_PARAMETER.search(name) is not None)


def _has_credential_word(name: str) -> bool:
    return any(_CREDENTIAL_WORD.fullmatch(word) for word in re.split(r"[-_]", name))


def is_credential_header(name: str) -> bool:
    """Whether header ``name`` carries a credential: ``Authorization``, ``Cookie``, ``X-Auth-Token``..."""
    return not _READABLE_HEADERS.fullmatch(name.lower()) and _has_credential_word(name)


def is_credential_option(name: str) -> bool:
    """Whether a command-line option (``--api-key``, ``-token``; dashes included) takes a credential."""
    name = name.lstrip("-")
    return not name.lower().startswith("no-") and _has_credential_word(name)


def _is_credential_name(name: str) -> bool:
    """An assignment's name (``OPENAI_API_KEY``, ``client_secret``) that says its value is a credential."""
    if name.lower() in TEACHING_FIELDS:
        return False
    if is_secret_field(name) and name.lower() != "code":  # ``exit code=3`` in a log is no OAuth code
        return True
    return _CREDENTIAL_NOUN.fullmatch(re.split(r"[-_]", name)[-1]) is not None


def _is_header_member(name: str) -> bool:
    """A JSON member named like a credential header (``"X-Api-Key"``, ``"Authorization"``), e.g. in a config."""
    return ("-" in name or name.lower() in SCHEME_HEADERS) and is_credential_header(name)


def _is_mask(value: str) -> bool:
    """Already redacted (``[REDACTED]``) or a placeholder (``<access-token>``): nothing left to hide."""
    return value == REDACTED or (value.startswith("<") and value.endswith(">"))


# ── free text ────────────────────────────────────────────────────────────────────────────────────────────

#: ``NAME=value`` (an environment variable, a config line): the value up to a space, quote or separator.
_ASSIGNMENT = re.compile(r"(?<![\w.-])([A-Za-z][\w-]*)(=)(?![<\[])(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\,;&}\]]+)")
#: ``"name": "value"`` in JSON text, also escaped inside a JSON string (``\"name\": \"value\"``) or an SSE line.
_JSON_MEMBER = re.compile(r"(\\?)\"([A-Za-z][\w-]*)\1\"(\s*:\s*)\1\"([^\"\\]*)\1\"")
#: ``name=value`` at the start of a form body or after ``?``, ``&`` or ``#`` in a URL.
_QUERY_PAIR = re.compile(r"(^|[?&#])([^=&#?\s\"']*)=([^&#\s\"'\\]*)")


def _assignment(match: re.Match[str], mask: Mask) -> str:
    name, sign, value = match.groups()
    if not _is_credential_name(name) or _is_mask(value.strip("\"'")):
        return match.group(0)
    return f"{name}{sign}{mask(name)}"


def _header_line(match: re.Match[str]) -> str:
    name, colon, _ = match.groups()
    return f"{name}{colon}{REDACTED}" if is_credential_header(name) else match.group(0)


def _json_member(match: re.Match[str], mask: Mask) -> str:
    quote, name, colon, value = match.groups()
    if not (is_secret_field(name) or ("-" in name and is_credential_header(name))) or _is_mask(value):
        return match.group(0)
    return f'{quote}"{name}{quote}"{colon}{quote}"{mask(name)}{quote}"'


def _query_pair(match: re.Match[str], mask: Mask) -> str:
    start, name, value = match.groups()
    decoded = unquote(name)
    if not _is_secret_parameter(decoded) or not value or _is_mask(unquote(value)):
        return match.group(0)
    return f"{start}{name}={mask(decoded)}"


def redact_query(text: str, *, mask: Mask = redacted) -> str:
    """A URL's query (and fragment) or a form body (``a=1&b=2``) with credential parameters masked."""
    return _QUERY_PAIR.sub(lambda match: _query_pair(match, mask), text)


def redact_text(text: str, *, mask: Mask = redacted) -> str:
    """Free text (a log line, an argument, a raw body) with every credential found by shape or by name hidden."""
    text = SECRET_PATTERN.sub(REDACTED, text)
    text = _URL_USERINFO.sub(REDACTED, text)
    text = _AUTHORIZATION.sub(lambda match: f"{match.group(1)}{match.group(2) or ''}{REDACTED}", text)
    text = _HEADER_LINE.sub(_header_line, text)
    text = _JSON_MEMBER.sub(lambda match: _json_member(match, mask), text)
    text = _ASSIGNMENT.sub(lambda match: _assignment(match, mask), text)
    return redact_query(text, mask=mask) if "?" in text or "&" in text else text


# ── structured data ──────────────────────────────────────────────────────────────────────────────────────


def redact_url(url: str, *, mask: Mask = redacted) -> str:
    """A URL, a path and query, or a form body with user-info and credential parameters masked, the rest as sent."""
    netloc = urlsplit(url).netloc if "://" in url else ""
    if "@" in netloc:
        url = url.replace(netloc, f"{REDACTED}@{netloc.rpartition('@')[2]}", 1)
    return redact_text(redact_query(url, mask=mask), mask=mask)


def redact_json(value: Any, *, mask: Mask = redacted) -> Any:
    """``value`` with credential members (by :func:`is_secret_field`, strings only: a JSON-RPC error's numeric
    ``code`` stays) masked and every string redacted as text, at any depth (same object if clean)."""
    if isinstance(value, str):
        return redact_text(value, mask=mask)
    if isinstance(value, list):
        return [redact_json(item, mask=mask) for item in value]
    if isinstance(value, dict):
        return {key: _redact_member(key, item, mask) for key, item in value.items()}
    return value


def _redact_member(key: str, item: Any, mask: Mask) -> Any:
    if not isinstance(item, str) or _is_mask(item):
        return redact_json(item, mask=mask)
    if is_secret_field(key):
        return mask(key)
    return redact_header(key.lower(), item, mask=mask) if _is_header_member(key) else redact_text(item, mask=mask)


def redact_body(text: str, content_type: str, *, mask: Mask = redacted) -> str:
    """An HTTP body as sent (form, JSON, an event stream, anything), with credentials hidden by its type's rules."""
    form = content_type.lower().startswith("application/x-www-form-urlencoded")
    return redact_text(redact_query(text, mask=mask) if form else text, mask=mask)


def redact_header(name: str, value: str, *, mask: Mask = redacted) -> str:
    """One header's value (``name`` in lower case) safe to record: ``Bearer [REDACTED]``, a URL's code masked."""
    if is_credential_header(name):
        scheme = _SCHEME.match(value) if name in SCHEME_HEADERS else None
        return f"{scheme.group(0)}{REDACTED}" if scheme else REDACTED
    return redact_url(value, mask=mask) if name in URL_HEADERS else redact_text(value, mask=mask)


def redact_headers(headers: Mapping[str, str], *, mask: Mask = redacted) -> dict[str, str]:
    """Copy ``headers`` (names in lower case) with credential values replaced (``Bearer [REDACTED]``)."""
    return {name.lower(): redact_header(name.lower(), value, mask=mask) for name, value in headers.items()}


def redact_argv(argv: list[str]) -> list[str]:
    """A command line with credential options (``--api-key V``, ``--token=V``), ``NAME=value`` assignments
    and key-like arguments hidden."""
    safe: list[str] = []
    takes_value = False
    for argument in argv:
        option, equals, _ = argument.partition("=")
        is_option = argument.startswith("-") and argument != "-"
        if takes_value and not is_option:
            safe.append(REDACTED)
        elif is_option and equals and is_credential_option(option):
            safe.append(f"{option}={REDACTED}")
        else:
            safe.append(redact_text(argument))
        takes_value = is_option and not equals and argument != "--" and is_credential_option(argument)
    return safe
