"""mcp_teach.lessons.scratch: a lesson's folders go with its kernel, also when the kernel was killed."""

from __future__ import annotations

import os
import subprocess
import sys

from mcp_teach.lessons.scratch import PREFIX, remove_abandoned

MAKE_ONE = "from mcp_teach.lessons.scratch import scratch_folder; print(scratch_folder('notes'))"
MAKE_ONE_AND_DIE = MAKE_ONE + "; import os, sys; sys.stdout.flush(); os._exit(0)"  # no exit code runs, as if killed


def _made_by(code: str, folder) -> str:
    """What ``code`` printed, run in a fresh interpreter whose temporary folder is ``folder``."""
    environment = {**os.environ, "TMPDIR": str(folder)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True)
    return done.stdout


def test_a_kernel_that_exits_takes_its_folders_with_it(tmp_path):
    made = _made_by(MAKE_ONE, tmp_path).strip()
    assert made.startswith(str(tmp_path / PREFIX)) and list(tmp_path.iterdir()) == []


def test_the_folders_of_a_killed_kernel_are_removed_by_the_next_one(tmp_path):
    first = _made_by(MAKE_ONE_AND_DIE, tmp_path).strip()
    assert os.path.isdir(first)  # its kernel is gone, and nothing removed it
    _made_by(MAKE_ONE, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_only_folders_of_gone_kernels_are_removed(tmp_path):
    alive = tmp_path / f"{PREFIX}{os.getpid()}-kept"
    other = tmp_path / "mcp-teach-something-else"
    for folder in (alive, other):
        folder.mkdir()
    assert remove_abandoned(tmp_path) == [] and alive.is_dir() and other.is_dir()
