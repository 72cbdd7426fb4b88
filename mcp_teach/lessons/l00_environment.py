"""The setup lesson (00): is this environment ready, and which terminal commands start the calculator by hand."""

from __future__ import annotations

import shlex
import subprocess
import sys
from importlib.util import find_spec

from mcp_teach.config import ConfigError, load_settings
from mcp_teach.display.show import table


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
        ("stdio (Ctrl-D ends)", ["-m", "mcp_teach.serve", "--transport", "stdio"]),
        ("streamable HTTP, :8000/mcp", ["-m", "mcp_teach.serve", "--transport", "streamable-http"]),
        ("SSE (deprecated), :8000/sse", ["-m", "mcp_teach.serve", "--transport", "sse"]),
    ]
    return table(("to start", "paste into a terminal"), [(what, _command([python, *args])) for what, args in rows])
