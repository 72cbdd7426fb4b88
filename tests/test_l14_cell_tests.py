"""run_cell_tests: a cell's tests run by real pytest, shown as one line per test and the counts, nothing left."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from mcp_teach.lessons.l14_cell_tests import run_cell_tests

PASSING_AND_FAILING = """
import pytest

def test_adds():
    assert 1 + 2 == 3

def test_compares():
    assert [1, 2] == [1, 3]

@pytest.mark.anyio
async def test_awaits():
    import anyio
    await anyio.sleep(0)

@pytest.mark.xfail(strict=True, reason="a known deviation")
def test_known_deviation():
    assert False

@pytest.mark.skip(reason="not here")
def test_skipped():
    pass
"""


def leftovers() -> set[str]:
    return {path.name for path in Path(tempfile.gettempdir()).glob("mcp-teach-tests-*")}


def test_each_test_is_one_line_and_the_counts_have_no_time() -> None:
    before = leftovers()
    run = run_cell_tests(PASSING_AND_FAILING)
    assert repr(run).splitlines() == [
        "PASSED test_cell.py::test_adds",
        "FAILED test_cell.py::test_compares - assert [1, 2] == [1, 3]",
        "PASSED test_cell.py::test_awaits[asyncio]",
        "XFAIL test_cell.py::test_known_deviation - a known deviation",
        "SKIPPED test_cell.py::test_skipped - not here",
        "1 failed, 2 passed, 1 skipped, 1 xfailed",
    ]
    assert not run.passed and run.exit_code == 1
    assert leftovers() == before
    assert not any("mcp-teach-tests-" in str(getattr(module, "__file__", "")) for module in list(sys.modules.values()))


def test_a_passing_run_and_a_broken_file() -> None:
    assert run_cell_tests("def test_ok():\n    pass\n").passed
    broken = run_cell_tests("def test_x(:\n    pass\n")
    assert repr(broken) == "ERROR test_cell.py - E   SyntaxError: invalid syntax\n1 error"
    assert broken.exit_code == 2


def test_an_unexpected_pass_of_a_strict_xfail_fails_the_run() -> None:
    run = run_cell_tests("import pytest\n\n@pytest.mark.xfail(strict=True, reason='r')\ndef test_z():\n    pass\n")
    assert repr(run) == "FAILED test_cell.py::test_z - [XPASS(strict)] r\n1 failed"
    assert not run.passed


def test_the_environments_plugins_stay_unloaded_and_the_variable_is_restored(monkeypatch) -> None:
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    run = run_cell_tests(
        "def test_no_nbval(pytestconfig):\n    assert not pytestconfig.pluginmanager.has_plugin('nbval')\n"
    )
    assert run.passed
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ


def test_a_failing_fixture_is_an_error_not_a_failure() -> None:
    run = run_cell_tests(
        "import pytest\n\n@pytest.fixture\ndef f():\n    raise ValueError('boom')\n\ndef test_y(f):\n    pass\n"
    )
    assert repr(run) == "ERROR test_cell.py::test_y - ValueError: boom\n1 error"


def test_forced_colours_never_reach_the_lines(monkeypatch) -> None:
    """Some terminals and notebooks set PY_COLORS or FORCE_COLOR: pytest then colours its report's text."""
    monkeypatch.setenv("PY_COLORS", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    broken = run_cell_tests("def test_bad(:\n    pass\n")
    failing = run_cell_tests("def test_no():\n    assert 1 == 2\n")
    assert repr(broken) == "ERROR test_cell.py - E   SyntaxError: invalid syntax\n1 error"
    assert repr(failing).startswith("FAILED test_cell.py::test_no - assert 1 == 2") and "\x1b" not in repr(failing)
