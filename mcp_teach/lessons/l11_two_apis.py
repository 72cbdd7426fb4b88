"""Lesson 11: ``mcp-teach model serve`` as a real process on loopback (both LLM APIs on one port).

The lesson's cells hold everything else (the Messages format, the recordings, the stand-in providers); process
management is plumbing. A :class:`ModelServer` prints its command line and banner without its key.
"""

from __future__ import annotations

import re
import textwrap

from mcp_teach.display.console import START_SECONDS, TerminalServer, console_script, start_console
from mcp_teach.wire.redact import REDACTED

#: The last line ``mcp-teach model serve`` prints once it listens, whole.
MODEL_SERVER_READY = re.compile(r"ANTHROPIC_BASE_URL=.*\n")


class ModelServer(TerminalServer):
    """``mcp-teach model serve`` running on loopback; :attr:`url` (``http://127.0.0.1:PORT/v1``) is
    ``OPENAI_BASE_URL``. Prints without its key."""

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``: ``ANTHROPIC_BASE_URL`` (the anthropic SDK adds ``/v1/messages`` itself)."""
        return self.url.removesuffix("/v1")

    def text(self) -> str:
        banner = "\n".join(
            textwrap.fill(line, 116, subsequent_indent="    ") for line in self.banner.rstrip().splitlines()
        )
        return f"$ {self.command}\n{banner}\n({'running' if self.running else 'stopped'})"


def start_model_server(*, api_key: str | None = None, timeout: float = START_SECONDS) -> ModelServer:
    """Start ``mcp-teach model serve --port 0`` (any free port) and return once it printed its URL.

    With ``api_key`` the server accepts only that key (``Authorization: Bearer`` or ``x-api-key``).
    """
    command = [console_script("mcp-teach"), "model", "serve", "--port", "0"]
    shown = ["mcp-teach", *command[1:]]
    if api_key:
        command += ["--api-key", api_key]
        shown += ["--api-key", REDACTED]
    process, stderr, printed = start_console(command, MODEL_SERVER_READY, timeout=timeout)
    return ModelServer(" ".join(shown), process, stderr, printed)
