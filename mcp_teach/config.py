"""Settings from the environment and ``.env``, validated in one place.

Real environment variables win over ``.env``. A bad value raises
:class:`ConfigError` naming the variable, the value and what would be valid.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import time
from pathlib import Path
from typing import Any, Literal

from dotenv import dotenv_values, find_dotenv

Transport = Literal["stdio", "sse", "streamable-http"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "sse", "streamable-http")
LOOPBACK = "127.0.0.1"
#: The variable that holds the token, read by ``mcp-teach serve`` and by the course's clients.
TOKEN_VARIABLE = "MCP_AUTH_TOKEN"
#: The folder the notes server keeps its notes in (default: a per-user data folder, see ``servers.notes_store``).
NOTES_DIR_VARIABLE = "MCP_TEACH_NOTES_DIR"
#: When the notes server's write tools may run (``HH:MM-HH:MM``, server time).
WRITE_HOURS_VARIABLE = "MCP_TEACH_WRITE_HOURS"
#: RFC 6750 ``b64token`` characters, at least 8 (shorter bearer tokens would also escape text redaction).
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9._~+/-]{8,}=*")
TOKEN_RULE = (
    "at least 8 characters from A-Z a-z 0-9 - . _ ~ + / (optionally ending in =), "
    'e.g. the output of: python -c "import secrets; print(secrets.token_urlsafe(16))"'
)

#: The model name the offline teaching model answers to.
OFFLINE_MODEL = "mcp-teach-offline"

Provider = Literal["offline", "openai", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("offline", "openai", "anthropic")
#: How Anthropic's own API keys start; another shape in ANTHROPIC_API_KEY may belong to an OpenAI-compatible provider.
ANTHROPIC_KEY_PREFIX = "sk-ant-"
ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"

#: The languages a lesson's exercise checks answer in (``setup_notebook(language=...)``); English by default.
LANGUAGES = ("en", "zh")
#: This kernel's lesson language: kept here, below both the lesson's setup cell and the checks that read it.
_LESSON_LANGUAGE = ["en"]


def set_lesson_language(language: str) -> None:
    """Record the language of the lesson this kernel runs; an unknown one is refused, naming the known ones."""
    if language not in LANGUAGES:
        raise ConfigError(f"language={language!r} is not known: the checks speak {', '.join(map(repr, LANGUAGES))}")
    _LESSON_LANGUAGE[0] = language


def lesson_language() -> str:
    """The language the lesson's checks answer in."""
    return _LESSON_LANGUAGE[0]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) stays on this machine: a loopback address, or ``localhost``."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class ConfigError(ValueError):
    """A setting has a value the course cannot use."""


@dataclass(frozen=True)
class Settings:
    """Everything the course reads from ``.env``; see ``.env.example``."""

    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    openai_model: str = OFFLINE_MODEL
    mcp_transport: Transport = "stdio"
    mcp_host: str = LOOPBACK
    mcp_port: int = 8000
    mcp_sse_path: str = "/sse"
    mcp_streamable_path: str = "/mcp"
    llm_max_tool_rounds: int = 5
    #: The class token of a shared HTTP server: required by ``mcp-teach serve``, sent by ``chat``/``demo --url``.
    mcp_auth_token: str | None = field(default=None, repr=False)
    #: The ``.env`` file the values came from, if one was found.
    env_file: Path | None = None
    #: ``LLM_PROVIDER`` as written (None: detect it, see :attr:`llm_provider`).
    provider_choice: Provider | None = None
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    anthropic_model: str = OFFLINE_MODEL
    #: ``MCP_TEACH_NOTES_DIR``: where the notes server keeps its notes (None: the per-user default).
    notes_dir: Path | None = None
    #: ``MCP_TEACH_WRITE_HOURS``: when the notes server's write tools may run, server time (None: its default).
    write_hours: tuple[time, time] | None = None

    @property
    def uses_offline_model(self) -> bool:
        """True unless a real OpenAI-compatible provider is configured (a base URL or an API key) and
        ``LLM_PROVIDER`` is not ``offline``."""
        return self.provider_choice == "offline" or not (self.openai_base_url or self.openai_api_key)

    @property
    def uses_offline_anthropic(self) -> bool:
        """True unless an Anthropic Messages provider is configured (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``
        or ``LLM_PROVIDER=anthropic``) and ``LLM_PROVIDER`` is not ``offline``."""
        if self.provider_choice in ("offline", "anthropic"):
            return self.provider_choice == "offline"
        return not (self.anthropic_base_url or self.anthropic_api_key)

    @property
    def llm_provider(self) -> Provider:
        """Which LLM the course talks to; the first rule that applies (offline by default):

        1. ``LLM_PROVIDER=offline|openai|anthropic``: that one;
        2. ``ANTHROPIC_BASE_URL`` set: ``anthropic`` (an Anthropic-compatible server; its key may have any shape);
        3. ``ANTHROPIC_API_KEY=sk-ant-...``: ``anthropic``;
        4. ``ANTHROPIC_API_KEY`` of another shape: ``openai`` if ``OPENAI_BASE_URL`` or ``OPENAI_API_KEY`` is set
           (an OpenAI-compatible key put in the wrong variable; see :attr:`openai_key`), else ``anthropic``;
        5. ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` set: ``openai``;
        6. nothing set: ``offline``, the offline teaching model (it speaks both APIs).
        """
        if self.provider_choice is not None:
            return self.provider_choice
        if self.anthropic_base_url:
            return "anthropic"
        if self.anthropic_api_key:
            anthropic_key = self.anthropic_api_key.startswith(ANTHROPIC_KEY_PREFIX)
            return "anthropic" if anthropic_key or self.uses_offline_model else "openai"
        return "offline" if self.uses_offline_model else "openai"

    @property
    def openai_key(self) -> str | None:
        """The key for the OpenAI-compatible provider: ``OPENAI_API_KEY``, or (rule 4 of :attr:`llm_provider`)
        an ``ANTHROPIC_API_KEY`` that is no Anthropic key while ``OPENAI_BASE_URL`` names where it belongs."""
        if self.openai_api_key:
            return self.openai_api_key
        mixed_up = self.anthropic_api_key and not self.anthropic_api_key.startswith(ANTHROPIC_KEY_PREFIX)
        if mixed_up and self.openai_base_url and not self.anthropic_base_url and self.provider_choice != "anthropic":
            return self.anthropic_api_key
        return None

    def describe_llm(self) -> str:
        """Which LLM backend is configured, without revealing the key."""
        if self.llm_provider == "anthropic":
            key = "API key set (hidden)" if self.anthropic_api_key else "no API key"
            where = self.anthropic_base_url or ANTHROPIC_DEFAULT_BASE_URL
            return f"Anthropic Messages API at {where}, model {self.anthropic_model}, {key}"
        if self.uses_offline_model:
            return f"offline teaching model ({OFFLINE_MODEL}), no API key needed"
        key = "API key set (hidden)" if self.openai_key else "no API key"
        where = self.openai_base_url or "https://api.openai.com/v1"
        return f"OpenAI-compatible provider at {where}, model {self.openai_model}, {key}"

    def path_for(self, transport: Transport) -> str:
        """The URL path for an HTTP transport."""
        return self.mcp_sse_path if transport == "sse" else self.mcp_streamable_path


def check_token(raw: str) -> str:
    """``raw`` if it can be a class token; the ``ValueError`` never repeats it."""
    if not _TOKEN_SHAPE.fullmatch(raw):
        raise ValueError(f"a class token needs {TOKEN_RULE} (value not shown)")
    return raw


def _checked(valid: Callable[[str], bool], convert: Callable[[str], Any] = str) -> Callable[[str], Any]:
    """A converter: ``convert(raw)`` if ``valid(raw)``, else a ``ValueError``."""

    def read(raw: str) -> Any:
        if not valid(raw):
            raise ValueError(raw)
        return convert(raw)

    return read


def _one_of(choices: tuple[str, ...]) -> Callable[[str], Any]:
    """A converter to one of ``choices``, whatever the case and with ``_`` for ``-`` (``STREAMABLE_HTTP``)."""
    return _checked(lambda raw: _choice(raw) in choices, _choice)


def _choice(raw: str) -> str:
    return raw.lower().replace("_", "-")


def _int_between(low: int, high: int) -> Callable[[str], int]:
    return _checked(lambda raw: low <= int(raw) <= high, int)


_url_path = _checked(lambda raw: raw.startswith("/") and " " not in raw)
_folder = _checked(lambda raw: "\0" not in raw, lambda raw: Path(raw).expanduser())
_http_url = _checked(lambda raw: raw.startswith(("http://", "https://")), lambda raw: raw.rstrip("/"))


def _hours(raw: str) -> tuple[time, time]:
    """``08:00-22:00`` -> (08:00, 22:00); ``24:00`` as the end means to the end of the day."""
    start, dash, end = raw.partition("-")
    begin = time.fromisoformat(start.strip())
    until = time.max if end.strip() == "24:00" else time.fromisoformat(end.strip())
    if not dash or not begin < until:
        raise ValueError(raw)
    return begin, until


_URL = "an http:// or https:// URL"
_URL_PATH = "a URL path starting with '/'"
_HOURS = "HH:MM-HH:MM, the start before the end, e.g. 08:00-22:00 (00:00-24:00: any time)"
#: The settings read from a variable: the :class:`Settings` field, the variable, how to read a value (a
#: ``ValueError`` for a bad one) and what a valid one looks like. Unset or empty: the field's default.
_VARIABLES: tuple[tuple[str, str, Callable[[str], Any], str], ...] = (
    ("openai_base_url", "OPENAI_BASE_URL", _http_url, _URL),
    ("openai_model", "OPENAI_MODEL", str, "a model name"),
    ("mcp_transport", "MCP_TRANSPORT", _one_of(TRANSPORTS), "one of " + ", ".join(TRANSPORTS)),
    ("mcp_host", "MCP_HOST", str, "a host name or IP address"),
    ("mcp_port", "MCP_PORT", _int_between(1, 65535), "a whole number from 1 to 65535"),
    ("mcp_sse_path", "MCP_SSE_PATH", _url_path, _URL_PATH),
    ("mcp_streamable_path", "MCP_STREAMABLE_PATH", _url_path, _URL_PATH),
    ("llm_max_tool_rounds", "LLM_MAX_TOOL_ROUNDS", _int_between(1, 50), "a whole number from 1 to 50"),
    ("mcp_auth_token", TOKEN_VARIABLE, check_token, TOKEN_RULE),
    ("provider_choice", "LLM_PROVIDER", _one_of(PROVIDERS), "one of " + ", ".join(PROVIDERS)),
    ("anthropic_base_url", "ANTHROPIC_BASE_URL", _http_url, _URL),
    ("anthropic_model", "ANTHROPIC_MODEL", str, "a model name"),
    ("notes_dir", NOTES_DIR_VARIABLE, _folder, "a folder path"),
    ("write_hours", WRITE_HOURS_VARIABLE, _hours, _HOURS),
)


def load_settings(env_file: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Read settings from ``env_file`` (default: the nearest ``.env`` upwards) and the environment."""
    path = Path(env_file) if env_file else (Path(found) if (found := find_dotenv(usecwd=True)) else None)
    read_from = path if path and path.is_file() else None
    values: dict[str, str | None] = dict(dotenv_values(read_from)) if read_from else {}
    values.update(os.environ if environ is None else environ)
    fields: dict[str, Any] = {}
    for name, variable, convert, valid in _VARIABLES:
        raw = values.get(variable) or ""
        if not raw.strip():
            continue
        try:
            fields[name] = convert(raw.strip())
        except ValueError:
            shown = f"{variable} (value not shown)" if variable == TOKEN_VARIABLE else f"{variable}={raw!r}"
            where = f" (read from {read_from})" if read_from else ""
            raise ConfigError(f"{shown} is not valid: expected {valid}.{where}") from None
    openai_key, anthropic_key = values.get("OPENAI_API_KEY") or None, values.get("ANTHROPIC_API_KEY") or None
    return Settings(openai_api_key=openai_key, anthropic_api_key=anthropic_key, env_file=read_from, **fields)
