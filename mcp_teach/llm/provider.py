"""Which LLM the loop talks to, and what to tell the student when it fails.

With no provider configured, :func:`openai_client` returns a real ``openai.AsyncOpenAI``
whose HTTP requests go straight into the offline teaching model's ASGI app (no
port, no network). With ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` set, the very same
code talks to that provider instead.

:func:`anthropic_client` does the same for Anthropic's Messages API: a real
``anthropic.AsyncAnthropic`` into the same app (its ``/v1/messages``), or the provider
that ``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY`` name. :func:`llm_client` picks the API
by ``Settings.llm_provider`` (``LLM_PROVIDER``, or the course's detection rules).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx2
import openai

from mcp_teach.config import ANTHROPIC_DEFAULT_BASE_URL, Settings
from mcp_teach.llm.endpoint import create_app
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.wire.redact import REDACTED, redact_text

if TYPE_CHECKING:  # imported where used: it takes 1.1 s, and most lessons only speak OpenAI's API
    import anthropic

#: Base URL of the in-process teaching model; the ``.invalid`` domain can never reach a network.
OFFLINE_BASE_URL = "http://teaching-model.invalid/v1"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The same for the Messages API, whose paths (``/v1/messages``) include the version.
OFFLINE_ANTHROPIC_BASE_URL = "http://teaching-model.invalid"


def _is_local(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def base_url(settings: Settings) -> str:
    """Where the chat-completions requests go."""
    if settings.uses_offline_model:
        return OFFLINE_BASE_URL
    return settings.openai_base_url or OPENAI_DEFAULT_BASE_URL


def model_name(settings: Settings) -> str:
    """The model to ask: the teaching model offline, ``OPENAI_MODEL`` otherwise."""
    return MODEL_NAME if settings.uses_offline_model else settings.openai_model


def openai_client(settings: Settings, *, max_retries: int = 1, timeout: float = 60.0) -> openai.AsyncOpenAI:
    """An ``openai.AsyncOpenAI`` for the configured backend.

    A local server (Ollama, vLLM, ``mcp-teach model serve``) may run without a key;
    a remote provider without ``OPENAI_API_KEY`` is refused here, before any request.
    """
    if settings.uses_offline_model:
        transport = httpx2.ASGITransport(app=create_app())
        http_client = httpx2.AsyncClient(transport=transport, base_url=OFFLINE_BASE_URL)
        return openai.AsyncOpenAI(base_url=OFFLINE_BASE_URL, api_key="offline", http_client=http_client, max_retries=0)
    url = base_url(settings)
    key = settings.openai_key
    if not key:
        if not _is_local(url):
            raise LLMError(
                f"OPENAI_BASE_URL is {url} but OPENAI_API_KEY is empty. Put your key in .env "
                "(OPENAI_API_KEY=...), or clear OPENAI_BASE_URL to use the offline teaching model."
            )
        key = "no-key-needed"
    return openai.AsyncOpenAI(base_url=url, api_key=key, max_retries=max_retries, timeout=timeout)


def anthropic_base_url(settings: Settings) -> str:
    """Where the Messages requests go (``/v1/messages`` is added by the SDK)."""
    if settings.uses_offline_anthropic:
        return OFFLINE_ANTHROPIC_BASE_URL
    return settings.anthropic_base_url or ANTHROPIC_DEFAULT_BASE_URL


def anthropic_model_name(settings: Settings) -> str:
    """The model to ask over the Messages API: the teaching model offline, ``ANTHROPIC_MODEL`` otherwise."""
    return MODEL_NAME if settings.uses_offline_anthropic else settings.anthropic_model


def anthropic_client(settings: Settings, *, max_retries: int = 1, timeout: float = 60.0) -> anthropic.AsyncAnthropic:
    """An ``anthropic.AsyncAnthropic`` for the configured backend, like :func:`openai_client`.

    Offline, its HTTP goes into the teaching model's ASGI app (``POST /v1/messages``). The key is always
    passed explicitly, so the SDK never picks up other credentials (profiles, ``ANTHROPIC_AUTH_TOKEN``)
    behind the student's back. A remote provider without ``ANTHROPIC_API_KEY`` is refused here.
    """
    import anthropic

    if settings.uses_offline_anthropic:
        transport = httpx2.ASGITransport(app=create_app())
        http_client = httpx2.AsyncClient(transport=transport, base_url=OFFLINE_ANTHROPIC_BASE_URL)
        return anthropic.AsyncAnthropic(
            base_url=OFFLINE_ANTHROPIC_BASE_URL, api_key="offline", http_client=http_client, max_retries=0
        )
    url = anthropic_base_url(settings)
    key = settings.anthropic_api_key
    if not key:
        if not _is_local(url):
            where = "ANTHROPIC_BASE_URL is" if settings.anthropic_base_url else "LLM_PROVIDER is anthropic, at"
            raise LLMError(
                f"{where} {url} but ANTHROPIC_API_KEY is empty. Put your key in .env (ANTHROPIC_API_KEY=sk-ant-...), "
                "or clear LLM_PROVIDER and ANTHROPIC_BASE_URL (or set LLM_PROVIDER=offline) to use the offline "
                "teaching model."
            )
        key = "no-key-needed"
    return anthropic.AsyncAnthropic(base_url=url, api_key=key, max_retries=max_retries, timeout=timeout)


def llm_client(settings: Settings, **options: float) -> tuple[openai.AsyncOpenAI | anthropic.AsyncAnthropic, str]:
    """The client and model of ``settings.llm_provider``: Anthropic's Messages API for ``anthropic``, OpenAI's
    chat completions otherwise (the offline teaching model speaks both; :func:`anthropic_client` asks it in
    Anthropic's format)."""
    if settings.llm_provider == "anthropic":
        return anthropic_client(settings, **options), anthropic_model_name(settings)  # type: ignore[arg-type]
    return openai_client(settings, **options), model_name(settings)  # type: ignore[arg-type]


def _error_detail(error: openai.OpenAIError | anthropic.AnthropicError, api_key: str | None) -> str:
    """The provider's own words: ``{"error": {"message": ...}}``, ``{"error": "..."}`` or a plain-text body."""
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):  # Anthropic: {"type": "error", "error": {}}
        body = body["error"]
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        detail = body["message"]
    elif isinstance(body, str) and body.strip():
        detail = body.strip()
    else:
        detail = getattr(error, "message", None) or str(error)
    # Some providers and proxies echo the key they were sent.
    return redact_text(detail.replace(api_key, REDACTED) if api_key else detail)


def explain_llm_error(error: openai.OpenAIError, url: str, model: str, api_key: str | None = None) -> LLMError:
    """Turn an ``openai`` exception into an :class:`LLMError` that names the fix (never the key)."""
    status = getattr(error, "status_code", None)
    detail = _error_detail(error, api_key)
    if isinstance(error, openai.APIConnectionError):
        return LLMError(
            f"Cannot reach the LLM at {url} ({type(error).__name__}). Is the server running, and is "
            "OPENAI_BASE_URL right?"
        )
    if isinstance(error, openai.AuthenticationError):
        return LLMError(f"The LLM at {url} rejected the API key (HTTP 401). Check OPENAI_API_KEY in .env.")
    if isinstance(error, openai.PermissionDeniedError):
        return LLMError(f"The API key may not use model '{model}' at {url} (HTTP 403). Check your account.")
    if isinstance(error, openai.NotFoundError):
        return LLMError(f"Model '{model}' was not found at {url} (HTTP 404): {detail} Check OPENAI_MODEL.")
    if isinstance(error, openai.RateLimitError):
        return LLMError(f"The LLM at {url} is rate-limiting this key (HTTP 429). Wait a little and try again.")
    if isinstance(error, openai.BadRequestError) and "tool" in detail.lower():
        return LLMError(
            f"Model '{model}' at {url} refused the tool definitions (HTTP 400): {detail} "
            "Choose a model that supports function calling (tools)."
        )
    if isinstance(error, openai.APIStatusError) and status is not None and status >= 500:
        return LLMError(f"The LLM at {url} failed with HTTP {status}. This is the provider's side; try again later.")
    return LLMError(f"The LLM at {url} returned an error{f' (HTTP {status})' if status else ''}: {detail}")


def explain_anthropic_error(
    error: anthropic.AnthropicError, url: str, model: str, api_key: str | None = None
) -> LLMError:
    """Turn an ``anthropic`` exception into an :class:`LLMError` that names the fix (never the key)."""
    import anthropic

    status = getattr(error, "status_code", None)
    detail = _error_detail(error, api_key)
    if isinstance(error, anthropic.APIConnectionError):
        return LLMError(
            f"Cannot reach the LLM at {url} ({type(error).__name__}). Is the server running, and is "
            "ANTHROPIC_BASE_URL right?"
        )
    if isinstance(error, anthropic.AuthenticationError):
        return LLMError(
            f"The LLM at {url} rejected the API key (HTTP 401, authentication_error). Check ANTHROPIC_API_KEY in "
            ".env (Anthropic keys start with sk-ant-)."
        )
    if isinstance(error, anthropic.PermissionDeniedError):
        return LLMError(f"The API key may not use model '{model}' at {url} (HTTP 403). Check your account.")
    if isinstance(error, anthropic.NotFoundError):
        return LLMError(f"Model '{model}' was not found at {url} (HTTP 404): {detail} Check ANTHROPIC_MODEL.")
    if isinstance(error, anthropic.RateLimitError):
        return LLMError(f"The LLM at {url} is rate-limiting this key (HTTP 429). Wait a little and try again.")
    if isinstance(error, anthropic.OverloadedError) or status == 529:
        return LLMError(
            f"The LLM at {url} is overloaded (HTTP 529, overloaded_error): too many requests for everyone, not "
            "only yours. Wait a minute and try again, or use another model (ANTHROPIC_MODEL)."
        )
    if isinstance(error, anthropic.BadRequestError) and "tool" in detail.lower():
        return LLMError(
            f"Model '{model}' at {url} refused the tool definitions (HTTP 400): {detail} "
            "Choose a model that supports tool use."
        )
    if isinstance(error, anthropic.APIStatusError) and status is not None and status >= 500:
        return LLMError(f"The LLM at {url} failed with HTTP {status}. This is the provider's side; try again later.")
    return LLMError(f"The LLM at {url} returned an error{f' (HTTP {status})' if status else ''}: {detail}")
