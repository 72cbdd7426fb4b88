"""Lesson 11: ``mcp-teach model serve`` as a real process on loopback (both LLM APIs on one port).

The lesson's cells hold everything else (the Messages format, the recordings, the stand-in providers); process
management is plumbing. A :class:`ModelServer` prints its command line and banner without its key.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
import weakref
from dataclasses import dataclass, field
from typing import IO, Any

from mcp_teach.display.console import console_script, start_console, stop_console
from mcp_teach.wire.plain_text import PlainText
from mcp_teach.wire.redact import REDACTED

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
        banner = "\n".join(
            textwrap.fill(line, 116, subsequent_indent="    ") for line in self.banner.rstrip().splitlines()
        )
        return f"$ {' '.join(shown)}\n{banner}\n({state})"


def start_model_server(*, api_key: str | None = None, timeout: float = 30.0) -> ModelServer:
    """Start ``mcp-teach model serve --port 0`` (any free port) and return once it printed its URL.

    With ``api_key`` the server accepts only that key (``Authorization: Bearer`` or ``x-api-key``).
    """
    command = [console_script("mcp-teach"), "model", "serve", "--port", "0"]
    if api_key:
        command += ["--api-key", api_key]
    process, stderr, printed = start_console(command, MODEL_SERVER_READY, timeout=timeout)
    return ModelServer(command, process, stderr, printed)
