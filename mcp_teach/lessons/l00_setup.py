"""The setup lesson (00): is this environment ready, does the calculator start, answer and stop on each transport,
and which terminal commands start it by hand."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

from mcp_teach.config import ConfigError, load_settings
from mcp_teach.display.show import table
from mcp_teach.wire.plain_text import PlainText

HOW = {
    "in-memory": "memory streams, no bytes",
    "stdio": "JSON lines over stdin/stdout",
    "sse": "GET event stream + POST",
    "streamable-http": "one POST per message",
}
REPORT_HEADER = ("connection", "how bytes travel", "the server", "first message", "tools", "1 + 2", "messages")


def check_environment():
    """A table of what the course needs, each with OK or what to do about it.

    It imports none of the packages it checks (a missing one is reported, not raised), nor the course's client.
    """
    rows = [("Python 3.11 or newer", "OK" if sys.version_info >= (3, 11) else "upgrade Python")]
    for module in ("fastmcp", "mcp", "openai", "ipywidgets", "matplotlib", "dotenv", "nest_asyncio"):
        rows.append((f"import {module}", "OK" if find_spec(module) else "missing: pip install -e . from the repo root"))
    try:
        settings = load_settings()
    except ConfigError as error:
        rows.append((".env", f"fix it: {error}"))
    else:
        rows.append((".env", "found" if settings.env_file else "none (defaults: everything offline)"))
        rows.append(("LLM backend (notebook 04)", settings.describe_llm()))
    return table(("check", "result"), rows)


@dataclass(frozen=True, repr=False)
class ConnectionReport(PlainText):
    """What :func:`try_connection` saw on one connection; shows as a one-row table, :func:`connection_table` joins."""

    connection: str
    server: str
    first_message: str
    tools: int
    total: Any
    messages: int

    def row(self) -> tuple[Any, ...]:
        """The report as a row of :data:`REPORT_HEADER`."""
        how = HOW[self.connection]
        return (self.connection, how, self.server, self.first_message, self.tools, self.total, self.messages)

    def text(self) -> str:
        return connection_table([self]).text()

    def _repr_html_(self) -> str:
        return connection_table([self])._repr_html_()


def _where(target: Any) -> str:
    """Where the server behind ``target`` runs, in the words of the lesson."""
    if isinstance(target, str):
        return f"uvicorn in this kernel: {target}"
    from fastmcp.client.transports import StdioTransport

    if isinstance(target, StdioTransport):
        return "a child process"
    return "an object in this kernel"


async def try_connection(connection: str) -> ConnectionReport:
    """Start a fresh calculator on ``connection``, list its tools, call ``calculator_add(1, 2)``, stop it.

    Everything happens inside this call: the server starts when the ``async with`` block opens (a child process
    for stdio, uvicorn on a free port of 127.0.0.1 for SSE and streamable HTTP) and stops when it ends.
    ``connection`` is one of :data:`mcp_teach.client.CONNECTIONS`.
    """
    from mcp_teach.client import calculator_target, teaching_client  # imported here: check_environment needs none
    from mcp_teach.wire.capture import CaptureTransport

    async with calculator_target(connection) as target:
        capture = CaptureTransport(target)
        async with teaching_client(capture) as client:
            tools = await client.list_tools()
            result = await client.call_tool("calculator_add", {"a": 1, "b": 2})
    first = capture.capture[0].method
    return ConnectionReport(connection, _where(target), first, len(tools), result.data, len(capture.capture))


def connection_table(reports: Iterable[ConnectionReport]):
    """The reports of :func:`try_connection`, one row each."""
    return table(REPORT_HEADER, [report.row() for report in reports])


def _command(arguments: list[str]) -> str:
    """A command line to paste into this platform's terminal."""
    return subprocess.list2cmdline(arguments) if sys.platform == "win32" else shlex.join(arguments)


def terminal_commands(python: str | None = None):
    """The terminal commands of the lesson with this kernel's own interpreter (``sys.executable``).

    They name the interpreter by its full path, so they work in any terminal, opened in any folder, with or
    without the virtual environment activated.
    """
    python = python or sys.executable
    rows = [
        ("stdio: type JSON-RPC lines, Ctrl-D ends", ["-m", "mcp_teach.server", "--transport", "stdio"]),
        ("streamable HTTP on http://127.0.0.1:8000/mcp", ["-m", "mcp_teach.server", "--transport", "streamable-http"]),
        ("SSE (deprecated) on http://127.0.0.1:8000/sse", ["-m", "mcp_teach.server", "--transport", "sse"]),
    ]
    return table(("to start", "paste into a terminal"), [(what, _command([python, *args])) for what, args in rows])
