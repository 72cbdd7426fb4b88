"""``mcp-teach tap --out FILE -- COMMAND...``: record what any host says to a stdio server.

A host (Claude Desktop, VS Code, an agent) starts a stdio server as a command. Put the tap in front
of that command and the host starts the tap instead; the tap starts the server and relays its three
pipes byte for byte (JSON-RPC client → server on the server's stdin, server → client on its stdout,
logs on its stderr), writing one record per line to ``FILE``::

    {"type": "jsonrpc", "time": "2026-…+00:00", "at": 0.0123, "direction": "client->server", "message": {…}}

A line that is not JSON is kept as ``{"type": "raw", …, "direction": …, "text": "…"}`` (exact, undecodable
bytes as ``\\udcXX``), a log line on stderr as ``{"type": "stderr", …, "text": "…"}``, and the server's exit
as ``{"type": "exit", …, "code": N}``. Credentials are redacted in the recording, never on the wire
(:mod:`mcp_teach.wire.redact`): in messages, lines and stderr, and in the recorded command line
(``--api-key V``, ``--token=V``, ``-k V``, ``OPENAI_API_KEY=…``); a private key printed on stderr is hidden line
by line. A line over :data:`~mcp_teach.wire.host_tap_writer.RECORD_LIMIT` is cut in its record (``truncated_from``
says its size).
:func:`mcp_teach.wire.host_tap_recording.load_tap` opens the file as a ``Capture``.

Standard library only (plus the course's standard-library modules): a host starts this per connection.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Literal

from mcp_teach.wire.host_tap_writer import RECORD_LIMIT, TapWriter, capped
from mcp_teach.wire.redact import PEM_BEGIN, PEM_END, REDACTED, redact_argv, redact_json, redact_text

Stream = Literal["stdin", "stdout", "stderr"]
#: The relay's pipe names as the directions a ``Capture`` uses.
DIRECTIONS = {"stdin": "client->server", "stdout": "server->client"}
#: Exit code when the server command cannot be started (as a shell reports "command not found").
CANNOT_START = 127
#: How long the tap still relays the server's output after the server has exited.
OUTPUT_GRACE_SECONDS = 2.0
#: How long a server may keep running after its client closed stdin before the tap stops it.
INPUT_GRACE_SECONDS = 5.0


class MessageRecorder:
    """Turns the relay's lines into records: a JSON-RPC message, a raw line, or a log line."""

    def __init__(self, writer: TapWriter) -> None:
        self._writer = writer
        self._in_private_key = False

    def record(self, stream: Stream, line: bytes) -> None:
        """One line: a line too long for a record is kept as a cut ``raw`` one, even if it is JSON."""
        if stream == "stderr":
            record = capped("text", line, self._log_line, errors="surrogateescape")
            self._writer.write("stderr", ascii_only=True, **record)
            return
        try:
            message = json.loads(line) if len(line) <= RECORD_LIMIT else None
        except ValueError:  # not JSON, or not UTF-8
            message = None
        if isinstance(message, dict | list):  # an object, or a batch
            self._writer.write("jsonrpc", direction=DIRECTIONS[stream], message=redact_json(message))
        else:
            record = capped("text", line, redact_text, errors="surrogateescape")
            self._writer.write("raw", ascii_only=True, direction=DIRECTIONS[stream], **record)

    def _log_line(self, text: str) -> str:
        """``text`` redacted; the lines of a private key (one record each on stderr) all become ``[REDACTED]``."""
        if self._in_private_key:
            self._in_private_key = PEM_END.search(text) is None
            return REDACTED + "\n"
        self._in_private_key = PEM_BEGIN.search(text) is not None and PEM_END.search(text) is None
        return redact_text(text)


def _relay(source: IO[bytes], target: IO[bytes], stream: Stream, recorder: MessageRecorder) -> None:
    """Copy ``source`` to ``target`` line by line, recording each line before forwarding it."""
    try:
        for line in iter(source.readline, b""):
            recorder.record(stream, line)
            target.write(line)
            target.flush()
    except (BrokenPipeError, ValueError, OSError):
        if stream == "stdout":  # the client stopped reading: the server's next write fails, and it ends
            with contextlib.suppress(OSError):
                source.close()
    finally:
        if stream == "stdin":  # the client closed the server's stdin: pass the end of input on
            with contextlib.suppress(OSError):
                target.close()


def _end_after_input(stdin_relay: threading.Thread, server: subprocess.Popen, signal_server) -> None:
    """Once the client has closed the server's stdin, give the server a moment to exit, then stop it.

    The sequence the MCP specification asks a stdio client for (close stdin, SIGTERM, SIGKILL), so the tap ends
    when its client does even in front of a server that ignores the end of its input.
    """
    stdin_relay.join()
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            server.wait(INPUT_GRACE_SECONDS)
            return
        except subprocess.TimeoutExpired:
            signal_server(signum, None)


def _relay_server(command: list[str], recorder: MessageRecorder) -> int:
    """Run ``command`` with its three pipes relayed through ``recorder``; return its exit code.

    SIGTERM and SIGINT are passed on to the server (its whole process group, so a launcher such as
    ``npx`` takes its child with it) and the server is reaped before this returns: no process is left behind.
    """
    started: list[subprocess.Popen] = []
    early: list[int] = []  # signals that came before the server existed

    def forward(signum: int, frame: object) -> None:
        if not started:
            early.append(signum)
            return
        with contextlib.suppress(OSError):  # already gone
            os.killpg(started[0].pid, signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, forward)
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    started.append(server)
    for signum in early:
        forward(signum, None)
    # Not sys.stdin.buffer: the interpreter closes that one on exit and would wait for the lock the relay, still
    # reading from a client that has not closed, holds ("could not acquire lock ... at interpreter shutdown").
    client_input = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115  (lives as long as the relay)
    relays = [
        threading.Thread(target=_relay, args=(client_input, server.stdin, "stdin", recorder), daemon=True),
        threading.Thread(target=_relay, args=(server.stdout, sys.stdout.buffer, "stdout", recorder), daemon=True),
        threading.Thread(target=_relay, args=(server.stderr, sys.stderr.buffer, "stderr", recorder), daemon=True),
    ]
    for relay in relays:
        relay.start()
    threading.Thread(target=_end_after_input, args=(relays[0], server, forward), daemon=True).start()
    code = server.wait()
    for relay in relays[1:]:  # the server's output ends with it (unless a child of its own still holds the pipe)
        relay.join(OUTPUT_GRACE_SECONDS)
    return 128 - code if code < 0 else code  # killed by signal N (-N from Popen): the shell's 128 + N


def run_stdio_tap(out: Path, command: list[str]) -> int:
    """Run ``command`` behind the tap, recording into ``out``; return the server's exit code."""
    writer = TapWriter(out, transport="stdio", command=redact_argv(command))
    try:
        code = _relay_server(command, MessageRecorder(writer))
    except OSError as error:  # no such command, not executable
        print(f"mcp-teach tap: cannot start {command[0]!r}: {error.strerror or error}", file=sys.stderr)
        writer.write("exit", code=CANNOT_START, error=str(error))
        code = CANNOT_START
    else:
        writer.write("exit", code=code)
    writer.close()
    return code
