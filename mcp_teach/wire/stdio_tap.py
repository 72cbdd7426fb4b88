"""Record the exact bytes on the three pipes of a stdio MCP connection.

A stdio client starts the server as a subprocess and talks to it over pipes:
JSON-RPC goes client → server on the server's **stdin** and server → client on
its **stdout**, one message per line; the server's **stderr** is free for logs.
The tap is a tiny relay process placed between the two::

    client  ──stdin──▶  python -m mcp_teach.wire.stdio_tap TAP_FILE -- <server command>  ──stdin──▶  server
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
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

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
CALCULATOR_COMMAND = (sys.executable, "-m", "mcp_teach.server", "--transport", "stdio")
# Rich's log handler starts a record with the date and time, "[MM/DD/YY HH:MM:SS]" in the C locale;
# lessons show it without them.
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
        ["-m", "mcp_teach.wire.stdio_tap", str(tap_file), "--", *command],
        log_file=log_file or bounded_log(),
        keep_alive=False,
    )


class _Recorder:
    """Appends lines to the tap file; one lock keeps records whole across the three relay threads."""

    def __init__(self, path: Path) -> None:
        self._out = Path(path).open("ab")  # noqa: SIM115  (open for the relay's lifetime, closed in close())
        self._lock = threading.Lock()

    def record(self, stream: Stream, line: bytes) -> None:
        row = json.dumps({"stream": stream, "data": base64.b64encode(line).decode("ascii")})
        with self._lock:
            self._out.write(row.encode("ascii") + b"\n")
            self._out.flush()

    def close(self) -> None:
        with self._lock:
            self._out.close()


def _relay(source: IO[bytes], target: IO[bytes], stream: Stream, recorder: _Recorder) -> None:
    """Copy ``source`` to ``target`` line by line, recording each line before forwarding it."""
    try:
        for line in iter(source.readline, b""):
            recorder.record(stream, line)
            target.write(line)
            target.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass  # the other side went away: nothing left to forward
    finally:
        if stream == "stdin":  # the client closed the server's stdin: pass the end of input on
            with contextlib.suppress(OSError):
                target.close()


def run_tap(tap_file: Path, command: list[str]) -> int:
    """Run ``command`` with its three pipes relayed through the tap; return its exit code."""
    recorder = _Recorder(tap_file)
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    signal.signal(signal.SIGTERM, lambda signum, frame: server.terminate())
    relays = [
        threading.Thread(target=_relay, args=(sys.stdin.buffer, server.stdin, "stdin", recorder), daemon=True),
        threading.Thread(target=_relay, args=(server.stdout, sys.stdout.buffer, "stdout", recorder)),
        threading.Thread(target=_relay, args=(server.stderr, sys.stderr.buffer, "stderr", recorder)),
    ]
    for relay in relays:
        relay.start()
    code = server.wait()
    for relay in relays[1:]:  # the server's output ends with it; the client's stdin may stay open
        relay.join()
    recorder.close()
    return code


def main(argv: list[str] | None = None) -> int:
    """``python -m mcp_teach.wire.stdio_tap TAP_FILE -- COMMAND...``"""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3 or args[1] != "--":
        print("usage: python -m mcp_teach.wire.stdio_tap TAP_FILE -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    return run_tap(Path(args[0]), args[2:])


if __name__ == "__main__":
    sys.exit(main())
