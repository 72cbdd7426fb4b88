"""Hosted notebooks: Binder builds what the quick start installs; on Colab each lesson's first cell installs the course.

The project's home is written once in pyproject (``[project.urls]``); the README, the badges and every lesson's
install cell must name the same repository.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
HOME = PYPROJECT["project"]["urls"]["Homepage"]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLANK, SOLVED = ROOT / "notebooks", ROOT / "notebooks" / "solutions"
LESSONS = [folder / "tour.ipynb" for folder in (BLANK, SOLVED)]
LESSONS += [*sorted(BLANK.glob("[0-9][0-9]_*.ipynb")), *sorted(SOLVED.glob("[0-9][0-9]_*.ipynb"))]
#: The first code cell of every lesson, solved and blank.
INSTALL_CELL = f"""\
# Colab or another hosted Jupyter: install the course from its home first (where it is installed, this does nothing)
import importlib.util

if importlib.util.find_spec("mcp_teach") is None:
    %pip install --quiet "mcp-teach @ git+{HOME}\""""


def first_code_cell(path: Path) -> dict:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next(cell for cell in cells if cell["cell_type"] == "code")


@pytest.mark.parametrize("lesson", LESSONS, ids=[f"{path.parent.name}/{path.stem}" for path in LESSONS])
def test_every_lessons_first_cell_installs_the_course_where_it_is_missing_and_prints_nothing(lesson):
    cell = first_code_cell(lesson)
    assert "".join(cell["source"]) == INSTALL_CELL
    assert cell["outputs"] == []  # run where the course is installed: silent, so the stored outputs stay as they were


RUN_THE_CELL = """
import importlib.abc, json, sys
from IPython.core.interactiveshell import InteractiveShell

class WithoutTheCourse(importlib.abc.MetaPathFinder):  # every finder of this interpreter, blind to mcp_teach only
    def __init__(self, finders):
        self.finders = finders

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "mcp_teach":
            return None
        for finder in self.finders:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                return spec
        return None

shell = InteractiveShell.instance()
asked = []
shell.register_magic_function(asked.append, magic_name="pip")  # records what %pip would install
if sys.argv[1] == "missing":  # a kernel without the package, as on Colab
    sys.meta_path[:] = [WithoutTheCourse(list(sys.meta_path))]
shell.run_cell(json.loads(sys.argv[2]), silent=True).raise_error()
print(json.dumps(asked))
"""


@pytest.mark.parametrize(("course", "installs"), [("missing", True), ("installed", False)])
def test_the_install_cell_runs_pip_only_without_the_course(tmp_path, course, installs):
    command = [sys.executable, "-c", RUN_THE_CELL, course, json.dumps(INSTALL_CELL)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=True)
    expected = [f'install --quiet "mcp-teach @ git+{HOME}"'] if installs else []
    assert (json.loads(result.stdout), result.stderr) == (expected, "")


def test_the_home_is_written_once_and_every_link_names_it():
    owner_and_name = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", HOME).group(1)
    assert f"The project's home is **{HOME}**" in README
    binder = re.search(r"\(https://mybinder\.org/v2/gh/([\w.-]+/[\w.-]+)/HEAD\?urlpath=lab/tree/(\S+?)\)", README)
    colab = re.search(r"\(https://colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/blob/main/(\S+?)\)", README)
    assert binder and colab, "the Binder and Colab badges"
    assert binder.group(1) == colab.group(1) == owner_and_name
    assert (ROOT / binder.group(2)).is_file() and (ROOT / colab.group(2)).is_file()
    others = set(re.findall(r"github\.com/(mcp-teach/[\w.-]+)", README)) - {owner_and_name}
    assert not others, f"another repository named as the course's: {others}"


def quick_start_install() -> list[str]:
    """The arguments of ``pip install`` in the README's first quick-start command."""
    line = next(line for line in README.splitlines() if line.startswith("python3 -m venv .venv && .venv/bin/pip"))
    words = shlex.split(line.split("&&")[1])
    return words[words.index("install") + 1 :]


def test_binder_installs_the_course_as_the_quick_start_does_on_a_python_the_package_supports():
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    version = re.fullmatch(r"python-(\d+\.\d+)", runtime).group(1)
    assert f"{version}.0" in SpecifierSet(PYPROJECT["project"]["requires-python"])
    post_build = ROOT / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK), "repo2docker runs postBuild only when it is executable"
    lines = [line for line in post_build.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert lines[0] == "set -euo pipefail"  # a failed install fails the build, not the first lesson
    (install,) = [shlex.split(line) for line in lines if " pip install " in line]
    assert install[:4] == ["python", "-m", "pip", "install"]
    assert [word for word in install[4:] if word != "--no-cache-dir"] == quick_start_install() == ["-e", "."]


SPAWNED_BY_NAME = re.compile(r"""(\[\s*|command\s*=\s*|"command":\s*)["']python3?["']""")


def test_servers_are_started_with_the_kernels_own_interpreter():
    """A hosted kernel's ``python`` on PATH is not always the one the course was installed into: sys.executable is."""
    sources = {path: path.read_text(encoding="utf-8") for path in (ROOT / "mcp_teach").rglob("*.py")}
    for lesson in LESSONS:
        cells = json.loads(lesson.read_text(encoding="utf-8"))["cells"]
        sources[lesson] = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    by_name = [f"{path.relative_to(ROOT)}: {match.group(0)}" for path, text in sources.items() for match in
               SPAWNED_BY_NAME.finditer(text)]  # fmt: skip
    assert by_name == []
    assert "sys.executable" in (ROOT / "mcp_teach" / "transports" / "in_process.py").read_text()
