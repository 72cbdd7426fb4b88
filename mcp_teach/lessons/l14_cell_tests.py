"""Run a cell's pytest tests for real: the source as a test file in a temporary folder, collected and run by pytest.

Lesson 14 writes its tests in cells, as a project keeps them in ``tests/``. pytest runs in this process, on a
thread of its own (anyio's plugin then runs each ``async`` test in a fresh event loop, not the kernel's), because
a fresh interpreter spends about two seconds importing pytest and fastmcp before the first test. What a reader
looks for is all that is shown: one line per test and the counts, without timings, the same on every run.
pytest's own report goes nowhere; the folder and the imported test module are removed afterwards.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

#: pytest's options: no cache folder, anyio's plugin, no change to ``sys.path``, no options from a config file.
PYTEST_OPTIONS = ("-q", "-p", "no:cacheprovider", "-p", "anyio", "--import-mode=importlib", "-o", "addopts=")
#: Set while pytest starts: no other installed plugin is loaded (nbval, hypothesis... would take seconds).
NO_AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
#: Terminal colour codes: pytest writes them into a report's text when the environment forces colour.
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True, repr=False)
class CellTestRun:
    """What pytest reported: one line per test (``PASSED test_cell.py::test_x``), the counts and the exit code."""

    lines: tuple[str, ...]
    exit_code: int

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def __repr__(self) -> str:  # what a notebook shows: pytest's summary lines, as ``pytest -rA`` prints them
        return "\n".join(self.lines)


class _Outcomes:
    """A pytest plugin that keeps each test's outcome line, in the order the tests ran."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.counts: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.outcome != "passed":  # setup and teardown count only when they fail
            outcome = "error" if report.when != "call" and report.outcome == "failed" else report.outcome
            crash = getattr(report.longrepr, "reprcrash", None)
            reason = crash.message if crash is not None else str(report.longrepr or "")
            if isinstance(report.longrepr, tuple):  # a skip: (file, line, reason)
                reason = report.longrepr[2].removeprefix("Skipped: ")
            if hasattr(report, "wasxfail"):  # a test marked xfail: it failed as expected, or passed unexpectedly
                outcome, reason = ("xfailed" if report.skipped else "xpassed"), report.wasxfail
            self.counts[outcome] += 1
            label = {"xfailed": "XFAIL", "xpassed": "XPASS"}.get(outcome, outcome.upper())
            reason = _COLOURS.sub("", reason)  # PY_COLORS or FORCE_COLOR in the kernel's environment colours them
            self.lines.append(f"{label} {report.nodeid}" + (f" - {reason.splitlines()[0]}" if reason.strip() else ""))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.counts["error"] += 1
            reason = _COLOURS.sub("", str(report.longrepr)).strip()
            self.lines.append(f"ERROR {report.nodeid} - {reason.splitlines()[-1]}")


def run_cell_tests(source: str, *, file_name: str = "test_cell.py") -> CellTestRun:
    """Write ``source`` to ``file_name`` in a temporary folder and run pytest on it; the result shows its lines."""
    outcomes = _Outcomes()
    exit_code: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="mcp-teach-tests-") as folder:
        path = Path(folder, file_name)
        path.write_text(source, encoding="utf-8")
        arguments = [*PYTEST_OPTIONS, "--rootdir", folder, str(path)]

        def run() -> None:
            exit_code.append(pytest.main(arguments, plugins=[outcomes]))

        no_output, no_errors = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
        with mock.patch.dict(os.environ, {NO_AUTOLOAD: "1"}), no_output, no_errors:
            thread = threading.Thread(target=run, name="cell-tests")
            thread.start()
            thread.join()
    for name in [name for name, module in sys.modules.items() if getattr(module, "__file__", None) == str(path)]:
        del sys.modules[name]
    counts = ", ".join(f"{number} {outcome}" for outcome, number in sorted(outcomes.counts.items()))
    return CellTestRun((*outcomes.lines, counts or "no tests ran"), int(exit_code[0]) if exit_code else 3)
