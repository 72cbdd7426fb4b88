"""Run one notebook in a fresh kernel with nbclient, under time limits, and leave no process behind.

nbclient runs each cell, goes on after errors (``allow_errors``) and interrupts a cell that runs longer than the
cell timeout (``interrupt_on_timeout``). Around it: the notebook's overall time limit, a stop when an interrupted
kernel does not answer again, Ctrl-C, and, once the kernel is killed, killing whatever it started (a stdio MCP
server a solution forgot to close runs in a session of its own, out of reach of the kernel's process group).
A killed kernel runs no exit code, so it gets a temporary folder of its own, removed with all it holds once the
kernel is gone: nothing a graded notebook made there (a lesson's scratch folders) is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
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
    run = NotebookRun()
    replies: dict[int, dict[str, Any]] = {}
    # Checks of unanswered exercises raise while grading (mcp_teach.exercises.catalogue), as under nbgrader.
    env = {**os.environ, GRADING_VARIABLE: "autograde", **dict.fromkeys(TEMPORARY_VARIABLES, str(temporary))}
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
            await _stop(manager, client)
            raise
    try:
        await _execute(client, run, replies, time.monotonic() + limits.time_limit, limits)
    finally:
        await _stop(manager, client)
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


async def _stop(manager: AsyncKernelManager, client: NotebookClient) -> None:
    await stop_kernel(manager)
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


async def stop_kernel(manager: AsyncKernelManager) -> None:
    """Kill the kernel and every process it started (found before the kill): grading needs no graceful exit."""
    if not manager.has_kernel:
        return
    family = descendants(manager.provisioner.pid)
    with contextlib.suppress(Exception):  # a kernel already gone; its family is killed below all the same
        await manager.shutdown_kernel(now=True)
    kill_all(family)
