"""Every lesson run under nbval leaves nothing behind: no file in the temporary folder, no process.

A pytest plugin (loaded by the root ``conftest.py``), riding on the nbval run the test command does anyway. Each
notebook's kernel starts with its own empty temporary folder (``TMPDIR``, ``TEMP`` and ``TMP``, which Python's
``tempfile``, Node and the shell all honour), so files that other programs on the machine write to ``/tmp`` cannot
be mistaken for the lesson's. After each cell the folder's entries and the kernel's processes are noted, with the
cell that first showed them. After the last cell the kernel is shut down as JupyterLab does (a shutdown request,
so exit handlers run; nbval alone would kill it), and whatever is still in the folder or still running fails the
notebook's last item, each leftover named with the cell that made it. Leftover processes are then killed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

#: The variables that name the temporary folder (POSIX, then Windows).
TEMPORARY_VARIABLES = ("TMPDIR", "TEMP", "TMP")
#: Where a lesson makes the project a learner keeps (lesson 13's my-capstone/): not in the repository.
PROJECT_PARENT = "MCP_TEACH_PROJECT_PARENT"
#: The ini option: how long the kernel's processes get to end after the kernel did (a stdio server notices its
#: closed stdin); generous for a busy machine, and only a leftover makes the run wait that long.
EXIT_SECONDS = "nbval_leftovers_exit_seconds"
_STATE = pytest.StashKey["_Notebook"]()
_SESSION_FOLDER = pytest.StashKey[Path]()


@dataclass
class _Notebook:
    """One notebook's temporary folder and what its cells were seen to make there and start."""

    folder: Path
    kernel_pid: int = 0
    entries: dict[str, int] = field(default_factory=dict)  # name -> the cell after which it was seen
    processes: dict[int, tuple[psutil.Process, int]] = field(default_factory=dict)  # pid -> (process, cell)

    def note(self, cell: int) -> None:
        """Note the folder's entries and the kernel's processes, with ``cell`` for those not seen before."""
        for entry in self.folder.iterdir():
            self.entries.setdefault(entry.name, cell)
        with contextlib.suppress(psutil.Error):
            for process in psutil.Process(self.kernel_pid).children(recursive=True):
                self.processes.setdefault(process.pid, (process, cell))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(EXIT_SECONDS, "seconds a lesson's processes may take to end after its kernel", default="30")


def _is_cell(item: pytest.Item) -> bool:
    return type(item).__name__ == "IPyNbCell"


def _session_folder(config: pytest.Config) -> Path:
    if _SESSION_FOLDER not in config.stash:
        config.stash[_SESSION_FOLDER] = Path(tempfile.mkdtemp(prefix="mcp-teach-nbval-"))
    return config.stash[_SESSION_FOLDER]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item):
    """Before a notebook's first cell (its kernel starts then): point the kernel at an empty temporary folder."""
    notebook = item.parent
    if not _is_cell(item) or _STATE in notebook.stash:
        return (yield)
    state = _Notebook(Path(tempfile.mkdtemp(prefix=f"{Path(notebook.name).stem}-", dir=_session_folder(item.config))))
    notebook.stash[_STATE] = state
    saved = {name: os.environ.get(name) for name in (*TEMPORARY_VARIABLES, PROJECT_PARENT)}
    os.environ.update(dict.fromkeys(TEMPORARY_VARIABLES, str(state.folder)))
    # Lesson 13's project folder, which a learner keeps beside the lesson: here in the session's folder.
    os.environ[PROJECT_PARENT] = tempfile.mkdtemp(prefix="projects-", dir=state.folder.parent)
    try:
        result = yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    kernel = getattr(notebook, "kernel", None)
    if kernel is not None:
        state.kernel_pid = kernel.km.provisioner.pid
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    try:
        return (yield)
    finally:
        if _is_cell(item) and (state := item.parent.stash.get(_STATE, None)) is not None:
            state.note(item.cell_num)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """After a notebook's last cell: shut its kernel down as JupyterLab does and fail on what is left."""
    notebook = item.parent
    last = nextitem is None or nextitem.parent is not notebook
    state = notebook.stash.get(_STATE, None) if _is_cell(item) and last else None
    if state is None:
        return (yield)
    state.note(item.cell_num)
    kernel = getattr(notebook, "kernel", None)
    if kernel is not None and kernel.is_alive():
        kernel.km.shutdown_kernel(now=False)  # a shutdown request, then a kill if the kernel does not exit
        kernel.kc.stop_channels()
    result = yield
    try:
        problems = _leftovers(state, float(item.config.getini(EXIT_SECONDS)))
    finally:
        shutil.rmtree(state.folder, ignore_errors=True)
    if problems:
        pytest.fail(f"{notebook.name} left things behind:\n" + "\n".join(problems), pytrace=False)
    return result


def _leftovers(state: _Notebook, exit_seconds: float) -> list[str]:
    """What is still there, each with the cell that made it; the processes are killed."""
    watched = [process for process, _ in state.processes.values()]
    _, alive = psutil.wait_procs(watched, timeout=exit_seconds)
    problems = []
    for process in alive:
        cell = state.processes[process.pid][1]
        with contextlib.suppress(psutil.Error):
            problems.append(f"  process {process.pid} still running, started by Cell {cell}: {process.cmdline()}")
            process.kill()
    for entry in sorted(state.folder.iterdir()):
        inside = sorted(inner.name for inner in entry.iterdir()) if entry.is_dir() and not entry.is_symlink() else []
        holding = f", holding {', '.join(inside[:10])}" if inside else ""
        made_by = state.entries.get(entry.name, "?")
        problems.append(f"  {entry.name} in the temporary folder, made by Cell {made_by}{holding}")
    return problems


def pytest_unconfigure(config: pytest.Config) -> None:
    if (folder := config.stash.get(_SESSION_FOLDER, None)) is not None:
        shutil.rmtree(folder, ignore_errors=True)
