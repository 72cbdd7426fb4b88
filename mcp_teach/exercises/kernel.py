"""Run one notebook in a fresh kernel with nbclient, under time limits, and leave no process behind.

nbclient runs each cell, goes on after errors (``allow_errors``) and interrupts a cell that runs longer than the
cell timeout (``interrupt_on_timeout``). Around it: the notebook's overall time limit, a stop when an interrupted
kernel does not answer again, Ctrl-C, and, once the kernel is killed, killing whatever it started, however far it
went, and checking with psutil that nothing of it is left before the next notebook (or the report). jupyter_client
starts each kernel in a session of its own, and kills its process group; what left the group is found as the
kernel's descendants (a stdio MCP server a solution forgot to close runs in a session of its own), by the session
(a child of a child whose parent exited), or by a value set in the kernel's environment only, which every process
it forks or starts inherits (a daemon's ``fork``, ``setsid``, ``fork``). A process that both leaves the session and
starts a program with another environment escapes all three: grading in a container is the answer to that.
A killed kernel runs no exit code, so it gets a temporary folder of its own, removed with all it holds once the
kernel is gone: nothing a graded notebook made there (a lesson's scratch folders) is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import secrets
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from jupyter_client import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

from mcp_teach.exercises.catalogue import GRADING_VARIABLE
from mcp_teach.exercises.convention import describe

KERNEL = "python3"
#: The error name of the reply nbclient makes up for a cell it interrupted at the timeout.
TIMED_OUT = "CellTimeoutError"
#: How long an interrupted kernel may take to answer again (after nbclient's wait for the cell's output): one that
#: does not is stuck (it ignores SIGINT); a kernel on a busy machine can take seconds to answer.
RECOVER_SECONDS = 10
#: How long the kernel's leftover processes get after SIGTERM before SIGKILL.
TERMINATE_SECONDS = 3
#: The variables that name the temporary folder (POSIX, then Windows), all set to the kernel's own.
TEMPORARY_VARIABLES = ("TMPDIR", "TEMP", "TMP")
#: Set to a value of each kernel's own in its environment: a process that carries it came from that kernel.
RUN_VARIABLE = "MCP_TEACH_GRADING_RUN"
_FIRST_START = threading.Lock()
_FIRST_START_DONE = threading.Event()


@dataclass(frozen=True)
class Limits:
    """``cell_timeout``: seconds one cell may run; ``time_limit``: seconds the whole notebook may run."""

    cell_timeout: float
    time_limit: float


@dataclass(frozen=True)
class CellRun:
    """What one code cell did: ``ok``, ``error`` (``ename``: ``evalue``) or ``stopped`` (``evalue`` says how)."""

    status: str
    ename: str = ""
    evalue: str = ""
    stdout: str = ""

    @property
    def error(self) -> str:
        """``Name: message`` of the error (empty if none)."""
        return f"{self.ename}: {self.evalue}" if self.evalue else self.ename


@dataclass
class NotebookRun:
    """The cells that ran (by index) and, if the run ended early, why."""

    cells: dict[int, CellRun] = field(default_factory=dict)
    stopped: str | None = None


def run_notebook(notebook: Any, cwd: Path, limits: Limits) -> NotebookRun:
    """Execute ``notebook`` (its cells get the outputs of this run) in a new kernel started in ``cwd``."""
    with tempfile.TemporaryDirectory(prefix="mcp-teach-grading-", ignore_cleanup_errors=True) as temporary:
        return asyncio.run(_run(notebook, cwd, limits, Path(temporary)))


async def _run(notebook: Any, cwd: Path, limits: Limits, temporary: Path) -> NotebookRun:
    run, mark = NotebookRun(), secrets.token_hex(16)
    replies: dict[int, dict[str, Any]] = {}
    # Checks of unanswered exercises raise while grading (mcp_teach.exercises.catalogue), as under nbgrader.
    env = {**os.environ, GRADING_VARIABLE: "autograde", **dict.fromkeys(TEMPORARY_VARIABLES, str(temporary))}
    env[RUN_VARIABLE] = mark
    with _alone_the_first_time():
        manager = AsyncKernelManager(kernel_name=KERNEL)
        client = NotebookClient(
            notebook,
            km=manager,
            allow_errors=True,
            interrupt_on_timeout=True,
            error_on_timeout={"ename": TIMED_OUT},
            record_timing=False,
        )
        client.on_cell_executed = lambda cell, cell_index, execute_reply: replies.__setitem__(cell_index, execute_reply)
        try:
            await manager.start_kernel(cwd=str(cwd), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await client.async_start_new_kernel_client()
        except BaseException:
            await _stop(manager, client, mark)
            raise
    try:
        await _execute(client, run, replies, time.monotonic() + limits.time_limit, limits)
    finally:
        await _stop(manager, client, mark)
    return run


@contextlib.contextmanager
def _alone_the_first_time() -> Iterator[None]:
    """The first kernel start of a process, made while no other thread starts one.

    traitlets turns a class named by a string into the class when the first instance is made, and two threads
    doing that at once can fail ("import_item accepts strings, not MetaHasTraits"; seen grading two notebooks in
    two threads on a busy machine). Once one kernel has started, every such class is resolved.
    """
    if _FIRST_START_DONE.is_set():
        yield
        return
    with _FIRST_START:
        yield
        _FIRST_START_DONE.set()


async def _stop(manager: AsyncKernelManager, client: NotebookClient, mark: str) -> None:
    await stop_kernel(manager, mark)
    if client.kc is not None:
        client.kc.stop_channels()


async def _execute(
    client: NotebookClient, run: NotebookRun, replies: dict[int, dict[str, Any]], deadline: float, limits: Limits
) -> None:
    out_of_time = f"the notebook's time limit ({limits.time_limit:g} s) ran out"
    for index, cell in enumerate(client.nb.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        where, remaining = describe(cell, index), deadline - time.monotonic()
        if remaining <= 0:
            run.stopped = f"{out_of_time} before {where}"
            return
        client.timeout = max(1, math.ceil(min(limits.cell_timeout, remaining)))
        try:
            await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
        except DeadKernelError:
            if asyncio.current_task().cancelling():  # Ctrl-C: nbclient turns the cancellation into DeadKernelError
                raise asyncio.CancelledError from None
            run.cells[index] = CellRun("stopped", evalue="made the kernel die (it crashed or exited)")
            run.stopped = f"the kernel died in {where}"
            return
        reply = replies[index]["content"]
        if reply.get("ename") != TIMED_OUT:
            run.cells[index] = _cell_run(cell, reply)
        elif remaining < limits.cell_timeout:
            run.cells[index] = CellRun("stopped", evalue=f"was still running when {out_of_time}")
            run.stopped = f"{out_of_time} in {where}"
            return
        else:
            interrupted = f"did not finish within {limits.cell_timeout:g} s (interrupted)"
            run.cells[index] = CellRun("stopped", evalue=interrupted)
            try:  # does the interrupted kernel answer again?
                await client.kc.kernel_info(reply=True, timeout=RECOVER_SECONDS)
            except TimeoutError:
                run.stopped = f"{where} did not finish and the kernel did not stop when interrupted"
                return


def _cell_run(cell: Any, reply: dict[str, Any]) -> CellRun:
    stdout = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    if reply.get("status") == "error":
        return CellRun("error", reply.get("ename", "Error"), reply.get("evalue", ""), stdout)
    return CellRun("ok", stdout=stdout)


def descendants(pid: int) -> list[psutil.Process]:
    """The process ``pid`` and all its children, recursively (empty if it is gone)."""
    try:
        process = psutil.Process(pid)
        return [process, *process.children(recursive=True)]
    except psutil.Error:
        return []


def kill_all(processes: list[psutil.Process]) -> None:
    """SIGTERM the processes still running, then SIGKILL those that ignore it; waits for them."""
    alive = [p for p in processes if p.is_running()]
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(alive, timeout=TERMINATE_SECONDS)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=TERMINATE_SECONDS)


async def stop_kernel(manager: AsyncKernelManager, mark: str) -> None:
    """Kill the kernel and every process it started (its family found before the kill; then what is left of its
    session or carries ``mark``): grading needs no graceful exit."""
    if not manager.has_kernel:
        return
    kernel = manager.provisioner.pid
    family, session = descendants(kernel), kernel if _session(kernel) == kernel else None  # a session of its own
    with contextlib.suppress(Exception):  # a kernel already gone; its family is killed below all the same
        await manager.shutdown_kernel(now=True)  # SIGKILL to the kernel's process group
    kill_all(family)
    deadline = time.monotonic() + TERMINATE_SECONDS
    while found := leftovers(session, mark):
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes the kernel started could not be stopped: {[p.pid for p in found]}")
        for send in (psutil.Process.suspend, psutil.Process.kill):  # a stopped process starts no other
            for process in found:
                with contextlib.suppress(psutil.Error):
                    send(process)
        time.sleep(0.05)  # then look again: until nothing is found (a killed process is a zombie or gone)


def leftovers(session: int | None, mark: str) -> list[psutil.Process]:
    """The processes still running (zombies have exited) in ``session`` or with ``mark`` in their environment."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if process.status() != psutil.STATUS_ZOMBIE and (
                (session is not None and _session(process.pid) == session)
                or (mark and process.environ().get(RUN_VARIABLE) == mark)
            ):
                found.append(process)
    return found


def _session(pid: int) -> int | None:
    """The session of process ``pid`` (None where the system has none, or the process is gone)."""
    try:
        return os.getsid(pid) if hasattr(os, "getsid") else None
    except OSError:
        return None
