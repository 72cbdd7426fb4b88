"""Folders for the files a lesson makes (notes, a workspace, a planted link), gone when the kernel exits.

A lesson run top to bottom, again and again, must not fill the temporary folder: every folder made here lies
in one per-kernel folder, removed with all it holds when the kernel shuts down (also under nbval and
``mcp-teach grade``, whose kernels exit normally).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

_ROOT: list[Path] = []


def scratch_folder(name: str) -> Path:
    """A new empty folder called ``name-<random>``, removed when the kernel exits."""
    if not _ROOT:
        root = Path(tempfile.mkdtemp(prefix="mcp-teach-lesson-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _ROOT.append(root)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_ROOT[0]))
