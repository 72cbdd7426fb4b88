"""Folders for the files a lesson makes (notes, a workspace, a planted link), gone when the kernel is.

A lesson run top to bottom, again and again, must not fill the temporary folder: every folder made here lies in
one per-kernel folder, ``mcp-teach-lesson-<pid>-…``, removed with all it holds when the kernel exits. A kernel
that is killed (nbval, a restart, the browser's shutdown) runs no exit code, so the next kernel to make a scratch
folder first removes those of kernels that are gone, and the test suite does the same when it ends.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import psutil

PREFIX = "mcp-teach-lesson-"
_ROOT: list[Path] = []


def scratch_folder(name: str) -> Path:
    """A new empty folder called ``name-<random>``, removed when the kernel exits."""
    if not _ROOT:
        remove_abandoned()
        root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _ROOT.append(root)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_ROOT[0]))


def remove_abandoned(folder: Path | None = None) -> list[Path]:
    """Remove this user's scratch folders in ``folder`` (the temporary folder) whose kernel is gone; return them."""
    removed = []
    for path in Path(folder or tempfile.gettempdir()).glob(PREFIX + "*"):
        pid = path.name.removeprefix(PREFIX).partition("-")[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)) and _mine(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _mine(path: Path) -> bool:
    """Whether the current user owns ``path`` (always, where the system has no user ids)."""
    return not hasattr(os, "getuid") or path.lstat().st_uid == os.getuid()
