"""Lesson 11: one agent loop over two LLM APIs, with the HTTP between the agent and each API recorded.

The loop itself is the package's (:func:`~mcp_teach.llm.loop.ask_any`: the same Think → Act → Observe rounds for
an ``openai.AsyncOpenAI`` and an ``anthropic.AsyncAnthropic``). What this module adds, because the package has no
such thing and the lesson needs to *see* the two formats:

- :class:`LLMRecorder`: an ``httpx2`` transport under a real SDK client that keeps every HTTP request to the LLM
  and its response (path, the headers that matter, both JSON bodies; credentials redacted), in front of the
  offline teaching model's ASGI app or of a real connection. :func:`recorded_client` builds an SDK client on it,
  as :func:`~mcp_teach.llm.provider.openai_client` / ``anthropic_client`` build the offline ones without it.
- :func:`show_exchanges` and :func:`api_table`: the recorded requests shown like captured MCP messages, and the
  side-by-side table of the two formats, every cell read from a recording (nothing typed in by hand).
- :func:`loop_table`: two traces of the same question, event by event; :func:`mcp_calls`: what reached the MCP
  server in a trace (the same for both APIs).
- :func:`start_model_server`: ``mcp-teach model serve`` as a real process on loopback (both APIs on one port),
  whose key, if it has one, is never printed.
- :func:`try_llm` and :func:`stand_in_app`: run a question with settings that may be wrong and return the
  ``LLMError`` text instead of a traceback; a tiny stand-in provider that answers every request with one error.
"""

from __future__ import annotations

import json
import re
import subprocess
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import httpx2
import openai
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.display.show import ACTOR_COLOURS, Entry, MessagesView, table
from mcp_teach.lessons.l05_terminals import console_script, start_console, stop_console
from mcp_teach.llm.endpoint import create_app
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import ask_any
from mcp_teach.llm.provider import OFFLINE_ANTHROPIC_BASE_URL, OFFLINE_BASE_URL, llm_client
from mcp_teach.llm.trace import Trace
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.plain_text import PlainText
from mcp_teach.wire.redact import REDACTED, redact_headers, redact_json

#: The request headers a recording keeps (the rest is the SDKs' telemetry: ``x-stainless-*``, user agent, …).
KEPT_HEADERS = ("content-type", "authorization", "x-api-key", "anthropic-version")
#: Which API a path belongs to.
API_OF_PATH = {"/v1/chat/completions": "chat completions", "/v1/messages": "messages"}


@dataclass
class LLMExchange:
    """One HTTP request to an LLM API and its response, as recorded (credentials redacted)."""

    method: str
    path: str
    headers: dict[str, str]
    request: Any
    status: int
    response: Any

    @property
    def api(self) -> str:
        return API_OF_PATH.get(self.path, self.path)


def _json(data: bytes) -> Any:
    try:
        return redact_json(json.loads(data))
    except ValueError:
        return data.decode("utf-8", "replace")


class LLMRecorder(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that records every exchange, in front of ``inner``.

    ``inner`` defaults to the offline teaching model's ASGI app (no port, no network); pass
    ``httpx2.AsyncHTTPTransport()`` to record a real connection.
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx2.ASGITransport(app=create_app())
        self.exchanges: list[LLMExchange] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        response = await self.inner.handle_async_request(request)
        data = await response.aread()
        headers = redact_headers({k: v for k, v in request.headers.items() if k.lower() in KEPT_HEADERS})
        path = request.url.path
        self.exchanges.append(
            LLMExchange(request.method, path, headers, _json(body), response.status_code, _json(data))
        )
        return httpx2.Response(response.status_code, headers=response.headers, content=data, request=request)

    def of_api(self, api: str) -> list[LLMExchange]:
        """The exchanges with one API (``"chat completions"`` or ``"messages"``)."""
        return [exchange for exchange in self.exchanges if exchange.api == api]

    async def aclose(self) -> None:
        await self.inner.aclose()


def recorded_client(api: str, recorder: LLMRecorder) -> Any:
    """A real SDK client for ``api`` (``"openai"`` or ``"anthropic"``) whose HTTP goes through ``recorder``.

    Offline, as :func:`~mcp_teach.llm.provider.openai_client` and ``anthropic_client`` make them: the base URL is
    on the ``.invalid`` domain (which can never reach a network) and the key is a placeholder.
    """
    if api == "openai":
        http = httpx2.AsyncClient(transport=recorder, base_url=OFFLINE_BASE_URL)
        return openai.AsyncOpenAI(base_url=OFFLINE_BASE_URL, api_key="offline", http_client=http, max_retries=0)
    if api == "anthropic":
        import anthropic  # 1.1 s: imported where an Anthropic client is made

        http = httpx2.AsyncClient(transport=recorder, base_url=OFFLINE_ANTHROPIC_BASE_URL)
        return anthropic.AsyncAnthropic(
            base_url=OFFLINE_ANTHROPIC_BASE_URL, api_key="offline", http_client=http, max_retries=0
        )
    raise ValueError(f"api is 'openai' or 'anthropic', not {api!r}")


# --- Showing recordings ----------------------------------------------------------------------------------------


def show_exchanges(exchanges: Sequence[LLMExchange], *, fold: Sequence[str] = (), title: str | None = None):
    """The recorded requests and responses, numbered, in the style of ``show`` (``fold`` as there)."""
    entries = []
    for number, exchange in enumerate(exchanges, start=1):
        headers = ", ".join(f"{name}: {value}" for name, value in exchange.headers.items() if name != "content-type")
        entries.append(Entry(f"#{number} client → llm  {exchange.method} {exchange.path}  ({headers})",
                             ACTOR_COLOURS["client"], exchange.request))  # fmt: skip
        colour = ACTOR_COLOURS["llm"] if exchange.status < 400 else "#cf222e"
        entries.append(Entry(f"   llm → client  HTTP {exchange.status}", colour, exchange.response))
    return MessagesView(entries, fold, None, title)


def _compact(value: Any, limit: int = 70) -> str:
    text = " ".join(value.split()) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_tool_reply(exchanges: Sequence[LLMExchange]) -> LLMExchange:
    for exchange in exchanges:
        response = exchange.response
        if exchange.api == "messages" and response.get("stop_reason") == "tool_use":
            return exchange
        if exchange.api == "chat completions" and response["choices"][0]["finish_reason"] == "tool_calls":
            return exchange
    raise ValueError("no recorded response asks for a tool")


def _result_turn(exchanges: Sequence[LLMExchange]) -> Any:
    """The message that carried the first tool result back, as the second request sent it."""
    messages = exchanges[1].request["messages"]
    for message in messages:
        if message.get("role") == "tool":
            return message
        content = message.get("content")
        if isinstance(content, list) and any(block.get("type") == "tool_result" for block in content):
            return message
    raise ValueError("the second request carries no tool result")


def api_table(chat: Sequence[LLMExchange], messages: Sequence[LLMExchange]):
    """The two formats side by side, each cell read from the recorded exchanges of one question.

    ``chat`` and ``messages``: the exchanges of the same question over chat completions and over Messages, at
    least two each (a request that got a tool call, and the one that sent its result back).
    """
    c_first, m_first = chat[0], messages[0]
    c_tool, m_tool = _first_tool_reply(chat), _first_tool_reply(messages)
    c_call = c_tool.response["choices"][0]["message"]["tool_calls"][0]
    m_call = next(b for b in m_tool.response["content"] if b["type"] == "tool_use")
    c_last, m_last = chat[-1].response, messages[-1].response
    c_system = next(m for m in c_first.request["messages"] if m["role"] == "system")
    rows = [
        ("endpoint", f"{c_first.method} {c_first.path}", f"{m_first.method} {m_first.path}"),
        ("the key", _header(c_first, "authorization"), _header(m_first, "x-api-key", "authorization")),
        ("API version", _header(c_first, "anthropic-version"), _header(m_first, "anthropic-version")),
        ("max_tokens", _field(c_first.request, "max_tokens"), _field(m_first.request, "max_tokens")),
        ("application prompt", f'messages[0]: role "{c_system["role"]}"', _where_system(m_first.request)),
        ("a tool definition: keys", _keys(c_first.request["tools"][0]), _keys(m_first.request["tools"][0])),
        ("  its JSON Schema under", "function.parameters", "input_schema"),
        ("tool_choice", _compact(c_first.request.get("tool_choice")), _compact(m_first.request.get("tool_choice"))),
        ("the model asks for a tool", "choices[0].message.tool_calls[]", 'content[]: block "tool_use"'),
        ("  the call", _compact(c_call), _compact(m_call)),
        (
            "  its arguments",
            f"function.arguments, a {_kind(c_call['function']['arguments'])}",
            f"input, an {_kind(m_call['input'])}",
        ),
        (
            "  why the model stopped",
            f'finish_reason: "{c_tool.response["choices"][0]["finish_reason"]}"',
            f'stop_reason: "{m_tool.response["stop_reason"]}"',
        ),
        ("the result goes back as", _compact(_result_turn(chat)), _compact(_result_turn(messages))),
        (
            "the final answer",
            f'finish_reason: "{c_last["choices"][0]["finish_reason"]}"',
            f'stop_reason: "{m_last["stop_reason"]}"',
        ),
        ("usage", _keys(c_last["usage"]), _keys(m_last["usage"])),
    ]
    return table(("", chat[0].api, messages[0].api), rows)


def _header(exchange: LLMExchange, *names: str) -> str:
    for name in names:
        if name in exchange.headers:
            return f"{name}: {exchange.headers[name]}"
    return "(none)"


def _field(body: dict[str, Any], name: str) -> str:
    return f"{name}: {body[name]}" if name in body else "(not sent: optional)"


def _where_system(body: dict[str, Any]) -> str:
    return 'top-level "system" (a string)' if isinstance(body.get("system"), str) else "(none)"


def _keys(value: dict[str, Any]) -> str:
    return ", ".join(
        f"{k}{{{', '.join(v)}}}" if isinstance(v, dict) and k == "function" else k for k, v in value.items()
    )


def _kind(value: Any) -> str:
    return {str: "string (JSON inside)", dict: "object"}.get(type(value), type(value).__name__)


def loop_table(chat: Trace, messages: Trace):
    """Two traces of the same question, event by event: who sent what to whom, in each API's words."""
    if len(chat) != len(messages):
        raise ValueError(f"the traces differ in length ({len(chat)} and {len(messages)} events)")
    rows = []
    for number, (a, b) in enumerate(zip(chat, messages, strict=True), start=1):
        arrow = f"{a.sender} → {a.receiver}" + ("" if (a.sender, a.receiver) == (b.sender, b.receiver) else " (!)")
        rows.append((f"#{number}", arrow, _compact(a.label, 55), _compact(b.label, 55)))
    return table(("#", "from → to", "chat completions", "messages"), rows)


def mcp_calls(trace: Trace) -> list[tuple[str, dict[str, Any]]]:
    """The ``tools/call`` requests of a trace as (name, arguments): what the MCP server was asked to do."""
    return [
        (event.payload["params"]["name"], event.payload["params"].get("arguments", {}))
        for event in trace.of_kind("jsonrpc")
        if event.sender == "client" and event.payload.get("method") == "tools/call"
    ]


# --- mcp-teach model serve, as its own process ------------------------------------------------------------------

#: The last line ``mcp-teach model serve`` prints once it listens, whole.
MODEL_SERVER_READY = re.compile(r"ANTHROPIC_BASE_URL=.*\n")


@dataclass(repr=False)
class ModelServer(PlainText):
    """``mcp-teach model serve`` running on loopback: its URLs, and :meth:`stop`. Prints without its key."""

    command: list[str]
    process: subprocess.Popen[bytes]
    stderr: IO[bytes]
    banner: str
    #: ``http://127.0.0.1:PORT/v1``: ``OPENAI_BASE_URL``.
    url: str = ""
    _finalizer: Any = field(default=None)

    def __post_init__(self) -> None:
        self.url = re.search(r"on (http://\S+)", self.banner).group(1)  # type: ignore[union-attr]
        self._finalizer = weakref.finalize(self, stop_console, self.process, self.stderr)

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``: ``ANTHROPIC_BASE_URL`` (the anthropic SDK adds ``/v1/messages`` itself)."""
        return self.url.removesuffix("/v1")

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self._finalizer()

    def text(self) -> str:
        shown = ["mcp-teach", *self.command[1:]]
        if "--api-key" in shown:
            shown[shown.index("--api-key") + 1] = REDACTED
        state = "running" if self.running else "stopped"
        return f"$ {' '.join(shown)}\n{self.banner.rstrip()}\n({state})"


def start_model_server(*, api_key: str | None = None, timeout: float = 30.0) -> ModelServer:
    """Start ``mcp-teach model serve --port 0`` (any free port) and return once it printed its URL.

    With ``api_key`` the server accepts only that key (``Authorization: Bearer`` or ``x-api-key``).
    """
    command = [console_script("mcp-teach"), "model", "serve", "--port", "0"]
    if api_key:
        command += ["--api-key", api_key]
    process, stderr, printed = start_console(command, MODEL_SERVER_READY, timeout=timeout)
    return ModelServer(command, process, stderr, printed)


# --- When the LLM cannot be used ---------------------------------------------------------------------------------

#: The question :func:`try_llm` asks by default.
QUESTION = "What is 6 times 7?"


async def try_llm(settings: Settings, question: str = QUESTION) -> str:
    """Ask ``question`` with the LLM ``settings`` choose (``llm_client``, no retries) and a calculator in memory.

    Returns the answer, or ``LLMError: <message>`` when the LLM could not be used: the message the student sees,
    without a traceback.
    """
    try:
        llm, model = llm_client(settings, max_retries=0)
        async with teaching_client(build_calculator_server()) as client:
            return (await ask_any(question, client, llm, model=model)).answer
    except LLMError as error:
        return f"LLMError: {error}"


def stand_in_app(status: int, kind: str, message: str) -> Starlette:
    """An Anthropic-compatible "provider" that answers every ``POST /v1/messages`` with one error.

    The body is Anthropic's error shape, ``{"type": "error", "error": {"type": kind, "message": message}}``
    (the offline endpoint sends the same shape, :class:`~mcp_teach.llm.anthropic_format.MessagesRejected`).
    """

    async def messages(request: Request) -> JSONResponse:
        return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status)

    return Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])


def stand_in_client(app: Starlette, base_url: str = "http://stand-in.invalid") -> Any:
    """An ``anthropic.AsyncAnthropic`` whose requests go into ``app`` in process (no retries)."""
    import anthropic

    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=base_url)
    return anthropic.AsyncAnthropic(base_url=base_url, api_key="stand-in", http_client=http, max_retries=0)


def results_table(capture: Any, requests: Sequence[Any]):
    """One row per ``tools/call`` request of ``capture``: its id, the tool, ``isError`` and the start of the text."""
    rows = []
    for request in requests:
        response = capture.response_to(request)
        result = (response.message.get("result") or {}) if response is not None else {}
        texts = [block.get("text", "") for block in result.get("content", []) if block.get("type") == "text"]
        rows.append((request.id, request.message["params"]["name"], result.get("isError"), _compact(" ".join(texts))))
    return table(("id", "tool", "isError", "content[0].text"), rows)
