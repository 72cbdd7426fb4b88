"""Process hygiene: every server the course starts stops when its block ends, however the block ends.

A notebook cell opens a stdio client (a server subprocess) or serves HTTP in-process, and the cell
ends normally, raises, or is interrupted. Each cycle test runs such cells on one transport (28 over stdio,
four of each kind, each server a new process; 50 over HTTP), checks
after every cycle that its server is gone (stdio: the process, reaped; HTTP: the port refuses
connections), and at the end compares the test process with a snapshot taken before: no child
process, no listening TCP socket, no thread and no asyncio task of ours left, and the file descriptor
count back where it was (:data:`FD_SLACK`).

The kinds of cycle, taken in turn (four of each over stdio, five or six over HTTP):

- ``normal``: connect, call a tool, leave the block.
- ``error``: an exception raised inside the block after a call.
- ``keyboard_interrupt``: ``KeyboardInterrupt`` raised inside the block, where an interrupt lands in a
  synchronous cell.
- ``interrupt_connect``: the task cancelled while the client connects (stdio: as soon as the server
  process exists, long before its handshake; HTTP: as soon as the server is up).
- ``interrupt_call``: the task cancelled while a call waits for its answer (stdio: the server process
  is suspended, so the answer cannot come first, and resumed as the interrupt lands; HTTP: a tool that
  waits until cancelled).
- ``timeout_call``: an anyio cancel scope cancelled while a call waits, which is what
  ``anyio.move_on_after``/``fail_after`` round a cell's code do. Unlike a task cancel it fires again at
  every ``await`` of the clean-up. ``serve_http`` used to return then with its server still running
  and the socket closed under it. A stdio client leaves the stopping of its server to a background
  task then (fastmcp's choice), so that cycle waits for the process to exit.
- stdio ``server_killed``: the server process is SIGKILLed mid-session; the next call fails.
- HTTP ``interrupt_start``: the task cancelled while ``serve_http`` starts the server.
- HTTP ``double_interrupt``: cancelled mid-call, then again while the block shuts the server down (the
  interrupt button pressed twice); this too left the server running before the fix.
- HTTP ``port_busy``: ``serve_http`` asked for a port that is taken fails to start.

A Jupyter interrupt of a cell that waits in ``await`` reaches it as the cancellation of the cell's task
(ipykernel's SIGINT handler cancels it), so ``task.cancel()`` is that interrupt here;
:func:`test_a_real_kernel_interrupted_or_restarted_mid_cell_leaves_no_server` presses the real
button, and kills a kernel whose cell holds a stdio server. Every interrupt must still end the cell: a
clean-up that swallowed the cancellation would let the cell run on. Odd-numbered cycles record through
:class:`CaptureTransport`, as the lessons do.

The latency lesson's HTTP echo (an ASGI app served by ``serve_asgi``, timed in a loop as the lesson's cell does) is
another in-process runner; ten measurements are interrupted or timed out half-way, which left its port listening
before the fix.

A stdio cycle spawns a Python process (about a second of imports), so :data:`STDIO_LANES` cycles run at
once; each cycle finds its own server by its log file, which is the process's stderr. The stdio test
takes most of the module's time (40-60 s on two cores, CPU-bound); the others take 3-12 s each.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import psutil
import pytest
from fastmcp import Client, FastMCP
from jupyter_client import KernelManager
from mcp.shared.exceptions import MCPError
from support import HANG_TIMEOUT, refuses_connections

from mcp_teach.client import teaching_client
from mcp_teach.exercises.kernel import KERNEL, descendants, kill_all
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.http_app import HttpTransport
from mcp_teach.transports.in_process import serve_asgi, serve_http, stdio_transport
from mcp_teach.transports.sockets import bind_socket
from mcp_teach.wire.capture import CaptureTransport

CYCLES = 50
#: Four of each stdio kind (seven kinds, an odd number, so each kind runs with and without a capture).
STDIO_CYCLES = 28
STDIO_LANES = 5
#: Only stops a hung cycle test; nothing asserts on time.
RUN_TIMEOUT = 300
#: Descriptors the process may hold beyond the snapshot, opened once and kept (nothing here does yet).
#: A leak of one per cycle would show as +28 or more, one per kind of cycle as +4 or more.
FD_SLACK = 3
ADD = ("calculator_add", {"a": 1, "b": 2})
STDIO_KINDS = (
    "normal",
    "error",
    "keyboard_interrupt",
    "interrupt_connect",
    "interrupt_call",
    "timeout_call",
    "server_killed",
)
HTTP_KINDS = (
    "normal",
    "error",
    "keyboard_interrupt",
    "interrupt_start",
    "interrupt_connect",
    "interrupt_call",
    "timeout_call",
    "double_interrupt",
    "port_busy",
)


class CellError(Exception):
    """What the ``error`` cycles raise inside the block."""


# ---------------------------------------------------------------- what the test process holds


@dataclasses.dataclass(frozen=True)
class Holdings:
    """Child processes, listening sockets, descriptors and threads of the test process at one moment."""

    children: tuple[str, ...]
    listening: frozenset[tuple[str, int]]
    fds: int
    threads: frozenset[str]

    @classmethod
    def now(cls) -> Holdings:
        me = psutil.Process()
        return cls(
            children=tuple(_describe(child) for child in me.children(recursive=True)),
            listening=listening_sockets(),
            fds=me.num_fds(),
            threads=frozenset(f"{thread.name}#{thread.ident}" for thread in threading.enumerate()),
        )

    def settled_since(self, before: Holdings) -> bool:
        return not self.children and self.threads <= before.threads


def _describe(process: psutil.Process) -> str:
    with contextlib.suppress(psutil.Error):
        return f"{process.pid} {process.status()} {' '.join(process.cmdline())}"
    return f"{process.pid} (gone)"


def listening_sockets(pid: int | None = None) -> frozenset[tuple[str, int]]:
    """The TCP addresses a process (default: this one) listens on."""
    connections = psutil.Process(pid).net_connections(kind="tcp")
    return frozenset((c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN)


def assert_nothing_left(before: Holdings) -> None:
    """Compare with ``before``, once exiting children are reaped and finishing threads gone (waits for them)."""
    deadline = time.monotonic() + HANG_TIMEOUT
    while not (after := Holdings.now()).settled_since(before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not after.children, f"child processes left: {after.children}"
    assert after.listening == before.listening, f"sockets left listening: {after.listening - before.listening}"
    assert after.threads <= before.threads, f"threads left: {sorted(after.threads - before.threads)}"
    assert after.fds <= before.fds + FD_SLACK, f"file descriptors: {before.fds} before, {after.fds} after"


def leftover_tasks() -> list[str]:
    """Tasks pending besides the current one and sse_starlette's shutdown watcher.

    sse_starlette starts that watcher once per event loop, the first time it serves SSE. It waits for
    a uvicorn shutdown it finds through the SIGTERM handler, which an in-process server leaves to its
    host, so it lives as long as the loop: one task per loop, not one per server.
    """
    me = asyncio.current_task()
    names = [task.get_coro().__qualname__ for task in asyncio.all_tasks() if task is not me]
    return [name for name in names if name != "_shutdown_watcher"]


async def tasks_left_after_settling(bound: float = 10) -> list[str]:
    """:func:`leftover_tasks` once clean-up tasks that are about to end have had up to ``bound`` seconds.

    fastmcp's client stops a stdio server from a background task after an anyio timeout; on a busy machine
    that task may still be finishing when the last cycle returns. A task that never ends is still reported.
    """
    deadline = time.monotonic() + bound
    while (left := leftover_tasks()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return left


async def reached(moment: asyncio.Event, task: asyncio.Task[Any]) -> None:
    """Wait until ``moment`` is set; the cell must still be running then."""
    waiter = asyncio.create_task(moment.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    assert not task.done(), f"the cell ended before the interrupt: {task.exception() or task.result()!r}"


async def interrupt(
    cell: Coroutine[Any, Any, Any],
    *moments: asyncio.Event,
    pause: float = 0,
    on_cancel: Callable[[], Any] = lambda: None,
) -> None:
    """Run ``cell`` as a task and cancel it as a Jupyter interrupt does: ``pause`` s after each of ``moments``.

    Without moments it is cancelled at its first ``await``. The cancellation must end the cell.
    """
    task = asyncio.create_task(cell)
    await asyncio.sleep(0)
    for moment in moments:
        await reached(moment, task)
        await asyncio.sleep(pause)
        task.cancel()
        on_cancel()
    if not moments:
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def cancel_scope_at(
    moment: asyncio.Event, cell: Callable[[anyio.CancelScope], Coroutine[Any, Any, None]], pause: float = 0
) -> tuple[asyncio.Task[None], anyio.CancelScope]:
    """Run ``cell(scope)`` as a task; once ``moment`` is set, cancel ``scope`` (as a timeout round the code does)."""
    scope = anyio.CancelScope()
    task = asyncio.create_task(cell(scope))
    await reached(moment, task)
    await asyncio.sleep(pause)
    scope.cancel()
    return task, scope


# ---------------------------------------------------------------- stdio cycles


def stdio_server_process(log_file: Path) -> psutil.Process | None:
    """The running stdio server whose stderr is ``log_file``."""
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if "mcp_teach.serve" in child.cmdline() and any(f.path == str(log_file) for f in child.open_files()):
                return child
    return None


@dataclasses.dataclass
class StdioCycle:
    """One cell with a stdio client; ``server`` is its server process once seen."""

    number: int
    log_file: Path
    server: psutil.Process | None = None

    @property
    def kind(self) -> str:
        return STDIO_KINDS[self.number % len(STDIO_KINDS)]

    def client(self) -> Client:
        transport = stdio_transport(log_file=self.log_file)
        return teaching_client(CaptureTransport(transport) if self.number % 2 else transport)

    async def find_server(self) -> psutil.Process:
        while (process := stdio_server_process(self.log_file)) is None:
            await asyncio.sleep(0.01)
        self.server = process
        return process

    async def run(self) -> None:
        await getattr(self, self.kind)()
        assert self.server is not None, f"cycle {self.number} ({self.kind}) never saw its server process"
        if self.kind == "timeout_call":
            while self.server.is_running():  # stopped by a background task of the client; ends within 6 s
                await asyncio.sleep(0.05)
        assert not self.server.is_running(), f"cycle {self.number} ({self.kind}) left {_describe(self.server)}"

    async def normal(self) -> None:
        async with self.client() as client:
            await self.find_server()
            assert (await client.call_tool(*ADD)).data == 3.0

    async def error(self) -> None:
        with pytest.raises(CellError):
            async with self.client() as client:
                await self.find_server()
                await client.call_tool(*ADD)
                raise CellError("raised inside the block")

    async def keyboard_interrupt(self) -> None:
        with pytest.raises(KeyboardInterrupt):
            async with self.client() as client:
                await self.find_server()
                await client.call_tool(*ADD)
                raise KeyboardInterrupt

    async def interrupt_connect(self) -> None:
        spawned = asyncio.Event()

        async def cell() -> None:
            async with self.client() as client:
                await client.call_tool(*ADD)

        async def watch() -> None:
            await self.find_server()
            spawned.set()

        watcher = asyncio.create_task(watch())
        await interrupt(cell(), spawned)
        await watcher

    async def busy_call(self, client: Any, calling: asyncio.Event) -> None:
        await self.find_server()
        await client.call_tool(*ADD)
        self.server.suspend()  # a busy server: the answer cannot come before the interrupt
        calling.set()
        await client.call_tool(*ADD)

    async def interrupt_call(self) -> None:
        calling = asyncio.Event()

        async def cell() -> None:
            async with self.client() as client:
                await self.busy_call(client, calling)

        # The pause lets the request reach the server's stdin; it cannot be answered before the resume.
        await interrupt(cell(), calling, pause=0.05, on_cancel=lambda: self.server.resume())

    async def timeout_call(self) -> None:
        calling = asyncio.Event()

        async def cell(scope: anyio.CancelScope) -> None:
            with scope:
                async with self.client() as client:
                    await self.busy_call(client, calling)

        task, scope = await cancel_scope_at(calling, cell, pause=0.05)
        self.server.resume()
        await task
        assert scope.cancelled_caught

    async def server_killed(self) -> None:
        with pytest.raises(MCPError, match="Connection closed"):
            async with self.client() as client:
                await self.find_server()
                await client.call_tool(*ADD)
                self.server.kill()
                await client.call_tool(*ADD)


def test_stdio_servers_stop_however_the_block_ends(run, tmp_path):
    before = Holdings.now()

    async def cycles() -> list[str]:
        async def lane(first: int) -> None:
            for number in range(first, STDIO_CYCLES, STDIO_LANES):
                await StdioCycle(number, tmp_path / f"server-{number}.log").run()

        await asyncio.gather(*(lane(first) for first in range(STDIO_LANES)))
        return await tasks_left_after_settling()

    assert run(cycles, timeout=RUN_TIMEOUT) == []
    assert_nothing_left(before)


# ---------------------------------------------------------------- HTTP cycles


def calculator_with_hold(called: asyncio.Event) -> FastMCP:
    """The calculator plus a ``hold`` tool that sets ``called`` and waits until it is cancelled."""
    server = build_calculator_server()

    @server.tool
    async def hold() -> str:
        """Wait until cancelled."""
        called.set()
        await asyncio.Event().wait()
        return "never"

    return server


@dataclasses.dataclass
class HttpCycle:
    """One cell that serves HTTP in-process and connects to it; ``port`` is known once served."""

    number: int
    transport: HttpTransport
    listening_before: frozenset[tuple[str, int]]
    port: int | None = None
    held: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    @property
    def kind(self) -> str:
        return HTTP_KINDS[self.number % len(HTTP_KINDS)]

    @contextlib.asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        async with serve_http(self.transport, server=calculator_with_hold(self.held)) as url:
            self.port = urlsplit(url).port
            yield url

    def client(self, url: str) -> Client:
        return teaching_client(CaptureTransport(url) if self.number % 2 else url)

    async def run(self) -> None:
        await getattr(self, self.kind)()
        where = f"cycle {self.number} ({self.kind})"
        if self.port is not None:
            assert refuses_connections(self.port), f"{where}: port {self.port} still accepts connections"
        assert listening_sockets() == self.listening_before, f"{where}: a socket is left listening"
        assert leftover_tasks() == [], f"{where}: tasks left running"

    async def normal(self) -> None:
        async with self.serve() as url, self.client(url) as client:
            assert (await client.call_tool(*ADD)).data == 3.0

    async def error(self) -> None:
        with pytest.raises(CellError):
            async with self.serve() as url, self.client(url) as client:
                await client.call_tool(*ADD)
                raise CellError("raised inside the block")

    async def keyboard_interrupt(self) -> None:
        with pytest.raises(KeyboardInterrupt):
            async with self.serve() as url, self.client(url) as client:
                await client.call_tool(*ADD)
                raise KeyboardInterrupt

    async def hold(self, url: str) -> None:
        async with self.client(url) as client:
            await client.call_tool("hold", {})

    async def interrupt_start(self) -> None:
        async def cell() -> None:
            async with self.serve() as url:
                await self.hold(url)

        await interrupt(cell())
        assert self.port is None  # the interrupt landed before the server was up

    async def interrupt_connect(self) -> None:
        up = asyncio.Event()

        async def cell() -> None:
            async with self.serve() as url:
                up.set()
                await self.hold(url)

        await interrupt(cell(), up)

    async def interrupt_call(self) -> None:
        async def cell() -> None:
            async with self.serve() as url:
                await self.hold(url)

        await interrupt(cell(), self.held)

    async def timeout_call(self) -> None:
        async def cell(scope: anyio.CancelScope) -> None:
            with scope:
                async with self.serve() as url:
                    await self.hold(url)

        task, scope = await cancel_scope_at(self.held, cell)
        await task
        assert scope.cancelled_caught

    async def double_interrupt(self) -> None:
        stopping = asyncio.Event()

        async def cell() -> None:
            async with self.serve() as url:
                try:
                    await self.hold(url)
                finally:
                    stopping.set()  # no await before serve_http's exit: the second interrupt lands there

        await interrupt(cell(), self.held, stopping)

    async def port_busy(self) -> None:
        with bind_socket() as taken:
            taken.listen()
            with pytest.raises(OSError):
                async with serve_http(self.transport, port=taken.getsockname()[1]):
                    pass


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
def test_http_servers_stop_however_the_block_ends(run, transport):
    before = Holdings.now()

    async def cycles() -> list[str]:
        for number in range(CYCLES):
            await HttpCycle(number, transport, before.listening).run()
        return leftover_tasks()

    assert run(cycles, timeout=RUN_TIMEOUT) == []
    assert_nothing_left(before)


async def _echo_app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """Lesson 06's echo: answers every request with its own body."""
    body, more = b"", True
    while more:
        message = await receive()
        body, more = body + message.get("body", b""), message.get("more_body", False)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def http_echo_baseline(requests: int) -> list[float]:
    """Lesson 06's HTTP-without-MCP measurement: ``requests`` POSTs to the echo, each timed (ms)."""
    samples = []
    async with serve_asgi(_echo_app, lifespan="off") as port, httpx2.AsyncClient() as http:
        for _ in range(requests):
            start = time.perf_counter_ns()
            await http.post(f"http://127.0.0.1:{port}/echo", content=b'{"jsonrpc":"2.0"}')
            samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


async def echo_measurement_started(listening_before: frozenset[tuple[str, int]], started: asyncio.Event) -> int:
    """Wait until the echo server of :func:`http_echo_baseline` listens; set ``started``, return its port."""
    while not (new := listening_sockets() - listening_before):
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # requests under way
    started.set()
    [(_, port)] = new
    return port


def test_the_latency_echo_server_stops_when_a_measurement_is_interrupted(run):
    """The HTTP-without-MCP baseline of the latency lesson serves in-process too."""
    before = Holdings.now()

    async def cycles() -> list[str]:
        for number in range(10):
            started = asyncio.Event()
            watcher = asyncio.create_task(echo_measurement_started(before.listening, started))
            if number % 2:
                await interrupt(http_echo_baseline(10**6), started)
            else:

                async def measure(scope: anyio.CancelScope) -> None:
                    with scope:
                        await http_echo_baseline(10**6)

                task, _ = await cancel_scope_at(started, measure)
                await task
            port = await watcher
            assert refuses_connections(port), f"cycle {number}: the echo server still accepts connections"
            assert listening_sockets() == before.listening
            assert leftover_tasks() == []
        return leftover_tasks()

    assert run(cycles, timeout=RUN_TIMEOUT) == []
    assert_nothing_left(before)


# ---------------------------------------------------------------- a real kernel, really interrupted

KERNEL_SETUP = """
import asyncio
from pathlib import Path
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.client import teaching_client
from mcp_teach.notebook_setup import setup_notebook
from mcp_teach.transports.in_process import serve_http, stdio_transport
setup_notebook()
def pending_tasks():
    return sorted(t.get_coro().__qualname__ for t in asyncio.all_tasks() if t is not asyncio.current_task())
print(pending_tasks())
"""
STDIO_CELL = """
async with teaching_client(CaptureTransport(stdio_transport(log_file=Path({log!r})))) as client:
    await client.call_tool("calculator_add", {{"a": 1, "b": 2}})
    print("connected", flush=True)
    await asyncio.sleep(600)
"""
HTTP_CELL = """
async with serve_http("streamable-http") as url:
    async with teaching_client(CaptureTransport(url)) as client:
        await client.call_tool("calculator_add", {"a": 1, "b": 2})
        print(url, flush=True)
        await asyncio.sleep(600)
"""


class KernelCell:
    """A cell sent to the kernel: its stdout so far, and its reply once it finished."""

    def __init__(self, kc: Any, code: str) -> None:
        self.kc = kc
        self.msg_id = kc.execute(code)
        self.stdout = ""
        self.finished = False

    def read_until(self, marker: str | None = None) -> bool:
        """Collect stdout until it contains ``marker`` (True) or the cell finished (False)."""
        while not self.finished:
            message = self.kc.get_iopub_msg(timeout=HANG_TIMEOUT)
            if message["parent_header"].get("msg_id") != self.msg_id:
                continue
            content = message["content"]
            if message["msg_type"] == "stream" and content["name"] == "stdout":
                self.stdout += content["text"]
                if marker is not None and marker in self.stdout:
                    return True
            self.finished = message["msg_type"] == "status" and content["execution_state"] == "idle"
        return False

    def reply(self) -> tuple[str, str | None]:
        """Wait until the cell finished; its status and, after an error, the error's name."""
        self.read_until()
        while (reply := self.kc.get_shell_msg(timeout=HANG_TIMEOUT))["parent_header"].get("msg_id") != self.msg_id:
            pass  # a reply to an earlier request
        return reply["content"]["status"], reply["content"].get("ename")


def press_interrupt(km: KernelManager) -> None:
    """The notebook's interrupt button: SIGINT to the kernel, and nothing else.

    Nothing else wakes the kernel's event loop: ipykernel alone would leave a cell waiting on a quiet pipe
    or a long sleep running (ipython/ipykernel#881); ``setup_notebook()`` makes the signal wake it.
    """
    km.interrupt_kernel()


def stdio_servers_of(kernel: psutil.Process) -> list[psutil.Process]:
    with contextlib.suppress(psutil.Error):
        return [child for child in kernel.children(recursive=True) if "mcp_teach.serve" in _cmdline(child)]
    return []


def _cmdline(process: psutil.Process) -> list[str]:
    with contextlib.suppress(psutil.Error):
        return process.cmdline()
    return []


def test_a_real_kernel_interrupted_or_restarted_mid_cell_leaves_no_server(tmp_path, clean_env):
    km = KernelManager(kernel_name=KERNEL)
    km.start_kernel(cwd=str(tmp_path), env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kernel = psutil.Process(km.provisioner.pid)
    kc = km.client()
    kc.start_channels()
    servers: list[psutil.Process] = []
    try:
        kc.wait_for_ready(timeout=HANG_TIMEOUT)
        setup = KernelCell(kc, KERNEL_SETUP)
        assert setup.reply() == ("ok", None), setup.stdout
        kernel_sockets = listening_sockets(kernel.pid)  # its own ZeroMQ channels

        stdio = KernelCell(kc, STDIO_CELL.format(log=str(tmp_path / "stdio.log")))
        assert stdio.read_until("connected"), stdio.stdout
        servers += stdio_servers_of(kernel)
        assert len(servers) == 1, "the cell runs without its stdio server"
        press_interrupt(km)
        assert stdio.reply() == ("error", "CancelledError")
        left = [_describe(server) for server in stdio_servers_of(kernel)]
        assert not left, f"the stdio server outlived the interrupted cell: {left}"

        http = KernelCell(kc, HTTP_CELL)
        assert http.read_until("http://"), http.stdout
        port = urlsplit(http.stdout.strip()).port
        assert listening_sockets(kernel.pid) - kernel_sockets == {("127.0.0.1", port)}, "the cell runs no server"
        press_interrupt(km)
        assert http.reply() == ("error", "CancelledError")
        assert refuses_connections(port), "the HTTP server outlived the interrupted cell"
        assert listening_sockets(kernel.pid) == kernel_sockets

        assert km.is_alive()  # the interrupt stopped the cell, not the kernel
        tasks = KernelCell(kc, "print(pending_tasks())")
        assert (tasks.reply(), tasks.stdout) == (("ok", None), setup.stdout), "tasks left in the kernel"

        # "Restart kernel" in the middle of a cell: the kernel dies without clean-up. Its stdio server runs
        # in a session of its own, so no signal reaches it; it must exit when its stdin closes.
        busy = KernelCell(kc, STDIO_CELL.format(log=str(tmp_path / "stdio.log")))
        assert busy.read_until("connected"), busy.stdout
        [orphan] = stdio_servers_of(kernel)
        servers.append(orphan)
        km.shutdown_kernel(now=True)
        _, alive = psutil.wait_procs([orphan], timeout=HANG_TIMEOUT)
        assert not alive, f"the stdio server outlived its kernel: {_describe(orphan)}"
    finally:
        family = descendants(kernel.pid)
        if km.has_kernel:
            km.shutdown_kernel(now=False)
        kc.stop_channels()
        kill_all(family + servers)
