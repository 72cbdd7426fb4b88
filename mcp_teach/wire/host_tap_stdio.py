"""``mcp-teach tap --out FILE -- COMMAND...``: record what any host says to a stdio server.

A host (Claude Desktop, VS Code, an agent) starts a stdio server as a command. Put the tap in front
of that command and the host starts the tap instead; the tap starts the server and relays its pipes
byte for byte (the relay of :mod:`mcp_teach.wire.stdio_bytes`, lesson 05's), writing one record per
message to ``FILE``::

    {"type": "jsonrpc", "time": "2026-…+00:00", "at": 0.0123, "direction": "client->server", "message": {…}}

A line that is not JSON is kept as ``{"type": "raw", …, "direction": …, "text": "…"}`` (exact, undecodable
bytes as ``\\udcXX``), a log line on stderr as ``{"type": "stderr", …, "text": "…"}``, and the server's exit
as ``{"type": "exit", …, "code": N}``. Credentials are redacted in the recording, never on the wire
(:mod:`mcp_teach.wire.redact`): in messages, lines and stderr, and in the recorded command line
(``--api-key V``, ``--token=V``, ``OPENAI_API_KEY=…``); a private key printed on stderr is hidden line by line.
:func:`mcp_teach.wire.host_tap_recording.load_tap` opens the file as a ``Capture``.

Standard library only (plus the course's standard-library modules): a host starts this per connection.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_teach.wire.host_tap_writer import TapWriter
from mcp_teach.wire.redact import PEM_BEGIN, PEM_END, REDACTED, redact_argv, redact_json, redact_text
from mcp_teach.wire.stdio_bytes import Stream, run_tap

#: The relay's pipe names as the directions a ``Capture`` uses.
DIRECTIONS = {"stdin": "client->server", "stdout": "server->client"}
#: Exit code when the server command cannot be started (as a shell reports "command not found").
CANNOT_START = 127


class MessageRecorder:
    """Turns the relay's lines into records: a JSON-RPC message, a raw line, or a log line."""

    def __init__(self, writer: TapWriter) -> None:
        self._writer = writer
        self._in_private_key = False

    def record(self, stream: Stream, line: bytes) -> None:
        text = line.decode("utf-8", "surrogateescape")
        if stream == "stderr":
            self._writer.write("stderr", ascii_only=True, text=self._log_line(text))
            return
        try:
            message = json.loads(line)
        except ValueError:  # not JSON, or not UTF-8
            message = None
        if isinstance(message, dict | list):  # an object, or a batch
            self._writer.write("jsonrpc", direction=DIRECTIONS[stream], message=redact_json(message))
        else:
            self._writer.write("raw", ascii_only=True, direction=DIRECTIONS[stream], text=redact_text(text))

    def _log_line(self, text: str) -> str:
        """``text`` redacted; the lines of a private key (one record each on stderr) all become ``[REDACTED]``."""
        if self._in_private_key:
            self._in_private_key = PEM_END.search(text) is None
            return REDACTED + "\n"
        self._in_private_key = PEM_BEGIN.search(text) is not None and PEM_END.search(text) is None
        return redact_text(text)

    def close(self) -> None:
        """Nothing to do: :func:`run_stdio_tap` writes the exit record, then closes the file."""


def run_stdio_tap(out: Path, command: list[str]) -> int:
    """Run ``command`` behind the tap, recording into ``out``; return the server's exit code."""
    writer = TapWriter(out, transport="stdio", command=redact_argv(command))
    try:
        code = run_tap(out, command, recorder=MessageRecorder(writer))
    except OSError as error:  # no such command, not executable
        print(f"mcp-teach tap: cannot start {command[0]!r}: {error.strerror or error}", file=sys.stderr)
        writer.write("exit", code=CANNOT_START, error=str(error))
        code = CANNOT_START
    else:
        writer.write("exit", code=code)
    writer.close()
    return code
