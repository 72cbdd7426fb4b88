"""run_cell_tests: a cell's tests run by real pytest, shown as one line per test and the counts, nothing left."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from mcp_teach.lessons.cell_tests import run_cell_tests

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
        "1 failed, 2 passed",
    ]
    assert not run.passed and run.exit_code == 1
    assert leftovers() == before
    assert not any("mcp-teach-tests-" in str(getattr(module, "__file__", "")) for module in list(sys.modules.values()))


def test_a_passing_run_and_a_broken_file() -> None:
    assert run_cell_tests("def test_ok():\n    pass\n").passed
    broken = run_cell_tests("def test_x(:\n    pass\n")
    assert repr(broken) == "ERROR test_cell.py - E   SyntaxError: invalid syntax\n1 error"
    assert broken.exit_code == 2


def test_a_failing_fixture_is_an_error_not_a_failure() -> None:
    run = run_cell_tests(
        "import pytest\n\n@pytest.fixture\ndef f():\n    raise ValueError('boom')\n\ndef test_y(f):\n    pass\n"
    )
    assert repr(run) == "ERROR test_cell.py::test_y - ValueError: boom\n1 error"
