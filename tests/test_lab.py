"""mcp-teach lab: the course's opening command starts JupyterLab on the lessons, also as root."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from support import HANG_TIMEOUT

MCP_TEACH = shutil.which("mcp-teach") or str(Path(__file__).resolve().parent.parent / ".venv" / "bin" / "mcp-teach")


def start_lab(arguments: list[str], cwd: Path, runtime: Path) -> tuple[list[str], list[str]]:
    """Run ``mcp-teach lab ARGUMENTS`` until JupyterLab serves; its output so far and its command line then."""
    lab = subprocess.Popen(
        [MCP_TEACH, "lab", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)},
    )
    seen = []
    deadline = time.monotonic() + HANG_TIMEOUT
    try:
        for line in lab.stdout:
            seen.append(line)
            if "is running at" in line or time.monotonic() > deadline:
                break
        assert any("is running at" in line for line in seen), "".join(seen)  # as root: only with --allow-root
        return seen, psutil.Process(lab.pid).cmdline()  # execv kept the process: JupyterLab's command line
    finally:
        lab.send_signal(signal.SIGTERM)
        lab.wait(timeout=HANG_TIMEOUT)


def test_lab_serves_the_lessons_folder_and_stops_on_sigterm(tmp_path):
    (tmp_path / "00_demo.ipynb").write_text("{}")
    options = ["--no-browser", "--ip=127.0.0.1", "--port=0", f"--notebook-dir={tmp_path}"]
    seen, command = start_lab([str(tmp_path), *options], tmp_path, tmp_path / "runtime")
    assert seen[0].startswith("Opening JupyterLab; stop it with Ctrl-C")
    assert str(tmp_path / "00_demo.ipynb") in command  # the first lesson opens, its folder is JupyterLab's root


@pytest.mark.parametrize("where", ["clone", "course-folder", "elsewhere", "clone-zh", "elsewhere-zh"])
def test_lab_without_a_folder_opens_the_clones_lessons_or_the_course_folder_or_copies_the_course(tmp_path, where):
    """``--lang zh``: the Chinese edition, ``notebooks/zh`` in a clone, else copied into ``./mcp-teach-course-zh``."""
    cwd = tmp_path / "cwd"
    lessons = {"clone": cwd / "notebooks", "course-folder": cwd, "clone-zh": cwd / "notebooks" / "zh"}.get(where)
    (lessons or cwd).mkdir(parents=True)
    if lessons:
        (lessons / "00_mine.ipynb").write_text("{}")
    if where == "course-folder":
        (cwd / ".mcp-teach-course.json").write_text('{"files": {}}')
    language = ["--lang", "zh"] if where.endswith("-zh") else []
    seen, command = start_lab([*language, "--no-browser", "--ip=127.0.0.1", "--port=0"], cwd, tmp_path / "runtime")
    opened = (lessons / "00_mine.ipynb").relative_to(cwd).as_posix() if lessons else None
    if where.startswith("elsewhere"):
        folder = "mcp-teach-course-zh" if language else "mcp-teach-course"
        assert seen[0].startswith("copied the course of mcp-teach ")
        assert (cwd / folder / "solutions" / "00_setup.ipynb").is_file()
        opened = f"{folder}/00_setup.ipynb"
    assert command[command.index("jupyterlab") + 1] == opened


def test_a_missing_folder_names_the_fix(tmp_path):
    result = subprocess.run(
        [MCP_TEACH, "lab", str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=HANG_TIMEOUT
    )
    assert result.returncode == 2 and "run it from the course's folder" in result.stdout
