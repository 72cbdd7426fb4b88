"""Which LLM the loop talks to.

With no provider configured, :func:`openai_client` returns a real ``openai.AsyncOpenAI``
whose HTTP requests go straight into the offline teaching model's ASGI app (no
port, no network). With ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` set, the very same
code talks to that provider instead.

:func:`anthropic_client` does the same for Anthropic's Messages API: a real
``anthropic.AsyncAnthropic`` into the same app (its ``/v1/messages``), or the provider
that ``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY`` name. :func:`llm_client` picks the API
by ``Settings.llm_provider`` (``LLM_PROVIDER``, or the course's detection rules). ``on_exchange`` records
every HTTP exchange of a client (:mod:`mcp_teach.wire.http_recording`), offline or not: lesson 11 reads what
each SDK sends. What a failure means is :mod:`mcp_teach.llm.errors`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx2
import openai

from mcp_teach.config import ANTHROPIC_DEFAULT_BASE_URL, Settings, is_loopback
from mcp_teach.llm.endpoint import create_app
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.wire.http_recording import HttpExchange, RecordingHTTPTransport

if TYPE_CHECKING:  # imported where used: it takes 1.1 s, and most lessons only speak OpenAI's API
    import anthropic

#: Base URL of the in-process teaching model; the ``.invalid`` domain can never reach a network.
OFFLINE_BASE_URL = "http://teaching-model.invalid/v1"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The same for the Messages API, whose paths (``/v1/messages``) include the version.
OFFLINE_ANTHROPIC_BASE_URL = "http://teaching-model.invalid"


def base_url(settings: Settings) -> str:
    """Where the chat-completions requests go."""
    return OFFLINE_BASE_URL if settings.uses_offline_model else settings.openai_base_url or OPENAI_DEFAULT_BASE_URL


def model_name(settings: Settings) -> str:
    """The model to ask: the teaching model offline, ``OPENAI_MODEL`` otherwise."""
    return MODEL_NAME if settings.uses_offline_model else settings.openai_model


def _api_key(key: str | None, url: str, missing: str) -> str:
    """The key to send: a local server may run without one; a remote provider without one is refused (``missing``)."""
    if key:
        return key
    if not is_loopback(urlsplit(url).hostname or ""):
        raise LLMError(missing)
    return "no-key-needed"


OnExchange = Callable[[HttpExchange], None]


def _http_client(offline: bool, base: str, on_exchange: OnExchange | None, timeout: float) -> httpx2.AsyncClient | None:
    """The SDK's HTTP client: into the teaching model's app offline, recorded if ``on_exchange`` is given."""
    if not offline and on_exchange is None:
        return None  # the SDK's own
    inner = httpx2.ASGITransport(app=create_app()) if offline else httpx2.AsyncHTTPTransport()
    transport = inner if on_exchange is None else RecordingHTTPTransport(on_exchange, inner=inner)
    return httpx2.AsyncClient(transport=transport, base_url=base, timeout=timeout)


def _sdk_client(sdk: type, offline: bool, url: str, key: str | None, missing: str, options: dict) -> Any:
    """An SDK client for ``url``: into the teaching model's app offline (no retries), else to the provider with
    ``key`` (a remote one without a key is refused with ``missing``). ``options``: max_retries, timeout, on_exchange.
    """
    key, retries = ("offline", 0) if offline else (_api_key(key, url, missing), options["max_retries"])
    http_client = _http_client(offline, url, options["on_exchange"], options["timeout"])
    return sdk(base_url=url, api_key=key, max_retries=retries, timeout=options["timeout"], http_client=http_client)


def openai_client(
    settings: Settings, *, max_retries: int = 1, timeout: float = 60.0, on_exchange: OnExchange | None = None
) -> openai.AsyncOpenAI:
    """An ``openai.AsyncOpenAI`` for the configured backend.

    A local server (Ollama, vLLM, ``mcp-teach model serve``) may run without a key;
    a remote provider without ``OPENAI_API_KEY`` is refused here, before any request.
    """
    url = base_url(settings)
    missing = (
        f"OPENAI_BASE_URL is {url} but OPENAI_API_KEY is empty. Put your key in .env "
        "(OPENAI_API_KEY=...), or clear OPENAI_BASE_URL to use the offline teaching model."
    )
    options = {"max_retries": max_retries, "timeout": timeout, "on_exchange": on_exchange}
    return _sdk_client(openai.AsyncOpenAI, settings.uses_offline_model, url, settings.openai_key, missing, options)


def anthropic_base_url(settings: Settings) -> str:
    """Where the Messages requests go (``/v1/messages`` is added by the SDK)."""
    if settings.uses_offline_anthropic:
        return OFFLINE_ANTHROPIC_BASE_URL
    return settings.anthropic_base_url or ANTHROPIC_DEFAULT_BASE_URL


def anthropic_model_name(settings: Settings) -> str:
    """The model to ask over the Messages API: the teaching model offline, ``ANTHROPIC_MODEL`` otherwise."""
    return MODEL_NAME if settings.uses_offline_anthropic else settings.anthropic_model


def anthropic_client(
    settings: Settings, *, max_retries: int = 1, timeout: float = 60.0, on_exchange: OnExchange | None = None
) -> anthropic.AsyncAnthropic:
    """An ``anthropic.AsyncAnthropic`` for the configured backend, like :func:`openai_client`.

    Offline, its HTTP goes into the teaching model's ASGI app (``POST /v1/messages``). The key is always
    passed explicitly, so the SDK never picks up other credentials (profiles, ``ANTHROPIC_AUTH_TOKEN``)
    behind the student's back. A remote provider without ``ANTHROPIC_API_KEY`` is refused here.
    """
    import anthropic

    url = anthropic_base_url(settings)
    where = "ANTHROPIC_BASE_URL is" if settings.anthropic_base_url else "LLM_PROVIDER is anthropic, at"
    missing = (
        f"{where} {url} but ANTHROPIC_API_KEY is empty. Put your key in .env (ANTHROPIC_API_KEY=sk-ant-...), "
        "or clear LLM_PROVIDER and ANTHROPIC_BASE_URL (or set LLM_PROVIDER=offline) to use the offline "
        "teaching model."
    )
    options = {"max_retries": max_retries, "timeout": timeout, "on_exchange": on_exchange}
    offline = settings.uses_offline_anthropic
    return _sdk_client(anthropic.AsyncAnthropic, offline, url, settings.anthropic_api_key, missing, options)


def llm_client(settings: Settings, **options: float) -> tuple[openai.AsyncOpenAI | anthropic.AsyncAnthropic, str]:
    """The client and model of ``settings.llm_provider``: Anthropic's Messages API for ``anthropic``, OpenAI's
    chat completions otherwise (the offline teaching model speaks both; :func:`anthropic_client` asks it in
    Anthropic's format)."""
    if settings.llm_provider == "anthropic":
        return anthropic_client(settings, **options), anthropic_model_name(settings)  # type: ignore[arg-type]
    return openai_client(settings, **options), model_name(settings)  # type: ignore[arg-type]
