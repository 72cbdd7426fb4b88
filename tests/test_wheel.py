"""The course from one install: the wheel carries every lesson, and a student without the repository can run them.

The wheel is built as ``pip install`` builds it (in an isolated environment with the build backend pyproject names)
from a copy of the source, so the repository gets no ``build/`` folder. It is installed into a fresh virtual
environment that sees the test environment's packages through a ``.pth`` file (nothing is downloaded) but not the
repository: ``mcp_teach`` must come from the wheel. There ``mcp-teach lessons`` copies the course into an empty
folder, and three lessons run under nbval in that folder as they are stored, by plain ``pytest`` there (the course
carries its own nbval settings).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache",
    ".ipynb_checkpoints", "artifacts", "node_modules",
)  # fmt: skip
#: Quick lessons run from the copied course (their cells take about 3 s in all on an idle machine).
LESSONS_RUN = ("00_setup.ipynb", "01_handshake.ipynb", "03_tools_call.ipynb")
TIMEOUT = 300  # only stops a hung step


def run(command: list[str], **options) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, **options)
    assert result.returncode == 0, f"{command[:4]} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source") / "mcp-teach"
    shutil.copytree(REPOSITORY, source, ignore=NOT_SOURCE)
    out = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(source)])
    shutil.rmtree(source.parent)
    (built,) = out.glob("mcp_teach-*.whl")
    return built


def repository_lessons(language: str = "") -> list[str]:
    """The lessons (blank and solved) of one edition: ``""`` the English, ``"zh"`` the Chinese."""
    root = REPOSITORY / "notebooks" / language
    found = [root / "tour.ipynb", *root.glob("[0-9][0-9]_*.ipynb"), root / "solutions" / "tour.ipynb"]
    found += (root / "solutions").glob("[0-9][0-9]_*.ipynb")
    return sorted(path.relative_to(root).as_posix() for path in found)


def test_the_wheel_carries_the_package_every_lesson_and_the_licences(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    lessons = sorted(name.removeprefix("mcp_teach/notebooks/") for name in names if name.endswith(".ipynb"))
    assert lessons == sorted([*repository_lessons(), *(f"zh/{name}" for name in repository_lessons("zh"))])
    modules = sorted(path.relative_to(REPOSITORY).as_posix() for path in (REPOSITORY / "mcp_teach").rglob("*.py"))
    modules.append("mcp_teach/notebooks/conftest.py")  # with nbval_sanitize.cfg: pytest in a course folder runs nbval
    assert sorted(name for name in names if name.endswith(".py")) == sorted(modules)  # no subpackage left out
    assert "mcp_teach/notebooks/nbval_sanitize.cfg" in names
    assert {"mcp_teach/servers/knowledge_docs/tools.md", "mcp_teach/servers/knowledge_docs/connection.png"} <= set(
        names
    )
    assert "mcp_teach/locale/zh/LC_MESSAGES/checks.po" in names  # a Chinese lesson's checks read it
    licences = {name.rpartition("/")[2] for name in names if "/licenses/" in name}
    assert licences == {"LICENSE", "LICENSE-CONTENT"}
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("/METADATA"))).decode()
    assert "License-Expression: MIT AND CC-BY-4.0" in metadata
    assert "Project-URL: Homepage, https://github.com/mcp-teach/mcp-teach" in metadata


def test_a_student_without_the_repository_gets_the_course_and_runs_it(wheel, tmp_path):
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=False, symlinks=os.name != "nt")
    python = environment / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    # After its own site-packages, where the wheel goes: the test environment's packages, not the repository.
    Path(purelib, "test-environment.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)])
    home = tmp_path / "student"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH" and not key.startswith("MCP_")}
    env |= {"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PATH": f"{python.parent}{os.pathsep}{env['PATH']}"}

    where = run([str(python), "-c", "import mcp_teach; print(mcp_teach.__file__)"], cwd=home, env=env).stdout
    assert Path(where.strip()).is_relative_to(environment), where

    copied = run([str(python.with_name("mcp-teach")), "lessons"], cwd=home, env=env)
    assert re.match(r"copied the course of mcp-teach \S+ into mcp-teach-course: \d+ lessons", copied.stdout)
    course = home / "mcp-teach-course"
    assert sorted(p.relative_to(course).as_posix() for p in course.rglob("*.ipynb")) == repository_lessons()

    # As an instructor checks a student's copy: plain pytest in the folder (its conftest.py turns nbval on).
    result = run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *LESSONS_RUN], cwd=course, env=env)
    cells = sum(
        cell["cell_type"] == "code" for name in LESSONS_RUN for cell in json.loads((course / name).read_text())["cells"]
    )
    assert f"{cells} passed" in result.stdout and "failed" not in result.stdout, result.stdout  # nbval: a test a cell

    # The Chinese edition, beside it, with the same nbval settings (one quick lesson runs there as stored).
    copied = run([str(python.with_name("mcp-teach")), "lessons", "--lang", "zh"], cwd=home, env=env)
    assert re.match(r"copied the course of mcp-teach \S+ into mcp-teach-course-zh: \d+ lessons", copied.stdout)
    course = home / "mcp-teach-course-zh"
    assert sorted(p.relative_to(course).as_posix() for p in course.rglob("*.ipynb")) == repository_lessons("zh")
    result = run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "01_handshake.ipynb"], cwd=course, env=env
    )
    assert " passed" in result.stdout and "failed" not in result.stdout, result.stdout
