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


def _require(
    condition: bool, message: str, param: str | None = None, *, status: int = 400, code: str | None = None
) -> None:
    """Refuse the request with ``message`` (a :class:`RequestRejected`) unless ``condition`` holds."""
    if not condition:
        raise RequestRejected(status, message, param=param, code=code)


def validate_request(body: Any) -> dict[str, Any]:
    """Check a chat-completions request body; raise :class:`RequestRejected` if it is unusable."""
    _require(isinstance(body, dict), "The request body must be a JSON object.")
    model = body.get("model")
    _require(isinstance(model, str) and bool(model), "'model' is required.", "model")
    here = f"this is the offline teaching endpoint, whose model is '{MODEL_NAME}'"
    fix = f"Set OPENAI_MODEL={MODEL_NAME} or point OPENAI_BASE_URL at your provider."
    missing = f"The model '{model}' does not exist here: {here}. {fix}"
    _require(model == MODEL_NAME, missing, "model", status=404, code="model_not_found")
    _require(not body.get("stream"), "The offline teaching model does not stream; leave 'stream' unset.", "stream")
    messages = body.get("messages")
    _require(isinstance(messages, list) and bool(messages), "'messages' must be a non-empty array.", "messages")
    for index, message in enumerate(messages):
        param, role = f"messages[{index}]", message.get("role") if isinstance(message, dict) else None
        needs_role = f"{param} needs a 'role', one of {', '.join(sorted(ROLES))}."
        _require(isinstance(role, str) and role in ROLES, needs_role, param)
        has_id = role != "tool" or bool(message.get("tool_call_id"))
        _require(has_id, f"{param} has role 'tool' but no 'tool_call_id'.", param)
    tools = body.get("tools")
    _require(tools is None or isinstance(tools, list), "'tools' must be an array.", "tools")
    for index, tool in enumerate(tools or []):
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        named = isinstance(name, str) and bool(name) and tool.get("type") == "function"
        _require(named, f"tools[{index}] must be {{'type': 'function', 'function': {{'name': ...}}}}.", "tools")
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

    async def json_body(request: Request, rejected: type[RequestRejected | MessagesRejected]) -> Any:
        try:
            return json.loads(await request.body())
        except ValueError:
            raise rejected(400, "The request body is not valid JSON.") from None

    async def chat_completions(request: Request) -> JSONResponse:
        try:
            check_key(request)
            return JSONResponse(complete(validate_request(await json_body(request, RequestRejected))))
        except RequestRejected as rejected:
            return rejected.response()

    async def messages(request: Request) -> JSONResponse:
        try:
            if not key_matches(request, x_api_key=True):
                raise MessagesRejected(401, "invalid x-api-key. Check ANTHROPIC_API_KEY.")
            body = validate_messages_request(await json_body(request, MessagesRejected), MODEL_NAME)
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

    posts = {"/v1/chat/completions": chat_completions, "/v1/messages": messages}
    routes = [Route(path, handler, methods=["POST"]) for path, handler in posts.items()]
    return Starlette(routes=[*routes, Route("/v1/models", models, methods=["GET"])])
