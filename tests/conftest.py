"""Shared fixtures: run async code, open the calculator on every transport, run the CLI, leave nothing behind."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from support import HANG_TIMEOUT

from mcp_teach.course.conformance import ConformanceError, find_node
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http, stdio_transport


def _run_async(function: Callable[..., Any], *args: Any, timeout: float = HANG_TIMEOUT) -> Any:
    async def main() -> Any:
        with anyio.fail_after(timeout):
            return await function(*args)

    return asyncio.run(main())


@pytest.fixture(scope="module")
def node_folder() -> Path:
    """A Node new enough for the conformance suite; without one the test is skipped with the finder's advice."""
    try:
        return find_node()
    except ConformanceError as error:
        pytest.skip(str(error))


@pytest.fixture(scope="session")
def run() -> Callable[..., Any]:
    """``run(async_fn, *args)`` runs it in a fresh event loop (there is no pytest-asyncio)."""
    return _run_async


@pytest.fixture(scope="session")
def open_calculator(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Any]:
    """``async with open_calculator(kind) as target`` gives what ``Client(...)`` connects to for that transport."""
    log_file = tmp_path_factory.mktemp("stdio") / "server.log"

    @contextlib.asynccontextmanager
    async def open_target(kind: str) -> AsyncIterator[Any]:
        if kind == "memory":
            yield build_calculator_server()
        elif kind == "stdio":
            yield stdio_transport(log_file=log_file)
        else:
            async with serve_http(kind) as url:
                yield url

    return open_target


def _clean_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "OPENAI_", "LLM_"))}
    env.update(overrides)
    return env


@pytest.fixture(scope="session")
def clean_env() -> Callable[..., dict[str, str]]:
    """``clean_env(**overrides)``: the test environment without course settings, plus ``overrides``."""
    return _clean_env


class CliServer:
    """A server started from the command line, its stderr read in the background."""

    URL = re.compile(r"on (http://\S+)")

    def __init__(self, argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env or _clean_env(),
        )
        self.stderr_lines: list[str] = []
        self._stderr_ended = False
        self._new_line = threading.Condition()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        for line in self.process.stderr:
            with self._new_line:
                self.stderr_lines.append(line)
                self._new_line.notify_all()
        with self._new_line:
            self._stderr_ended = True  # the process ended: stop waiting
            self._new_line.notify_all()

    def matches(self, pattern: re.Pattern[str], count: int = 1) -> list[re.Match[str]]:
        """The first ``count`` matches of ``pattern`` in stderr, once printed; fails if the process ends first."""

        def found() -> list[re.Match[str]]:
            return [match for line in self.stderr_lines if (match := pattern.search(line))]

        with self._new_line:
            printed = self._new_line.wait_for(lambda: len(found()) >= count or self._stderr_ended, HANG_TIMEOUT)
            matches = found()
        assert printed and len(matches) >= count, f"{count} x {pattern.pattern!r} not printed: {self.stderr}"
        return matches[:count]

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    @property
    def url(self) -> str:
        """The URL the server printed on stderr (waits until it did)."""
        return self.matches(self.URL)[0].group(1)

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, str, str]:
        """Send ``signum``, wait for the exit; returns (exit code, stdout, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        stdout, _ = self.process.communicate(timeout=HANG_TIMEOUT)
        self._reader.join(HANG_TIMEOUT)
        return self.process.returncode, stdout, "".join(self.stderr_lines)

    def kill(self) -> None:
        """Kill the server and any worker processes it started."""
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.process.pid).children(recursive=True):
                child.kill()
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=HANG_TIMEOUT)
        self._reader.join(HANG_TIMEOUT)


@pytest.fixture(scope="module")
def cli_server(tmp_path_factory: pytest.TempPathFactory):
    """``cli_server(argv, **env)`` starts a CLI server (clean env, cwd without ``.env``); killed at the end if alive."""
    started: list[CliServer] = []
    cwd = tmp_path_factory.mktemp("cli")

    def start(argv: list[str], **env: str) -> CliServer:
        server = CliServer(argv, cwd=cwd, env=_clean_env(**env))
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


class JsonLinePeer:
    """Talks raw JSON-RPC lines to ``python -m mcp_teach.serve --transport stdio``, no MCP library involved."""

    def __init__(self, argv: list[str], *, cwd: Path, stderr_file: Path) -> None:
        self._stderr = stderr_file.open("w")
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            cwd=cwd,
            env=_clean_env(),
        )
        self.stdout_lines: list[str] = []
        # Only a guard against a hung server: kills it so readline returns.
        self._watchdog = threading.Timer(HANG_TIMEOUT, self.process.kill)
        self._watchdog.start()

    def send(self, message: dict[str, Any]) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def receive(self) -> str:
        line = self.process.stdout.readline()
        assert line, "the server closed stdout"
        self.stdout_lines.append(line)
        return line

    def close_stdin(self) -> int:
        """Close stdin, read what is left on stdout and return the exit code."""
        self.process.stdin.close()
        rest = self.process.stdout.read()
        self.stdout_lines.extend(rest.splitlines(keepends=True))
        code = self.process.wait(HANG_TIMEOUT)
        self.cleanup()
        return code

    def cleanup(self) -> None:
        self._watchdog.cancel()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(HANG_TIMEOUT)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self._stderr.close()


@pytest.fixture
def json_line_peer(tmp_path: Path):
    """``json_line_peer(argv)`` starts a stdio server for raw JSON-RPC; always cleaned up."""
    peers: list[JsonLinePeer] = []

    def start(argv: list[str]) -> JsonLinePeer:
        peer = JsonLinePeer(argv, cwd=tmp_path, stderr_file=tmp_path / f"stderr-{len(peers)}.log")
        peers.append(peer)
        return peer

    yield start
    for peer in peers:
        peer.cleanup()


@pytest.fixture(autouse=True)
def checks_walk_only_what_the_test_made(request: pytest.FixtureRequest) -> Iterator[None]:
    """A check collects garbage after the answer ran (a coroutine it left unawaited warns there); in an exercise
    test the objects alive before it (modules, fixtures) are frozen out of that walk, so a check costs milliseconds
    instead of a walk through the whole test process."""
    if not request.module.__name__.startswith(("test_exercises_", "test_feedback_always")):
        yield
        return
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(scope="module", autouse=True)
def no_child_processes_left():
    """After each test module, no process started by the tests is still running (or unreaped)."""
    yield
    me = psutil.Process()
    deadline = time.monotonic() + HANG_TIMEOUT  # only lets exiting children finish; a survivor fails the check
    while (children := me.children(recursive=True)) and time.monotonic() < deadline:
        time.sleep(0.05)
    described = [
        f"{child.pid} {child.status()} {' '.join(child.cmdline())}" for child in children if child.is_running()
    ]
    assert not children, f"child processes left running: {described}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The lessons' kernels that nbval and the browser test killed ran no exit code: remove their scratch folders."""
    from mcp_teach.lessons.scratch import remove_abandoned

    remove_abandoned()
