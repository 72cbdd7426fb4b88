"""Lesson 05's two terminals as real processes: the command-line server (terminal A) and a client command (B).

:func:`terminal_server` runs ``mcp-teach serve`` until the block ends; :func:`run_command` runs a
console script and returns a plain-text transcript.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_teach.wire.plain_text import PlainText


def console_script(name: str) -> str:
    """The path of an installed console script (``mcp-teach``, ``fastmcp``) next to this Python."""
    for folder in (Path(sys.executable).parent, Path(sys.prefix) / "Scripts", Path(sys.prefix) / "bin"):
        found = shutil.which(name, path=str(folder))
        if found:
            return found
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"the {name!r} command is not installed in this environment")
    return found


_QUIET_ENV = {"NO_COLOR": "1", "TERM": "dumb", "FASTMCP_CHECK_FOR_UPDATES": "off", "COLUMNS": "100"}
# A Jupyter kernel sets these so that programs colour their output; a terminal transcript should not.
_COLOUR_FORCING = frozenset({"FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "TTY_COMPATIBLE"})
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain_environment() -> dict[str, str]:
    """This process's environment for a child whose output should be plain text (no colours, no update checks)."""
    env = {name: value for name, value in os.environ.items() if name not in _COLOUR_FORCING}
    return {**env, **_QUIET_ENV}


@dataclass(frozen=True)
class TerminalServer:
    """A server started as in terminal A: its URL and the line it printed."""

    url: str
    banner: str


@contextlib.contextmanager
def terminal_server(transport: str, *, port: int = 0, timeout: float = 30.0) -> Iterator[TerminalServer]:
    """Run ``mcp-teach serve --transport TRANSPORT --port PORT`` as its own process until the block ends.

    Yields once the server printed the URL it listens on (port 0: any free
    port); stops it the way Ctrl-C would (SIGTERM, which it handles cleanly).
    """
    command = [console_script("mcp-teach"), "serve", "--transport", transport, "--port", str(port)]
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=plain_environment())
        try:
            deadline = time.monotonic() + timeout
            while True:
                stderr.seek(0)
                printed = stderr.read().decode("utf-8", "replace")
                found = re.search(r"on (http://\S+)", printed)
                if found:
                    yield TerminalServer(found.group(1), printed.splitlines()[0])
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {printed.strip() or 'no output'}")
                time.sleep(0.05)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


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
    """Run a console script of this environment (``args[0]``, e.g. ``fastmcp``) as terminal B would."""
    completed = subprocess.run(
        [console_script(args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=plain_environment(),
        check=False,
    )
    output = _ANSI.sub("", completed.stdout + completed.stderr)
    return CommandResult(shlex.join(args), output, completed.returncode)
