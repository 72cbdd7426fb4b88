"""mcp-teach lab: the course's opening command starts JupyterLab on the lessons, also as root."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from support import HANG_TIMEOUT

MCP_TEACH = shutil.which("mcp-teach") or str(Path(__file__).resolve().parent.parent / ".venv" / "bin" / "mcp-teach")


def test_lab_serves_the_lessons_folder_and_stops_on_sigterm(tmp_path):
    (tmp_path / "00_demo.ipynb").write_text("{}")
    lab = subprocess.Popen(
        [MCP_TEACH, "lab", str(tmp_path), "--no-browser", "--ip=127.0.0.1", "--port=0", f"--notebook-dir={tmp_path}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")},
    )
    seen = []
    deadline = time.monotonic() + HANG_TIMEOUT
    try:
        for line in lab.stdout:
            seen.append(line)
            if "is running at" in line or time.monotonic() > deadline:
                break
        assert any("is running at" in line for line in seen), "".join(seen)  # as root: only with --allow-root
        assert seen[0].startswith("Opening JupyterLab; stop it with Ctrl-C")
    finally:
        lab.send_signal(signal.SIGTERM)
        lab.wait(timeout=HANG_TIMEOUT)


def test_a_missing_folder_names_the_fix(tmp_path):
    result = subprocess.run(
        [MCP_TEACH, "lab", str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=HANG_TIMEOUT
    )
    assert result.returncode == 2 and "run it from the course's folder" in result.stdout
