"""The course in a terminal: ``mcp-teach demo`` (the whole tour) and ``mcp-teach chat``."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from mcp_teach.client import Connection, calculator_target, teaching_client
from mcp_teach.config import TOKEN_VARIABLE, Settings
from mcp_teach.display.show import show
from mcp_teach.llm.errors import LLMError
from mcp_teach.llm.loop import ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.llm.trace import TraceEvent
from mcp_teach.wire.capture import CaptureTransport

LEAVE = frozenset({"exit", "quit", "bye", "退出"})


def _heading(text: str, write: Callable[[str], None]) -> None:
    write(f"\n=== {text} {'=' * max(0, 70 - len(text))}")


@contextlib.asynccontextmanager
async def _server(connection: Connection, url: str | None, token: str | None) -> AsyncIterator[tuple[Any, str, Any]]:
    """The server to talk to, how to name it and the ``auth`` to connect with.

    A running one at ``url`` (sent the class ``token`` if there is one), else a fresh calculator.
    """
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)  # an in-memory server would log into this terminal
    if url:
        sent = f", sending the class token from {TOKEN_VARIABLE}" if token else ""
        yield url, f"the server at {url}{sent}", token
    else:
        async with calculator_target(connection) as target:
            yield target, f"a calculator over {connection}", None


async def run_demo(
    settings: Settings, connection: Connection, question: str, write: Callable[[str], None], url: str | None = None
) -> None:
    """Handshake, tools/list, tools/call and one question through the LLM loop, printing every message."""
    llm, model = openai_client(settings), model_name(settings)
    async with llm, _server(connection, url, settings.mcp_auth_token) as (target, name, auth):
        write(f"Talking to {name}; LLM: {settings.describe_llm()}")
        capture = CaptureTransport(target)
        async with teaching_client(capture, auth=auth) as client:
            _heading("1. Connecting (the first messages of every session)", write)
            write(show(capture, expand=True).text())
            capture.capture.clear()
            _heading("2. tools/list: which tools are there?", write)
            await client.list_tools()
            write(show(capture, expand=True, fold=["result.tools.*.inputSchema", "result.tools.*.outputSchema"]).text())
            capture.capture.clear()
            _heading("3. tools/call: calculator_add(a=1, b=2)", write)
            await client.call_tool("calculator_add", {"a": 1, "b": 2})
            write(show(capture, expand=True).text())
            capture.capture.clear()
            _heading(f"4. The LLM tool loop: {question!r}", write)
            result = await ask(question, client, llm, model=model, max_rounds=settings.llm_max_tool_rounds)
            write(result.trace.text())
            _heading("   ... and the MCP messages of that loop", write)
            write(show(capture, expand=True, methods=["tools/call"]).text())
            _heading("Answer", write)
            write(result.answer)


def _live(write: Callable[[str], None]) -> Callable[[TraceEvent], None]:
    def on_event(event: TraceEvent) -> None:
        if event.kind == "llm-response" and event.label.startswith("tool_calls"):
            write(f"  [model → {event.label}]")

    return on_event


async def run_chat(
    settings: Settings,
    connection: Connection,
    read: Callable[[str], str],
    write: Callable[[str], None],
    url: str | None = None,
) -> None:
    """Ask questions until ``exit``; each tool call is shown as it happens."""
    llm, model = openai_client(settings), model_name(settings)
    server = _server(connection, url, settings.mcp_auth_token)
    async with llm, server as (target, name, auth), teaching_client(target, auth=auth) as client:
        write(f"Talking to {name}; LLM: {settings.describe_llm()}")
        write("Ask a question (e.g. 'What is 1 + 2?' or '帮我算 3 乘 4'); type exit to leave.")
        while True:
            try:
                question = read("you> ").strip()
            except EOFError:
                write("")
                return
            if question.lower() in LEAVE:
                return
            if not question:
                continue
            try:
                result = await ask(
                    question, client, llm, model=model, max_rounds=settings.llm_max_tool_rounds, on_event=_live(write)
                )
            except LLMError as error:
                write(f"error> {error}")
                continue
            write(f"assistant> {result.answer}")
