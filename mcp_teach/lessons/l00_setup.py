"""The checks of the setup lesson: is this environment ready, does each transport work?"""

from __future__ import annotations

import sys
from importlib.util import find_spec
from typing import Any

from mcp_teach.client import CONNECTIONS, Connection, calculator_target, teaching_client
from mcp_teach.config import ConfigError, load_settings
from mcp_teach.display.show import table
from mcp_teach.wire.capture import CaptureTransport

HOW = {
    "in-memory": "server object in this kernel, no I/O",
    "stdio": "subprocess, JSON lines over stdin/stdout",
    "sse": "HTTP: GET event stream + POST messages",
    "streamable-http": "HTTP: POST per message",
}


def check_environment():
    """A table of what the course needs, each with OK or what to do about it."""
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


async def try_connection(connection: Connection) -> tuple[Any, ...]:
    """Start the calculator on ``connection``, call ``calculator_add(1, 2)``, stop it; report what happened."""
    async with calculator_target(connection) as target:
        capture = CaptureTransport(target)
        async with teaching_client(capture) as client:
            tools = await client.list_tools()
            result = await client.call_tool("calculator_add", {"a": 1, "b": 2})
    first = capture.capture[0].method
    return (connection, HOW[connection], first, len(tools), result.data, len(capture.capture))


async def try_all_connections():
    """:func:`try_connection` for every way of connecting, as one table."""
    rows = [await try_connection(connection) for connection in CONNECTIONS]
    return table(("connection", "how bytes travel", "first message", "tools", "1 + 2", "messages"), rows)
