"""tests/nbval_leftovers.py: a notebook that leaves a file or a process behind fails its nbval run, and says where."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
HANG_TIMEOUT = 300  # a kernel start on a busy machine; nothing here is timed

LEAKS = [
    "import tempfile\nkept = tempfile.mkdtemp(prefix='forgotten-')",
    # In a session of its own: jupyter_client kills the kernel's process group when the kernel ends.
    "import subprocess, sys\n"
    "server = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)",
    "print('done')",
]
TIDY = [
    "from mcp_teach.lessons.scratch import scratch_folder\nnotes = scratch_folder('notes')\n"
    "(notes / 'a.json').write_text('{}')",
    "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass'], check=True)",
]


def _run_nbval(folder: Path, name: str, cells: list[str]) -> subprocess.CompletedProcess[str]:
    nbformat.write(new_notebook(cells=[new_code_cell(source) for source in cells]), folder / name)
    command = [sys.executable, "-m", "pytest", "-p", "tests.nbval_leftovers", "-p", "no:cacheprovider", "-q", name]
    # A leftover process is waited for one second here, not the run's generous limit.
    command += ["-o", "nbval_leftovers_exit_seconds=1", "--rootdir", str(folder), "--nbval-lax", "--nbval-current-env"]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, timeout=HANG_TIMEOUT, check=False
    )


def test_a_leaking_notebook_fails_its_last_cell_naming_each_leftover_and_its_cell(tmp_path):
    done = _run_nbval(tmp_path, "leaky.ipynb", LEAKS)
    assert done.returncode == 1, done.stdout + done.stderr
    report = done.stdout
    assert "ERROR at teardown of leaky.ipynb::Cell 2" in report and "leaky.ipynb left things behind" in report
    assert "forgotten-" in report and "in the temporary folder, made by Cell 0" in report
    assert "still running, started by Cell 1" in report and "time.sleep(600)" in report
    assert "3 passed, 1 error" in report


def test_a_lesson_that_cleans_up_at_kernel_exit_passes(tmp_path):
    done = _run_nbval(tmp_path, "tidy.ipynb", TIDY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
