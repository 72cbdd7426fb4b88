"""Which LLM the loop talks to, and what to tell the student when it fails.

With no provider configured, :func:`openai_client` returns a real ``openai.AsyncOpenAI``
whose HTTP requests go straight into the offline teaching model's ASGI app (no
port, no network). With ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` set, the very same
code talks to that provider instead.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import httpx2
import openai

from mcp_teach.config import Settings
from mcp_teach.llm.endpoint import create_app
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.wire.redact import REDACTED, redact_text

#: Base URL of the in-process teaching model; the ``.invalid`` domain can never reach a network.
OFFLINE_BASE_URL = "http://teaching-model.invalid/v1"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


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
    key = settings.openai_api_key
    if not key:
        if not _is_local(url):
            raise LLMError(
                f"OPENAI_BASE_URL is {url} but OPENAI_API_KEY is empty. Put your key in .env "
                "(OPENAI_API_KEY=...), or clear OPENAI_BASE_URL to use the offline teaching model."
            )
        key = "no-key-needed"
    return openai.AsyncOpenAI(base_url=url, api_key=key, max_retries=max_retries, timeout=timeout)


def _error_detail(error: openai.OpenAIError, api_key: str | None) -> str:
    """The provider's own words: ``{"error": {"message": ...}}``, ``{"error": "..."}`` or a plain-text body."""
    body = getattr(error, "body", None)
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
