"""Record the exact bytes on the three pipes of a stdio MCP connection.

A stdio client starts the server as a subprocess and talks to it over pipes:
JSON-RPC goes client → server on the server's **stdin** and server → client on
its **stdout**, one message per line; the server's **stderr** is free for logs.
The tap is a tiny relay process placed between the two::

    client  ──stdin──▶  python -m mcp_teach.wire.stdio_bytes TAP_FILE -- <server command>  ──stdin──▶  server
            ◀─stdout──                                                          ◀─stdout──
                                                                                ◀─stderr──

It forwards every line unchanged and appends it, byte for byte, to ``TAP_FILE``
(JSON Lines: ``{"stream": "stdin"|"stdout"|"stderr", "data": "<base64>"}``).
:func:`tapped_stdio_transport` builds a fastmcp transport that runs the
calculator behind the tap; :func:`read_tap` loads what was recorded.

This module imports only the standard library at the top, so the relay starts fast.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal, Protocol

from mcp_teach.private_files import open_private

if TYPE_CHECKING:
    from fastmcp.client.transports import StdioTransport

Stream = Literal["stdin", "stdout", "stderr"]
#: Which way each pipe carries bytes.
STREAM_DIRECTIONS: dict[Stream, str] = {
    "stdin": "client → server",
    "stdout": "server → client",
    "stderr": "server → log",
}
#: The command the tap runs by default: the course's calculator over stdio.
CALCULATOR_COMMAND = (sys.executable, "-m", "mcp_teach.serve", "--transport", "stdio")
# Rich's log handler starts a record with the date and time, "[MM/DD/YY HH:MM:SS]" in the C locale;
# lessons show it without them.
#: How long the tap still relays the server's output after the server has exited.
OUTPUT_GRACE_SECONDS = 2.0
#: How long a server may keep running after its client closed stdin before the tap stops it.
INPUT_GRACE_SECONDS = 5.0
_LOG_TIME = re.compile(r"^\[[^\]\n]*\d\d:\d\d:\d\d[^\]\n]*\]")


@dataclass(frozen=True)
class TappedLine:
    """One line that crossed a pipe, exactly as sent (including its ``\\n``)."""

    stream: Stream
    data: bytes

    @property
    def direction(self) -> str:
        """``client → server``, ``server → client`` or ``server → log``."""
        return STREAM_DIRECTIONS[self.stream]

    @property
    def text(self) -> str:
        """The line decoded, without its line ending; a log line's timestamp becomes ``[time]``."""
        text = self.data.decode("utf-8", "replace").rstrip("\r\n")
        return _LOG_TIME.sub("[time]", text).rstrip() if self.stream == "stderr" else text

    def json(self) -> dict:
        """The JSON-RPC message on this line (stdin/stdout lines only)."""
        return json.loads(self.data)


def read_tap(path: Path) -> list[TappedLine]:
    """The lines a tap recorded in ``path``, in the order the relay saw them."""
    lines = []
    for row in Path(path).read_text(encoding="utf-8").splitlines():
        if row.strip():
            record = json.loads(row)
            lines.append(TappedLine(record["stream"], base64.b64decode(record["data"])))
    return lines


def tapped_stdio_transport(
    tap_file: Path,
    *,
    command: tuple[str, ...] = CALCULATOR_COMMAND,
    log_file: Path | None = None,
) -> StdioTransport:
    """A fastmcp stdio transport whose server runs behind the tap, recording into ``tap_file``.

    Like :func:`mcp_teach.transports.in_process.stdio_transport`: a fresh server per
    ``async with``, stderr (after the tap has recorded it) written to ``log_file``.
    """
    from fastmcp.client.transports import StdioTransport

    from mcp_teach.transports.in_process import bounded_log

    return StdioTransport(
        sys.executable,
        ["-m", "mcp_teach.wire.stdio_bytes", str(tap_file), "--", *command],
        log_file=log_file or bounded_log(),
        keep_alive=False,
    )


class LineRecorder(Protocol):
    """What the relay hands every line to: this module's base64 recorder, or ``host_tap_stdio``'s message recorder."""

    def record(self, stream: Stream, line: bytes) -> None: ...

    def close(self) -> None: ...


class _Recorder:
    """Appends lines to the tap file; one lock keeps records whole across the three relay threads."""

    def __init__(self, path: Path) -> None:
        self._out = open_private(path)
        self._lock = threading.Lock()

    def record(self, stream: Stream, line: bytes) -> None:
        row = json.dumps({"stream": stream, "data": base64.b64encode(line).decode("ascii")})
        with self._lock:
            self._out.write(row.encode("ascii") + b"\n")
            self._out.flush()

    def close(self) -> None:
        with self._lock:
            self._out.close()


def _relay(source: IO[bytes], target: IO[bytes], stream: Stream, recorder: LineRecorder) -> None:
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


def _exit_code(returncode: int) -> int:
    """The server's exit code; killed by signal N (``-N`` from Popen), the shell's ``128 + N``."""
    return 128 - returncode if returncode < 0 else returncode


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


def run_tap(tap_file: Path, command: list[str], *, recorder: LineRecorder | None = None) -> int:
    """Run ``command`` with its three pipes relayed through the tap; return its exit code.

    SIGTERM and SIGINT are passed on to the server (its whole process group, so a launcher such as
    ``npx`` takes its child with it) and the server is reaped before this returns: no process is left behind.
    """
    recorder = recorder or _Recorder(tap_file)
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
    recorder.close()
    return _exit_code(code)


def main(argv: list[str] | None = None) -> int:
    """``python -m mcp_teach.wire.stdio_bytes TAP_FILE -- COMMAND...``"""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3 or args[1] != "--":
        print("usage: python -m mcp_teach.wire.stdio_bytes TAP_FILE -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    return run_tap(Path(args[0]), args[2:])


if __name__ == "__main__":
    sys.exit(main())
