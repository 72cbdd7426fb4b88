"""Run one notebook in a fresh kernel with time limits, and leave no process behind.

The grader needs more than ``NotebookClient.execute()``: it runs every cell even after errors,
interrupts a cell that runs too long and goes on if the kernel recovers, stops at the notebook's
overall time limit, records what each cell did, and after shutting the kernel down kills whatever the
kernel started (e.g. a stdio MCP server a solution forgot to close).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from jupyter_client import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from mcp_teach.exercises.catalogue import GRADING_VARIABLE
from mcp_teach.exercises.convention import describe

KERNEL = "python3"
#: How long an interrupted kernel may take to answer again before the run stops.
RECOVER_SECONDS = 5
#: How long a graceful kernel shutdown may take (then it is killed).
SHUTDOWN_SECONDS = 5
#: How long the kernel's leftover processes get after SIGTERM before SIGKILL.
TERMINATE_SECONDS = 3


@dataclass(frozen=True)
class Limits:
    """``cell_timeout``: seconds one cell may run; ``time_limit``: seconds the whole notebook may run."""

    cell_timeout: float = 120
    time_limit: float = 900


DEFAULT_LIMITS = Limits()


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


def run_notebook(notebook: Any, cwd: Path, limits: Limits = DEFAULT_LIMITS) -> NotebookRun:
    """Execute ``notebook`` (modified in place: fresh outputs) in a new kernel started in ``cwd``."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return asyncio.run(_run(notebook, cwd, limits))


async def _run(notebook: Any, cwd: Path, limits: Limits) -> NotebookRun:
    run = NotebookRun()
    deadline = time.monotonic() + limits.time_limit
    manager = AsyncKernelManager(kernel_name=KERNEL)
    client = NotebookClient(
        notebook,
        km=manager,
        kernel_name=KERNEL,
        allow_errors=True,
        interrupt_on_timeout=False,
        record_timing=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    replies: dict[int, dict[str, Any]] = {}
    client.on_cell_executed = lambda cell, cell_index, execute_reply: replies.__setitem__(cell_index, execute_reply)
    try:
        # Checks of unanswered exercises raise while grading (mcp_teach.exercises.catalogue), as under nbgrader.
        env = {**os.environ, GRADING_VARIABLE: "autograde"}
        await manager.start_kernel(cwd=str(cwd), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await client.async_start_new_kernel_client()
        await _execute(client, run, replies, deadline, limits)
    finally:
        await stop_kernel(manager, now=run.stopped is not None)
        if client.kc is not None:
            client.kc.stop_channels()
    return run


async def _execute(
    client: NotebookClient, run: NotebookRun, replies: dict[int, dict[str, Any]], deadline: float, limits: Limits
) -> None:
    for index, cell in enumerate(client.nb.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            run.stopped = f"the notebook's time limit ({limits.time_limit:g} s) ran out before {describe(cell, index)}"
            return
        timeout = min(limits.cell_timeout, remaining)
        client.timeout = max(1, math.ceil(timeout))
        try:
            await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
        except CellTimeoutError:
            if timeout < limits.cell_timeout:
                limit = f"the notebook's time limit ({limits.time_limit:g} s)"
                run.cells[index] = CellRun("stopped", evalue=f"was still running when {limit} ran out")
                run.stopped = f"the notebook's time limit ({limits.time_limit:g} s) ran out in {describe(cell, index)}"
                return
            interrupted = f"did not finish within {limits.cell_timeout:g} s (interrupted)"
            run.cells[index] = CellRun("stopped", evalue=interrupted)
            if not await _interrupt(client):
                run.stopped = f"{describe(cell, index)} did not finish and the kernel did not stop when interrupted"
                return
            continue
        except DeadKernelError:
            if asyncio.current_task().cancelling():  # Ctrl-C: nbclient turns the cancellation into DeadKernelError
                raise asyncio.CancelledError from None
            run.cells[index] = CellRun("stopped", evalue="made the kernel die (it crashed or exited)")
            run.stopped = f"the kernel died in {describe(cell, index)}"
            return
        run.cells[index] = _cell_run(cell, replies.get(index, {}).get("content", {}))


def _cell_run(cell: Any, reply: dict[str, Any]) -> CellRun:
    stdout = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    if reply.get("status") == "error":
        return CellRun("error", reply.get("ename", "Error"), reply.get("evalue", ""), stdout)
    return CellRun("ok", stdout=stdout)


async def _interrupt(client: NotebookClient) -> bool:
    """Interrupt the running cell; True if the kernel answers again within :data:`RECOVER_SECONDS`."""
    for task in asyncio.all_tasks() - {asyncio.current_task()}:
        task.cancel()  # nbclient's reader of the timed-out cell's output would steal the next cell's messages
    await client.km.interrupt_kernel()
    try:
        await client.kc.kernel_info(reply=True, timeout=RECOVER_SECONDS)
    except TimeoutError:
        return False
    return True


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


async def stop_kernel(manager: AsyncKernelManager, *, now: bool = False) -> None:
    """Shut the kernel down and kill every process it started (found before the shutdown)."""
    if not manager.has_kernel:
        return
    pid = getattr(manager.provisioner, "pid", None)
    family = descendants(pid) if pid else []
    manager.shutdown_wait_time = SHUTDOWN_SECONDS
    with contextlib.suppress(Exception):  # a kernel that cannot be shut down politely is killed below
        await asyncio.wait_for(manager.shutdown_kernel(now=now), SHUTDOWN_SECONDS * 2)
    kill_all(family)
