"""benchmarks/notebook_times.py: the budget rules and cell summaries on made-up timings, and one real timed run."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import nbformat
import pytest

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "notebook_times.py"


@pytest.fixture(scope="module")
def times():
    """The benchmark script, imported as a module."""
    spec = importlib.util.spec_from_file_location("notebook_times", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def lesson(times, name: str, *seconds: float):
    """A made-up lesson whose code cells took ``seconds``."""
    cells = [times.CellTiming(number, value, f"step_{number}()") for number, value in enumerate(seconds)]
    return times.LessonTiming(name, cells=cells)


UNIT = 2.0  # seconds of the reference task in these made-up runs


def test_within_budget(times) -> None:
    lessons = [lesson(times, "00_setup", 1.9, 1.9, 1.9), lesson(times, "01_handshake", 2.0, 2.0)]
    assert times.budget_breaches(lessons, UNIT) == []
    assert "  ok" in times.report(lessons, UNIT)


def test_budgets_are_multiples_of_the_reference_unit(times) -> None:
    lessons = [lesson(times, "00_setup", 1.9, 1.9, 1.9)]
    assert times.budget_breaches(lessons, UNIT) == []
    assert times.budget_breaches(lessons, 0.5) == [
        "mean over 1 lesson (latency lab and capstone left out): 11.40 units of cells > 5",
        *(f"00_setup cell {n}: 3.80 units > 2.5  step_{n}()" for n in range(3)),
    ]
    assert "reference unit: 2.00 s" in "\n".join(times.report(lessons, UNIT))


def test_the_reference_is_a_real_stdio_server_started_and_called(times) -> None:
    [seconds] = times.reference_seconds(runs=1)
    assert 0.2 < seconds < 30


def test_mean_rule_allows_one_long_lesson_when_the_others_are_short(times) -> None:
    balanced = [lesson(times, "00_a", *[1.0] * 14), lesson(times, "01_b", *[1.0] * 6)]  # 14 s and 6 s: 5 units
    assert times.budget_breaches(balanced, UNIT) == []
    over = [lesson(times, "00_a", *[1.0] * 14), lesson(times, "01_b", *[1.0] * 7)]  # mean 10.5 s
    assert times.budget_breaches(over, UNIT) == [
        "mean over 2 lessons (latency lab and capstone left out): 5.25 units of cells > 5"
    ]


def test_latency_lab_is_left_out_of_the_mean_and_may_have_slow_cells(times) -> None:
    lab = lesson(times, "06_latency_lab", *[8.0] * 6)  # 48 s = 24 units, cells of 8 s
    short = lesson(times, "05_transports", 1.0, 1.0)
    assert times.is_latency_lab("06_latency_lab") and not times.is_latency_lab("05_transports")
    assert times.lesson_mean([lab, short]) == 2.0
    assert times.budget_breaches([lab, short], UNIT) == []
    lab.cells.append(times.CellTiming(5, 1.0, "one_more()"))
    assert times.budget_breaches([lab, short], UNIT) == ["06_latency_lab (latency lab): 24.50 units of cells > 24"]
    assert "mean over 1 lesson (latency lab 06_latency_lab left out): 2.0 s of cells" in times.report(
        [lab, short], UNIT
    )


def test_the_capstone_is_left_out_of_the_mean_with_budgets_of_its_own(times) -> None:
    capstone = lesson(times, "13_capstone", *[7.0] * 10)  # 70 s = 35 units, cells of 3.5 units
    short = lesson(times, "05_transports", 1.0, 1.0)
    assert times.is_capstone("13_capstone") and not times.is_capstone("06_latency_lab")
    assert not times.is_capstone("14_web_api_and_shipping")  # the lesson after it counts in the mean
    assert times.lesson_mean([capstone, short]) == 2.0
    assert times.budget_breaches([capstone, short], UNIT) == []
    assert "(capstone 13_capstone left out)" in "\n".join(times.report([capstone, short], UNIT))
    capstone.cells += [times.CellTiming(10, 10.2, "print(await check_server(...))")]
    assert times.budget_breaches([capstone, short], UNIT) == [
        "13_capstone (capstone): 40.10 units of cells > 36",
        "13_capstone cell 10: 5.10 units > 5  print(await check_server(...))",
    ]


def test_the_lesson_that_continues_the_project_has_the_capstones_cell_budget_and_counts_in_the_mean(times) -> None:
    project = lesson(times, "14_web_api_and_shipping", 8.2, 1.0)  # its project's own pytest: 4.1 units
    assert times.builds_the_project("14_web_api_and_shipping") and not times.builds_the_project("05_transports")
    assert times.budget_breaches([project], UNIT) == []
    assert times.lesson_mean([project]) == 9.2
    project.cells += [times.CellTiming(2, 10.4, "tested = subprocess.run(")]
    assert times.budget_breaches([project], UNIT) == [
        "mean over 1 lesson (latency lab and capstone left out): 9.80 units of cells > 5",
        "14_web_api_and_shipping cell 2: 5.20 units > 5  tested = subprocess.run(",
    ]


def test_no_cell_outside_the_latency_lab_over_two_and_a_half_units(times) -> None:
    lessons = [lesson(times, "02_tools_list", 0.5, 5.02, 0.5), lesson(times, "03_tools_call", 6.0)]
    assert times.budget_breaches(lessons, UNIT) == [
        "02_tools_list cell 1: 2.51 units > 2.5  step_1()",
        "03_tools_call cell 0: 3.00 units > 2.5  step_0()",
    ]


def test_summary_is_the_first_line_that_does_something(times) -> None:
    source = """# NBVAL_IGNORE_OUTPUT
from mcp_teach.display.show import (
    pretty_json,
    table,
)
import json

### BEGIN SOLUTION
async with serve_http("sse") as url:
    pass
"""
    assert times.summarize(source) == 'async with serve_http("sse") as url:'
    assert times.summarize("from mcp_teach.exercises import check\n") == "from mcp_teach.exercises import check"
    assert times.summarize("") == ""
    assert times.summarize("x = '" + "a" * 80 + "'", width=20) == "x = 'aaaaaaaaaaaaaa…"


def test_section_is_the_nearest_heading_above_outside_code_fences(times) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Lesson\n\n## 1. Four calls\n\nText."),
        nbformat.v4.new_code_cell("a = 1"),
        nbformat.v4.new_markdown_cell("Only text, and\n```python\n# a comment, not a heading\n```"),
        nbformat.v4.new_code_cell("b = 2"),
    ]
    assert times.heading_above(nb, 3) == times.heading_above(nb, 1) == "1. Four calls"
    assert times.heading_above(nb, 0) == ""


def test_real_run_times_each_cell_in_a_fresh_kernel_in_the_notebook_folder(times, tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"import os, time\nassert os.path.samefile(os.getcwd(), {str(tmp_path)!r})"),
        nbformat.v4.new_code_cell("time.sleep(0.3)"),
    ]
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, path)
    written = path.stat().st_mtime_ns
    time.sleep(0.01)

    result = times.run_lesson(path)

    assert result.failure is None
    assert [cell.number for cell in result.cells] == [0, 1]
    assert result.cells[1].seconds >= 0.3
    assert result.cells[1].summary == "time.sleep(0.3)"
    assert result.startup > 0 and result.wall >= result.total
    assert path.stat().st_mtime_ns == written  # never written back


def test_expected_exceptions_pass_and_other_errors_stop_the_lesson(times, tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("1 / 0", metadata={"tags": ["raises-exception"]}),
        nbformat.v4.new_code_cell("# NBVAL_SKIP\nraise SystemExit"),
        nbformat.v4.new_code_cell("raise ValueError('boom')"),
        nbformat.v4.new_code_cell("never = True"),
    ]
    path = tmp_path / "failing.ipynb"
    nbformat.write(nb, path)

    result = times.run_lesson(path)

    assert result.failure == "cell 2 raised ValueError: boom  (raise ValueError('boom'))"
    assert [cell.number for cell in result.cells] == [0, 2]
    assert "FAILED" in times.report([result], UNIT)[-2]
    assert times.main([str(path)]) == 2
