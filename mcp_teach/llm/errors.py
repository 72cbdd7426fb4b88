"""What to tell the student when the LLM cannot be used: one error map for both provider SDKs.

Kept light (the CLI imports :class:`LLMError` without importing ``openai``): an SDK exception is matched by the
names of its classes, which the ``openai`` and the ``anthropic`` SDK share (``AuthenticationError``,
``NotFoundError``, ...; both are generated from their APIs' specifications by the same tool).
"""

from __future__ import annotations

import json

from mcp_teach.wire.redact import REDACTED, redact_text


class LLMError(RuntimeError):
    """The LLM could not be used; the message says what to change."""


#: SDK exception class (or a base class of it) -> what the student reads. ``{sdk}`` is OPENAI or ANTHROPIC.
ERROR_MAP = {
    "APIConnectionError": "Cannot reach the LLM at {url} ({kind}). Is the server running, and is {sdk}_BASE_URL right?",
    "AuthenticationError": "The LLM at {url} rejected the API key (HTTP 401). Check {sdk}_API_KEY in .env.",
    "PermissionDeniedError": "The API key may not use model '{model}' at {url} (HTTP 403). Check your account.",
    "NotFoundError": "Model '{model}' was not found at {url} (HTTP 404): {sentence} Check {sdk}_MODEL.",
    "RateLimitError": "The LLM at {url} is rate-limiting this key (HTTP 429). Wait a little and try again.",
    "OverloadedError": (
        "The LLM at {url} is overloaded (HTTP 529): too many requests for everyone, not only yours. "
        "Wait a minute and try again, or use another model ({sdk}_MODEL)."
    ),
}
#: HTTP 404 whose words do not name a model: nothing answers at that path, so the URL is wrong, not the model.
NO_ROUTE = (
    "Nothing at {url} answers this API (HTTP 404): {sentence} Check {sdk}_BASE_URL (an OpenAI-compatible one "
    "usually ends in /v1), then {sdk}_MODEL."
)
#: HTTP 429 with OpenAI's ``insufficient_quota``: the account has no quota left, and waiting does not help.
NO_QUOTA = (
    "The account behind this key has no quota left at {url} (HTTP 429, insufficient_quota): {sentence} "
    "Waiting will not help: check the plan and billing."
)
#: HTTP 200 whose body is not the API's reply (no SDK error to map): a stand-in or proxy answering the wrong way.
NOT_A_REPLY = (
    "The LLM at {url} answered HTTP 200, but not with a {api} reply: {found} "
    "Is the base URL an API of that kind, and does an error come with its HTTP status?"
)
#: HTTP 400 that mentions tools: the model cannot do function calling.
NO_TOOLS = (
    "Model '{model}' at {url} refused the tool definitions (HTTP 400): {detail} "
    "Choose a model that supports function calling (tools)."
)
#: Any other HTTP 5xx: the provider's side.
SERVER_SIDE = "The LLM at {url} failed with HTTP {status}. This is the provider's side; try again later."
OTHER = "The LLM at {url} returned an error{status_note}: {detail}"


def _error_body(error: Exception) -> object:
    """The provider's error object: ``body["error"]`` if it is one (the openai SDK keeps the inner object as
    ``body``), else ``body``."""
    body = getattr(error, "body", None)
    return body["error"] if isinstance(body, dict) and isinstance(body.get("error"), dict) else body


def error_code(error: Exception) -> str | None:
    """The ``code`` of the provider's error object."""
    body = _error_body(error)
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


def not_a_reply(url: str, api: str, response: object, api_key: str | None = None) -> LLMError:
    """An HTTP 200 body that is not the API's reply, shown short and without the key (a proxy may echo it)."""
    found = json.dumps(response, default=str)
    found = redact_text(found.replace(api_key, REDACTED) if api_key else found)
    return LLMError(NOT_A_REPLY.format(url=url, api=api, found=found[:160]))


def detail_of(error: Exception, api_key: str | None = None) -> str:
    """The provider's own words: ``{"error": {"message": ...}}``, ``{"error": "..."}`` or a plain-text body."""
    body = _error_body(error)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        detail = body["message"]
    elif isinstance(body, str) and body.strip():
        detail = body.strip()
    else:
        detail = getattr(error, "message", None) or str(error)
    return redact_text(detail.replace(api_key, REDACTED) if api_key else detail)  # some providers echo the key


def explain(error: Exception, url: str, model: str, api_key: str | None = None) -> LLMError:
    """An ``openai`` or ``anthropic`` exception as an :class:`LLMError` that names the fix (never the key)."""
    sdk = "ANTHROPIC" if type(error).__module__.startswith("anthropic") else "OPENAI"
    status = getattr(error, "status_code", None)
    detail = detail_of(error, api_key)
    words = {"url": url, "model": model, "sdk": sdk, "kind": type(error).__name__, "status": status,
             "detail": detail, "sentence": detail if detail.endswith((".", "!", "?")) else f"{detail}.",
             "status_note": f" (HTTP {status})" if status else ""}  # fmt: skip
    if status == 404 and "model" not in detail.lower() and model not in detail:
        return LLMError(NO_ROUTE.format(**words))
    if status == 429 and error_code(error) == "insufficient_quota":
        return LLMError(NO_QUOTA.format(**words))
    if known := next((ERROR_MAP[cls.__name__] for cls in type(error).__mro__ if cls.__name__ in ERROR_MAP), None):
        return LLMError(known.format(**words))
    if status == 400 and "tool" in words["detail"].lower():
        return LLMError(NO_TOOLS.format(**words))
    if status is not None and status >= 500:
        return LLMError(SERVER_SIDE.format(**words))
    return LLMError(OTHER.format(**words))
