"""The offline teaching model behind an OpenAI-compatible chat-completions API and Anthropic's Messages API.

``POST /v1/chat/completions`` speaks OpenAI's format, ``POST /v1/messages`` Anthropic's
(translated by :mod:`~mcp_teach.llm.anthropic_format`; the same rules answer both).
The same ASGI app serves two ways:

- in-process, through ``httpx2.ASGITransport`` (no port; what notebooks use by default);
- over HTTP on loopback with ``mcp-teach model serve``, so changing ``OPENAI_BASE_URL``
  alone moves a student between it and a real provider (``ANTHROPIC_BASE_URL`` for the Messages API).

Requests are validated the way each provider does and rejected with its error bodies
(OpenAI: ``{"error": {...}}``; Anthropic: ``{"type": "error", "error": {...}}``), so the
``openai`` and ``anthropic`` SDKs raise their usual exceptions.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_teach.llm.anthropic_format import MessagesRejected, to_chat_request, to_message, validate_messages_request
from mcp_teach.llm.teaching_model import MODEL_NAME, complete

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


class RequestRejected(Exception):
    """A request the endpoint refuses, with the HTTP status and OpenAI's error fields ``param`` and ``code``."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.param, self.code = status, param, code

    def response(self) -> JSONResponse:
        error = {"message": str(self), "type": "invalid_request_error", "param": self.param, "code": self.code}
        return JSONResponse({"error": error}, status_code=self.status)


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise RequestRejected(400, "'messages' must be a non-empty array.", param="messages")
    for index, message in enumerate(messages):
        param = f"messages[{index}]"
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or message["role"] not in ROLES:
            raise RequestRejected(400, f"{param} needs a 'role', one of {', '.join(sorted(ROLES))}.", param=param)
        if message["role"] == "tool" and not message.get("tool_call_id"):
            raise RequestRejected(400, f"{param} has role 'tool' but no 'tool_call_id'.", param=param)


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise RequestRejected(400, "'tools' must be an array.", param="tools")
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name or tool.get("type") != "function":
            raise RequestRejected(
                400, f"tools[{index}] must be {{'type': 'function', 'function': {{'name': ...}}}}.", param="tools"
            )


def validate_request(body: Any) -> dict[str, Any]:
    """Check a chat-completions request body; raise :class:`RequestRejected` if it is unusable."""
    if not isinstance(body, dict):
        raise RequestRejected(400, "The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestRejected(400, "'model' is required.", param="model")
    if model != MODEL_NAME:
        raise RequestRejected(
            404,
            f"The model '{model}' does not exist here: this is the offline teaching endpoint, whose model is "
            f"'{MODEL_NAME}'. Set OPENAI_MODEL={MODEL_NAME} or point OPENAI_BASE_URL at your provider.",
            param="model",
            code="model_not_found",
        )
    if body.get("stream"):
        raise RequestRejected(400, "The offline teaching model does not stream; leave 'stream' unset.", param="stream")
    _check_messages(body.get("messages"))
    _check_tools(body.get("tools"))
    return body


def create_app(api_key: str | None = None) -> Starlette:
    """The ASGI app. With ``api_key`` set, requests must send ``Authorization: Bearer <api_key>``."""

    def key_matches(request: Request, *, x_api_key: bool = False) -> bool:
        """``Authorization: Bearer <api_key>``; for Messages also ``x-api-key``, the header Anthropic's API documents
        (anthropic 2.x sends the key as the bearer)."""
        scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
        sent = bearer.strip() if scheme.lower() == "bearer" else None
        if x_api_key:
            sent = request.headers.get("x-api-key") or sent
        return api_key is None or (sent is not None and hmac.compare_digest(sent.encode(), api_key.encode()))

    def check_key(request: Request) -> None:
        if not key_matches(request):
            raise RequestRejected(401, "Incorrect API key provided. Check OPENAI_API_KEY.", code="invalid_api_key")

    async def chat_completions(request: Request) -> JSONResponse:
        try:
            check_key(request)
            try:
                body = json.loads(await request.body())
            except ValueError:
                raise RequestRejected(400, "The request body is not valid JSON.") from None
            return JSONResponse(complete(validate_request(body)))
        except RequestRejected as rejected:
            return rejected.response()

    async def messages(request: Request) -> JSONResponse:
        try:
            if not key_matches(request, x_api_key=True):
                raise MessagesRejected(401, "invalid x-api-key. Check ANTHROPIC_API_KEY.")
            try:
                body = json.loads(await request.body())
            except ValueError:
                raise MessagesRejected(400, "The request body is not valid JSON.") from None
            body = validate_messages_request(body, MODEL_NAME)
            return JSONResponse(to_message(complete(to_chat_request(body)), body))
        except MessagesRejected as rejected:
            return JSONResponse(rejected.body(), status_code=rejected.status)

    async def models(request: Request) -> JSONResponse:
        try:
            check_key(request)
        except RequestRejected as rejected:
            return rejected.response()
        model = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "mcp-teach"}
        return JSONResponse({"object": "list", "data": [model]})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ]
    )
