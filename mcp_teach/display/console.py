"""Lesson 05's two terminals as real processes: the command-line server (terminal A) and a client command (B).

:func:`start_terminal_server` starts ``mcp-teach serve`` and returns once it printed its URL; the server
runs until :meth:`TerminalServer.stop` (what Ctrl-C in terminal A does), so starting it, using it and
stopping it can be three steps, one cell each. :func:`start_console` and :class:`TerminalServer` serve lesson 11 too.
:func:`run_command` runs a command as terminal B would and returns a plain-text transcript.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mcp_teach.wire.plain_text import PlainText


def console_script(name: str) -> str:
    """The path of an installed console script (``mcp-teach``, ``fastmcp``) next to this Python, else on PATH."""
    folders = (Path(sys.executable).parent, Path(sys.prefix) / "Scripts", Path(sys.prefix) / "bin")
    found = next(filter(None, (shutil.which(name, path=str(folder)) for folder in folders)), None) or shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"the {name!r} command is not installed in this environment")
    return found


_QUIET_ENV = {"NO_COLOR": "1", "TERM": "dumb", "FASTMCP_CHECK_FOR_UPDATES": "off", "COLUMNS": "100"}
# A Jupyter kernel sets these so that programs colour their output; a terminal transcript should not.
_COLOUR_FORCING = frozenset({"FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "TTY_COMPATIBLE"})
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: How long a stopped server may take to exit before it is killed (about a second; several on a busy machine).
STOP_SECONDS = 30.0
#: How long a server may take to print that it is ready (a few seconds; far longer on a busy machine): only a
#: server that neither prints nor exits waits this long, one that fails to start is reported when it exits.
START_SECONDS = 120.0
#: The line ``mcp-teach serve`` prints once it listens, whole.
SERVING_LINE = re.compile(r"on http://\S+.*\n")


def plain_environment() -> dict[str, str]:
    """This process's environment for a child whose output should be plain text (no colours, no update checks)."""
    return {**{name: value for name, value in os.environ.items() if name not in _COLOUR_FORCING}, **_QUIET_ENV}


def shown_command(args: Sequence[str], width: int = 100) -> str:
    """``args`` as typed in a terminal; a long command is broken before each option, as ``\\`` continuations."""
    line = shlex.join(args)
    if len(line) <= width:
        return line
    continued = ((" \\\n    " if arg.startswith("-") else " ") + shlex.quote(arg) for arg in args[1:])
    return shlex.quote(args[0]) + "".join(continued)


def stop_console(process: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
    """Stop ``process`` with what Ctrl-C sends (SIGINT; Windows: terminate it); kill it if it hangs."""
    if process.poll() is None:
        if os.name == "posix":
            process.send_signal(signal.SIGINT)
        else:
            process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    stderr.close()


def _command_name(command: Sequence[str]) -> str:
    """``mcp-teach model serve``: the words before the first option (option values may be keys)."""
    words = [Path(command[0]).name, *itertools.takewhile(lambda word: not word.startswith("-"), command[1:])]
    return " ".join(words)


def printed_so_far(stderr: IO[bytes]) -> str:
    """What the process has written to ``stderr`` so far.

    Read at explicit offsets (``os.pread``), not after a ``seek``: the process writes through the same open file,
    whose offset both share, so a seek to the start would make its next write land there, over what it had
    written before (seen once as a banner with its first words gone).
    """
    if not hasattr(os, "pread"):  # Windows: no shared-offset reads; the race stays possible there
        stderr.seek(0)
        return stderr.read().decode("utf-8", "replace")
    return os.pread(stderr.fileno(), os.fstat(stderr.fileno()).st_size, 0).decode("utf-8", "replace")


def start_console(
    command: Sequence[str],
    ready: re.Pattern[str],
    *,
    timeout: float = START_SECONDS,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], IO[bytes], str]:
    """Start ``command`` as its own process, as typed in a terminal (in ``cwd``, with ``env`` added to this
    process's environment); return once its stderr holds ``ready``.

    Returns the process, its stderr (a temporary file, closed by :func:`stop_console`) and what it printed.
    ``ready`` should match through the end of a line: a read may catch a line half-written.
    """
    stderr = tempfile.TemporaryFile()  # noqa: SIM115  (closed by stop_console)
    environment = {**plain_environment(), **(env or {})}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=environment, cwd=cwd)
    deadline = time.monotonic() + timeout
    try:
        while True:
            printed = printed_so_far(stderr)
            if ready.search(printed):
                return process, stderr, printed
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{_command_name(command)} did not start: {printed.strip() or 'no output'}")
            time.sleep(0.02)
    except BaseException:
        stop_console(process, stderr)
        raise


class TerminalServer(PlainText):
    """A server started as in terminal A: its URL, the line it printed, and how to stop it.

    Forgotten, it is still stopped when this object is collected or the kernel exits.
    """

    def __init__(self, command: str, process: subprocess.Popen[bytes], stderr: IO[bytes], banner: str):
        #: The command as typed (``mcp-teach serve ...``), safe to show.
        self.command = command
        self.banner = banner
        found = re.search(r"on (http://\S+)", banner)
        self.url = found.group(1) if found else ""
        self._process = process
        self._stderr = stderr
        self._finalizer = weakref.finalize(self, stop_console, process, stderr)

    @property
    def running(self) -> bool:
        return self._process.poll() is None

    def stop(self) -> PlainText:
        """Stop the server (Ctrl-C in terminal A) and return terminal A's whole transcript."""
        printed = printed_so_far(self._stderr)
        self._finalizer()
        ending = f"^C\n(stopped, exit code {self._process.returncode})"
        return CommandResult(self.command, f"{printed.rstrip()}\n{ending}", 0)

    def text(self) -> str:
        state = "running" if self.running else f"stopped, exit code {self._process.returncode}"
        return f"terminal A: $ {self.command}\n{self.banner}\n({state})"


def start_terminal_server(transport: str, *, port: int = 0, timeout: float = START_SECONDS) -> TerminalServer:
    """Start ``mcp-teach serve --transport TRANSPORT --port PORT`` as its own process, as in terminal A.

    Returns once the server printed the URL it listens on (port 0: any free port, so it cannot clash with a
    server you started yourself). Stop it with :meth:`TerminalServer.stop`.
    """
    command = [console_script("mcp-teach"), "serve", "--transport", transport, "--port", str(port)]
    process, stderr, printed = start_console(command, SERVING_LINE, timeout=timeout)
    return TerminalServer(shown_command(["mcp-teach", *command[1:]]), process, stderr, printed.splitlines()[0])


@dataclass(frozen=True, repr=False)
class CommandResult(PlainText):
    """A command as typed in a terminal, what it printed (stdout, then stderr) and its exit code."""

    command: str
    output: str
    returncode: int

    def text(self) -> str:
        code = "" if self.returncode == 0 else f"\n(exit code {self.returncode})"
        return f"$ {self.command}\n{self.output.rstrip()}{code}"


def run_command(args: Sequence[str], *, timeout: float = 120.0) -> CommandResult:
    """Run a command (``args[0]``: a console script of this environment, e.g. ``fastmcp``, or one on PATH, e.g.
    ``curl``) as terminal B would."""
    command = [console_script(args[0]), *args[1:]]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=plain_environment())
    output = _ANSI.sub("", completed.stdout + completed.stderr)
    return CommandResult(shown_command(args), output, completed.returncode)
