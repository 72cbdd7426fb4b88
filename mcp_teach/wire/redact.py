"""Keep credentials out of everything the course records or prints: one redactor for every recorder and view.

The tap (stdio and HTTP), the HAR export, :mod:`~mcp_teach.wire.http_recording` and lesson 12's OAuth views all
call the functions here, so a credential hidden in one place is hidden in all. A body is parsed before its text is
searched (:func:`redact_body`): JSON decoded, so an escaped credential (``"AT\\/…"``) or member name
(``access\\u005ftoken``) is seen as what it says; an event stream's events with their ``data:`` lines joined; a
multipart form's fields, by the standard library's ``email`` parser; a form's parameters, whatever its content type.
Text that is not JSON (a body cut short, a log line quoting JSON) gets the text rules only, which read a quoted
value up to its first quote or backslash. Two kinds of rules then apply:

- by name: OAuth parameters and JSON members (:func:`is_secret_field`, and names whose last word says credential:
  ``auth_token``, ``sessionToken``, ``passphrase``), credential-like header names (:func:`is_credential_header`),
  command-line options, ``NAME=value`` assignments, YAML lines, XML elements and HTML form fields whose name says
  credential. No secret detector knows OAuth, so these are ours; what teaches (``token_type``, ``expires_in``,
  ``scope``, ``state``, ``code_challenge``, ``resource``, ``client_id``, ``progressToken``, ``WWW-Authenticate``
  challenges, ``Mcp-Session-Id``, JSON-RPC error ``code`` numbers) stays readable.
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

import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from mcp_teach.wire.sse import parse_event

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
#: Names that teach and stay, though they look like credentials (``token_type``, ``code_challenge``...).
TEACHING_FIELDS = frozenset({
    "token_type", "token_type_hint", "requested_token_type", "subject_token_type", "actor_token_type", "expires_in",
    "scope", "state", "code_challenge", "code_challenge_method", "resource", "redirect_uri", "client_id",
    "response_type", "grant_type", "session_id", "progress_token"
})  # fmt: skip
#: A query or form parameter whose name says credential (``?token=…``, ``?api_key=…``, ``X-Amz-Signature``).
SECRET_PARAMETER = re.compile(r"token|key|secret|password|passwd|auth|signature|sig|code|credential", re.IGNORECASE)
#: One ``-``/``_``-separated word of a header or option name that says credential (``x-auth-token``,
#: ``--api-key``; not ``x-ratelimit-remaining-tokens``, ``www-authenticate``, ``--max-tokens``).
_CREDENTIAL_WORD = re.compile(
    r"\w*(?:token|apikey|secret|passw(?:or)?d|passphrase|credentials?|cookie)"
    r"|key|auth(?:orization|entication)?|signature|bearer|pass|pin"
)
#: The last word of an assignment's or member's name that says credential (``GITHUB_TOKEN=``, ``api_key=``,
#: ``DB_PASS=``, ``"sessionToken"``, ``"passphrase"``).
_CREDENTIAL_NOUN = re.compile(r"key|apikey|token|secret|pass(?:w(?:or)?d|phrase)?|pin|credentials?|auth|verifier")
#: Headers whose value is ``<scheme> <credentials>``: a well-known scheme stays visible (``Bearer [REDACTED]``).
SCHEME_HEADERS = frozenset({"authorization", "proxy-authorization"})
_SCHEME = re.compile(r"(?:Basic|Bearer|Digest|DPoP|Negotiate|NTLM|Token) ", re.IGNORECASE)
#: Headers holding a URL, whose query may carry a code or token (a redirect's ``Location``).
URL_HEADERS = frozenset({"location", "content-location", "referer"})
#: Challenges (``WWW-Authenticate: Bearer resource_metadata="..."``) and CORS lists name credentials, hold none.
_READABLE_HEADERS = re.compile(r"(?:www|proxy)-authenticate|access-control-.*")


@functools.lru_cache(maxsize=4096)  # names recur (a body's members, a log's fields): split once
def _snake(name: str) -> str:
    """``name`` in words split at ``-``, ``_``, ``.`` and camelCase: ``sessionToken``, ``session-token`` and
    ``SESSION_TOKEN`` are all ``session_token``."""
    return "_".join(re.split(r"[-_.]|(?<=[a-z0-9])(?=[A-Z])", name)).lower()


def is_secret_field(name: str) -> bool:
    """Whether an OAuth parameter or JSON member ``name`` holds a credential (``accessToken`` as ``access_token``)."""
    return _snake(name) in OAUTH_SECRET_FIELDS


def _is_secret_parameter(name: str) -> bool:
    name = unquote(name)  # a query's or form's names may be percent-encoded
    return is_secret_field(name) or (_snake(name) not in TEACHING_FIELDS and SECRET_PARAMETER.search(name) is not None)


def _has_credential_word(name: str) -> bool:
    return any(_CREDENTIAL_WORD.fullmatch(word) for word in _snake(name).split("_"))


def is_credential_header(name: str) -> bool:
    """Whether header ``name`` carries a credential: ``Authorization``, ``Cookie``, ``X-Auth-Token``..."""
    return not _READABLE_HEADERS.fullmatch(name.lower()) and _has_credential_word(name)


def is_credential_option(name: str) -> bool:
    """Whether a command-line option (``--api-key``, ``-token``, ``-k`` for key; dashes included) takes a credential."""
    name = name.lstrip("-")
    return name == "k" or (not name.lower().startswith("no-") and _has_credential_word(name))


def _is_credential_name(name: str) -> bool:
    """An assignment's, a YAML line's or an XML element's name (``OPENAI_API_KEY``, ``client_secret``,
    ``sessionToken``) that says its value is a credential."""
    snake = _snake(name)
    oauth = snake in OAUTH_SECRET_FIELDS and snake != "code"  # ``exit code=3`` in a log is no OAuth code
    return snake not in TEACHING_FIELDS and (oauth or _CREDENTIAL_NOUN.fullmatch(snake.rpartition("_")[2]) is not None)


def _is_credential_member(name: str) -> bool:
    """A JSON member holding a credential: :func:`_is_credential_name`, any OAuth name (``code`` too), or a credential
    header's name (``"X-Api-Key"``, e.g. in a config)."""
    return is_secret_field(name) or _is_credential_name(name) or ("-" in name and is_credential_header(name))


def _is_mask(value: str) -> bool:
    """Already redacted (``[REDACTED]``) or a placeholder (``<access-token>``): nothing left to hide."""
    return value == REDACTED or (value.startswith("<") and value.endswith(">"))


# ── free text ────────────────────────────────────────────────────────────────────────────────────────────

#: ``NAME=value`` (an environment variable), ``X-Auth-Token: value`` (a header) or, at the start of a line,
#: ``client_secret: "value"`` (YAML, a config file) in text: the value up to a space, quote or separator. A colon
#: after a plain word inside a line is prose (``a key: the one``).
_ASSIGNMENT = re.compile(
    r"(?m)(?:^[ \t]*|(?<![\w.-])(?=[\w.]*-|[\w.-]*\s*=))(?P<name>[A-Za-z][\w.-]*)\s*[:=]\s*(?![<\[{])"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\,;&}\]]+)"
)
#: ``"name": "value"`` in JSON text, also escaped inside a JSON string (``\"name\": \"value\"``) or an SSE line.
_JSON_MEMBER = re.compile(r"(\\?)\"(?P<name>[A-Za-z][\w-]*)\1\"\s*:\s*\1\"(?P<value>[^\"\\]*)\1\"")
#: ``<client_secret>value</client_secret>`` in XML or HTML.
_ELEMENT = re.compile(r"<(?P<tag>(?:[\w.-]+:)?(?P<name>[A-Za-z][\w.-]*))(?:\s[^<>]*)?>(?P<value>[^<]+)</(?P=tag)>")
#: An HTML tag's value for the form field it names (``<input name="client_secret" value="…">``, either order).
_NAMED_TAG = re.compile(
    r"<[A-Za-z](?=[^<>]*?\bname\s*=\s*[\"']?(?P<name>[\w.:-]+))[^<>]*?\b(?:value|content)\s*=\s*"
    r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"'>]+)"
)
#: What each rule above finds a ``name`` and a ``value`` in, and the names whose value is a credential.
_NAMED_VALUES: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (_ELEMENT, _is_credential_name),
    (_NAMED_TAG, _is_secret_parameter),
    (_JSON_MEMBER, _is_credential_member),
    (_ASSIGNMENT, lambda name: is_credential_header(name) if "-" in name else _is_credential_name(name)),
)
#: ``name=value`` at the start of a form body or after ``?``, ``&`` or ``#`` in a URL.
_QUERY_PAIR = re.compile(r"(?:^|[?&#])(?P<name>[^=&#?\s\"']*)=(?P<value>[^&#\s\"'\\]*)")


def _hide_value(match: re.Match[str], mask: Mask, is_secret: Callable[[str], bool]) -> str:
    """The match of a :data:`_NAMED_VALUES` rule with its value masked if its name says credential."""
    name, value = match.group("name"), match.group("value").strip("\"'")
    if not value or _is_mask(unquote(value)) or not is_secret(name):
        return match.group(0)
    start, end = match.span("value")
    return f"{match.string[match.start() : start]}{mask(name)}{match.string[end : match.end()]}"


def redact_query(text: str, *, mask: Mask = redacted) -> str:
    """A URL's query (and fragment) or a form body (``a=1&b=2``) with credential parameters masked."""
    return _QUERY_PAIR.sub(functools.partial(_hide_value, mask=mask, is_secret=_is_secret_parameter), text)


def redact_text(text: str, *, mask: Mask = redacted) -> str:
    """Free text (a log line, an argument, a raw body) with every credential found by shape or by name hidden."""
    text = _URL_USERINFO.sub(REDACTED, SECRET_PATTERN.sub(REDACTED, text))
    text = _AUTHORIZATION.sub(lambda match: f"{match.group(1)}{match.group(2) or ''}{REDACTED}", text)
    for pattern, is_secret in _NAMED_VALUES:
        text = pattern.sub(functools.partial(_hide_value, mask=mask, is_secret=is_secret), text)
    return redact_query(text, mask=mask) if "?" in text or "&" in text else text


# ── structured data ──────────────────────────────────────────────────────────────────────────────────────


def redact_url(url: str, *, mask: Mask = redacted) -> str:
    """A URL, a path and query, or a form body with user-info and credential parameters masked, the rest as sent."""
    netloc = urlsplit(url).netloc if "://" in url else ""
    if "@" in netloc:
        url = url.replace(netloc, f"{REDACTED}@{netloc.rpartition('@')[2]}", 1)
    return redact_text(redact_query(url, mask=mask), mask=mask)


def redact_json(value: Any, *, mask: Mask = redacted) -> Any:
    """``value`` with credential members (:func:`_is_credential_member`; strings and numbers, but a JSON-RPC error's
    numeric ``code`` stays) masked and every string redacted as text, at any depth."""
    if isinstance(value, str):
        return redact_text(value, mask=mask)
    if isinstance(value, list):
        return [redact_json(item, mask=mask) for item in value]
    if isinstance(value, dict):
        return {key: _redact_member(key, item, mask) for key, item in value.items()}
    return value


def _redact_member(key: str, item: Any, mask: Mask) -> Any:
    text = isinstance(item, str) and not _is_mask(item)
    if text and key.lower() in SCHEME_HEADERS:  # ``"Authorization": "Bearer …"`` keeps its scheme
        return redact_header(key.lower(), item, mask=mask)
    hidden = text or (type(item) in (int, float) and key != "code")
    return mask(key) if hidden and _is_credential_member(key) else redact_json(item, mask=mask)


def _redact_json_text(text: str, mask: Mask) -> str:
    """``text`` redacted: if it is JSON holding a credential, written again from its decoded value, redacted (so a
    credential written with an escape, ``"AT\\/…"``, ``"s3cr\\"et"``, or under an escaped name,
    ``access\\u005ftoken``, is found); else as written, redacted as text (so is JSON nested too deep to walk)."""
    try:
        safe = redact_json(value := json.loads(text), mask=mask)
    except (ValueError, RecursionError):
        return redact_text(text, mask=mask)
    return redact_text(text if safe == value else json.dumps(safe, ensure_ascii=False), mask=mask)


def redact_event(block: str, *, mask: Mask = redacted) -> str:
    """One server-sent event as sent (its blank line included), its data (its ``data:`` lines joined) redacted as a
    body is: written again if the text rules alone would not hide the same."""
    event, written = parse_event(block), redact_text(block, mask=mask)
    data = event and _redact_json_text(event.data, mask)
    if not event or data == (parse_event(written) or event).data:
        return written
    lines = [line for line in re.split(r"\r\n|\n|\r", written) if line and line.partition(":")[0] != "data"]
    return "\n".join([*lines, *(f"data: {line}" for line in data.split("\n")), "", ""])


def _redact_part(part: str, mask: Mask) -> str:
    """One part of a ``multipart/form-data`` body (after its boundary): a field named like a credential hidden whole,
    any other redacted by its own content type."""
    from email import parser, utils  # only for multipart bodies: the stdio tap starts without them

    head, body = re.fullmatch(r"(.*?\n\r?\n|)(.*)", part, re.DOTALL).groups()  # its headers and blank line, its value
    fields = parser.HeaderParser().parsestr(head.strip())
    name = utils.collapse_rfc2231_value(fields.get_param("name", "", "content-disposition"))
    body = f"{mask(name)}\r\n" if head and _is_secret_parameter(name) else body
    return redact_text(head, mask=mask) + redact_body(body, fields.get_content_type(), mask=mask)


def redact_body(text: str, content_type: str, *, mask: Mask = redacted) -> str:
    """An HTTP body as sent, credentials hidden by its structure (a form's parameters, a multipart form's fields, an
    event stream's events, JSON's decoded members) and by the text rules (XML, YAML, HTML and the rest)."""
    kind = content_type.partition(";")[0].strip().lower()
    if kind == "multipart/form-data" and (boundary := re.search(r"boundary=(\"[^\"]+\"|[^\s;]+)", content_type, re.I)):
        delimiter = "--" + boundary.group(1).strip('"')
        return delimiter.join(_redact_part(part, mask) for part in text.split(delimiter))
    if kind == "text/event-stream":
        return "".join(redact_event(block, mask=mask) for block in re.split(r"(?<=\r\n\r\n)|(?<=\n\n)|(?<=\r\r)", text))
    form = kind == "application/x-www-form-urlencoded" or not re.search(r"\s", text.strip())  # ``code=…`` as text
    return _redact_json_text(redact_query(text, mask=mask) if form else text, mask)


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
    """A command line with credential options (``--api-key V``, ``--token=V``, ``-k V``), ``NAME=value``
    assignments and key-like arguments hidden."""
    return [_redact_argument(previous, argument) for previous, argument in zip(["", *argv], argv, strict=False)]


def _redact_argument(previous: str, argument: str) -> str:
    option, equals, _ = argument.partition("=")
    if not argument.startswith("-") or argument == "-":  # a value: the credential option before it takes it
        takes_value = previous.startswith("-") and "=" not in previous and is_credential_option(previous)
        return REDACTED if takes_value else redact_text(argument)
    return f"{option}={REDACTED}" if equals and is_credential_option(option) else redact_text(argument)
