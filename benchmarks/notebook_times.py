"""Lesson times: run every lesson as nbval does and hold the course to its time budget.

Each lesson runs in a fresh kernel of the current environment (nbval's ``--nbval-current-env`` kernel spec), with
the notebook's own folder as working directory, its code cells one after another, top to bottom; cells nbval skips
(``nbval-skip``, ``# NBVAL_SKIP``) are skipped, cells it expects to raise (``raises-exception``,
``# NBVAL_RAISES_EXCEPTION``) may raise. A cell's time is the kernel's own: from ``started`` in its
``execute_reply`` metadata to the reply's header date, so message round trips and this script's polling are left
out (the ``wall`` column shows what they add). Kernel start-up is reported apart. Cells are numbered as nbval
numbers them (code cells from 0), so ``05_transports cell 20`` is ``pytest "notebooks/05_transports.ipynb::Cell 20"``.
Notebooks are read, never written.

Budget, in **reference units**: the machines this runs on are shared and their speed moves by 1.5x from one day to
the next, so every budget is stated in the time of a reference task measured in the same run: spawning a plain
fastmcp stdio server with one ``add`` tool (``python -c``, nothing of this package) and getting the result of the
first ``tools/call`` (median of three, measured before and after the lessons; the report uses the median of the
six). Budget: a lesson's cells take <= 5 units on average (the latency lab and the capstone left out), the latency
lab <= 24 units, and no cell outside the latency lab (and the capstone) more than 2.5 units. Why these: the
reference is itself one stdio server started and called, and lessons about stdio must start servers, so a cell that
starts one costs a unit and a half with the work around it; 2.5 units let a cell start one stdio server beside two
in-process ones (lesson 05 runs the same calls on three transports) but not three stdio servers. The lab times fixed
numbers of samples and starts fresh processes on purpose: on an idle machine here (reference 1.1 s) it took 23 s, 21
units. A cell that starts a stdio server when its lesson is not about starting one is the first thing to cut. The
capstone (lesson 13) is the other exception: its subject is an outside judge, the official conformance suite, a Node
program started once per scenario (about half a CPU-second each, four at a time): its first cell runs four
scenarios, each of its checks three or four, and its judging cell starts the learner's own server as a process of
its own and runs both revisions against its URL at once (37 and 30 scenarios), as ``mcp-teach conformance --url``
does from a terminal. So it too is left out of the mean, with <= 36 units of cells and <= 5 units a cell: with seven
checks, on this machine shared with three other test runs (load 6 on two CPUs, reference 1.2 s), its solved copy
took 37 s, 30.5 units; on a quiet machine (reference 0.93 s) 18.0 s, 19.4 units, its judging cell 4.1 s, 4.4 units.
Lesson 14 continues the learner's capstone project: it counts in the mean, and its cells have the capstone's cell
budget, because its project's own tests run as the learner runs them, pytest in a process of its own (a Python start,
fastmcp's import, and jsonschema's: this environment's ``rfc3987-syntax`` compiles 38 grammars at import, about 2 s,
python-jsonschema/jsonschema#1428): 3.8 s, 4.1 units, with only the anyio plugin loaded.
Exit code: 2 if a cell failed (error, timeout, dead kernel), else 1 with
``--check`` if the budget is exceeded, else 0.

    python benchmarks/notebook_times.py [--check] [NOTEBOOK ...]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager
from nbval.plugin import find_comment_markers, find_metadata_tags

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = "[0-9][0-9]_*.ipynb"  # top-level lessons only: notebooks/solutions/ is run by naming its files
LATENCY_LAB_MARK = "latency"  # the latency lab is the lesson whose file name contains this
CAPSTONE_MARK = "capstone"  # the capstone, judged by the conformance suite, is the lesson whose file name contains this
PROJECT_MARKS = (CAPSTONE_MARK, "shipping")  # the lessons that build the learner's project: the capstone's cell budget
MEAN_BUDGET = 5.0  # reference units of cells per lesson, mean over the lessons other than the latency lab
LATENCY_LAB_BUDGET = 24.0  # reference units of cells in the latency lab
CELL_BUDGET = 2.5  # reference units for any one cell outside the latency lab and the capstone
CAPSTONE_BUDGET = 36.0  # reference units of cells in the capstone (measured: 16.5, 30.5 with seven checks)
CAPSTONE_CELL_BUDGET = 5.0  # reference units for any one cell of the capstone (both revisions of the suite at once)
REFERENCE_RUNS = 3  # reference measurements before the lessons, and again after them
REFERENCE_SERVER = """
from fastmcp import FastMCP
mcp = FastMCP("reference")
@mcp.tool
def add(a: int, b: int) -> int:
    return a + b
mcp.run(show_banner=False)
"""
CELL_TIMEOUT = 300  # seconds, as --nbval-cell-timeout in pyproject.toml
STARTUP_TIMEOUT = 60  # seconds, nbval's default --nbval-kernel-startup-timeout
SLOWEST = 10
SUMMARY_WIDTH = 50
SECTION_WIDTH = 40


def is_latency_lab(name: str) -> bool:
    """The one place that says which lesson is the latency lab (it has a budget of its own)."""
    return LATENCY_LAB_MARK in Path(name).name


def is_capstone(name: str) -> bool:
    """The one place that says which lesson is the capstone (it has a budget of its own)."""
    return CAPSTONE_MARK in Path(name).name


def builds_the_project(name: str) -> bool:
    """The one place that says which lessons build the learner's project (their cells have the capstone's budget)."""
    return any(mark in Path(name).name for mark in PROJECT_MARKS)


@dataclass(frozen=True)
class CellTiming:
    number: int  # nbval's cell number: code cells counted from 0
    seconds: float
    summary: str  # what the cell does, see summarize()
    section: str = ""  # the heading above it, see heading_above()


@dataclass
class LessonTiming:
    name: str
    startup: float = 0.0  # seconds to start the kernel and see it ready
    wall: float = 0.0  # seconds from sending the first cell to the last cell's end, as seen here
    cells: list[CellTiming] = field(default_factory=list)
    failure: str | None = None

    @property
    def total(self) -> float:
        return sum(cell.seconds for cell in self.cells)

    @property
    def slowest(self) -> CellTiming | None:
        return max(self.cells, key=lambda cell: cell.seconds, default=None)

    @property
    def latency_lab(self) -> bool:
        return is_latency_lab(self.name)

    @property
    def capstone(self) -> bool:
        return is_capstone(self.name)

    @property
    def in_mean(self) -> bool:
        """The two lessons with budgets of their own are left out of the mean."""
        return not (self.latency_lab or self.capstone)


def summarize(source: str, width: int = SUMMARY_WIDTH) -> str:
    """What a cell does in one line: its first line that is not blank, a comment or an import (imports say little
    about what a cell is for), else its first non-blank line; cut to ``width`` characters."""
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    in_import = False
    chosen = lines[0] if lines else ""
    for line in lines:
        if in_import:
            in_import = ")" not in line
        elif line.startswith(("import ", "from ")):
            in_import = "(" in line and ")" not in line
        elif not line.startswith("#"):
            chosen = line
            break
    return _cut(chosen, width)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def heading_above(nb: nbformat.NotebookNode, index: int) -> str:
    """The nearest markdown heading above cell ``index``, without its ``#``s ("" if none): the section says what a
    cell is for when its code does not (a function defined and then called, a table of inputs)."""
    for cell in reversed(nb.cells[:index]):
        if cell.cell_type != "markdown":
            continue
        headings, fenced = [], False
        for line in cell.source.splitlines():
            fenced ^= line.lstrip().startswith(("```", "~~~"))
            if not fenced and re.match(r"#{1,6}\s", line):
                headings.append(line.lstrip("#").strip())
        if headings:
            return headings[-1]
    return ""


def label(path: Path) -> str:
    """A lesson's name in the report: its path under notebooks/ without ``.ipynb`` (``05_transports``,
    ``solutions/05_transports``), or the file's stem for a notebook elsewhere."""
    path = path.resolve()
    return str(path.relative_to(NOTEBOOKS).with_suffix("")) if path.is_relative_to(NOTEBOOKS) else path.stem


def nbval_cells(nb: nbformat.NotebookNode) -> Iterator[tuple[int, int, nbformat.NotebookNode]]:
    """(index in the notebook, nbval's cell number, cell) for every code cell."""
    code_cells = (index for index, cell in enumerate(nb.cells) if cell.cell_type == "code")
    for number, index in enumerate(code_cells):
        yield index, number, nb.cells[index]


def nbval_options(cell: nbformat.NotebookNode) -> dict[str, Any]:
    """nbval's options for a cell (``skip``, ``check_exception``, ...), read from tags and comments as nbval does."""
    return {**dict(find_metadata_tags(cell.metadata)), **dict(find_comment_markers(cell.source))}


def _moment(value: datetime | str) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def kernel_seconds(execute_reply: dict[str, Any]) -> float:
    """How long the kernel spent on a cell: from ``started`` (ipykernel's metadata) to the reply's date."""
    return (_moment(execute_reply["header"]["date"]) - _moment(execute_reply["metadata"]["started"])).total_seconds()


def run_lesson(path: Path) -> LessonTiming:
    """Run one notebook top to bottom in a fresh kernel, as nbval does, timing every cell."""
    nb = nbformat.read(path, as_version=4)
    replies: list[dict[str, Any]] = []
    client = NotebookClient(
        nb,
        km=AsyncKernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager()),
        timeout=CELL_TIMEOUT,
        startup_timeout=STARTUP_TIMEOUT,
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_executed=lambda execute_reply, **_: replies.append(execute_reply),
    )
    lesson = LessonTiming(label(path))
    started = time.perf_counter()
    with client.setup_kernel(cleanup_kc=True):
        lesson.startup = time.perf_counter() - started
        started = time.perf_counter()
        for index, number, cell in nbval_cells(nb):
            options = nbval_options(cell)
            if options.get("skip"):
                continue
            client.allow_errors = bool(options.get("check_exception"))
            try:
                client.execute_cell(cell, index)
            except CellExecutionError as error:
                lesson.failure = f"cell {number} raised {error.ename}: {error.evalue}  ({summarize(cell.source)})"
            except (CellTimeoutError, DeadKernelError) as error:
                lesson.failure = f"cell {number}: {error}  ({summarize(cell.source)})"
            if replies:
                seconds = kernel_seconds(replies.pop())
                lesson.cells.append(CellTiming(number, seconds, summarize(cell.source), heading_above(nb, index)))
            if lesson.failure:
                break
        lesson.wall = time.perf_counter() - started
    return lesson


def _lessons(count: int) -> str:
    return f"{count} lesson" + "s" * (count != 1)


def lesson_mean(lessons: Sequence[LessonTiming]) -> float | None:
    """Mean seconds of cells per lesson, the latency lab and the capstone left out (None when no other lesson ran)."""
    totals = [lesson.total for lesson in lessons if lesson.in_mean]
    return statistics.fmean(totals) if totals else None


def reference_seconds(runs: int = REFERENCE_RUNS) -> list[float]:
    """Seconds from spawning a plain fastmcp stdio server to the result of its first ``tools/call``, ``runs`` times."""
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    async def once() -> float:
        started = time.perf_counter()
        transport = StdioTransport(command=sys.executable, args=["-c", REFERENCE_SERVER])
        async with Client(transport) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
        return time.perf_counter() - started

    return [asyncio.run(once()) for _ in range(runs)]


def budget_breaches(lessons: Sequence[LessonTiming], unit: float) -> list[str]:
    """Every item of the budget that these timings exceed, one line each; empty when all is within it.

    ``unit``: seconds of the reference task in this run; the budgets are multiples of it."""
    breaches = []
    mean = lesson_mean(lessons)
    if mean is not None and mean > MEAN_BUDGET * unit:
        others = sum(lesson.in_mean for lesson in lessons)
        breaches.append(
            f"mean over {_lessons(others)} (latency lab and capstone left out): {mean / unit:.2f} units of cells"
            f" > {MEAN_BUDGET:g}"
        )
    for lesson in lessons:
        if lesson.latency_lab:
            if lesson.total > LATENCY_LAB_BUDGET * unit:
                breaches.append(
                    f"{lesson.name} (latency lab): {lesson.total / unit:.2f} units of cells > {LATENCY_LAB_BUDGET:g}"
                )
            continue
        if lesson.capstone and lesson.total > CAPSTONE_BUDGET * unit:
            breaches.append(f"{lesson.name} (capstone): {lesson.total / unit:.2f} units of cells > {CAPSTONE_BUDGET:g}")
        cell_budget = CAPSTONE_CELL_BUDGET if builds_the_project(lesson.name) else CELL_BUDGET
        breaches.extend(
            f"{lesson.name} cell {cell.number}: {cell.seconds / unit:.2f} units > {cell_budget:g}  {cell.summary}"
            for cell in lesson.cells
            if cell.seconds > cell_budget * unit
        )
    return breaches


def report(lessons: Sequence[LessonTiming], unit: float) -> list[str]:
    """The printed report: a row per lesson, the slowest cells, mean, total, budget and failures."""
    width = max(len("lesson"), *(len(lesson.name) for lesson in lessons))
    lines = [
        f"{'lesson':<{width}}  kernel start  cells  cells total     wall  slowest cell",
        "-" * (width + 62),
    ]
    for lesson in lessons:
        slowest = lesson.slowest
        lines.append(
            f"{lesson.name:<{width}}  {lesson.startup:10.1f} s  {len(lesson.cells):5d}  {lesson.total:9.1f} s"
            f"  {lesson.wall:5.1f} s  "
            + (f"cell {slowest.number} {slowest.seconds:.1f} s" if slowest else "-")
            + ("  (latency lab)" if lesson.latency_lab else "")
            + ("  (capstone)" if lesson.capstone else "")
            + ("  FAILED" if lesson.failure else "")
        )
    every_cell = [(lesson.name, cell) for lesson in lessons for cell in lesson.cells]
    every_cell.sort(key=lambda item: item[1].seconds, reverse=True)
    lines += ["", f"{min(SLOWEST, len(every_cell))} slowest cells:"]
    lines += [
        f"  {name:<{width}} cell {cell.number:<3d} {cell.seconds:5.1f} s  {cell.summary:<{SUMMARY_WIDTH}}"
        + (f"  [{_cut(cell.section, SECTION_WIDTH)}]" if cell.section else "")
        for name, cell in every_cell[:SLOWEST]
    ]
    mean = lesson_mean(lessons)
    others = sum(lesson.in_mean for lesson in lessons)
    labs = ", ".join(
        f"{'latency lab' if lesson.latency_lab else 'capstone'} {lesson.name}"
        for lesson in lessons
        if not lesson.in_mean
    )
    lines += [
        "",
        f"mean over {_lessons(others)}"
        + (f" ({labs} left out)" if labs else "")
        + ": "
        + (f"{mean:.1f} s of cells" if mean is not None else "-"),
        f"total: {sum(lesson.total for lesson in lessons):.1f} s of cells in {_lessons(len(lessons))}"
        f" (+ {sum(lesson.startup for lesson in lessons):.1f} s of kernel start-up;"
        f" wall {sum(lesson.wall for lesson in lessons):.1f} s)",
        "",
        f"reference unit: {unit:.2f} s (a plain fastmcp stdio server, spawn to first tools/call result)",
        f"budget: cells <= {MEAN_BUDGET:g} units per lesson on average ({MEAN_BUDGET * unit:.1f} s),"
        f" latency lab <= {LATENCY_LAB_BUDGET:g} units ({LATENCY_LAB_BUDGET * unit:.1f} s),"
        f" capstone <= {CAPSTONE_BUDGET:g} units ({CAPSTONE_BUDGET * unit:.1f} s), a cell <= {CAPSTONE_CELL_BUDGET:g},"
        f" no other cell > {CELL_BUDGET:g} units ({CELL_BUDGET * unit:.1f} s)",
    ]
    breaches = budget_breaches([lesson for lesson in lessons if not lesson.failure], unit)
    lines += [f"  OVER  {breach}" for breach in breaches] or ["  ok"]
    failures = [f"  {lesson.name}: {lesson.failure}" for lesson in lessons if lesson.failure]
    if failures:
        lines += ["", "FAILED (budget above counts only the lessons that ran to the end):", *failures]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help=f"notebooks to run (default: the tour and notebooks/{LESSONS})"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when the budget is exceeded")
    args = parser.parse_args(argv)
    paths = args.notebooks or [NOTEBOOKS / "tour.ipynb", *sorted(NOTEBOOKS.glob(LESSONS))]
    references = reference_seconds()
    lessons = []
    for path in paths:
        lessons.append(lesson := run_lesson(path))
        print(f"ran {lesson.name}: {lesson.total:.1f} s", lesson.failure or "", file=sys.stderr, flush=True)
    references += reference_seconds()
    unit = statistics.median(references)
    print("reference runs: " + ", ".join(f"{seconds:.2f} s" for seconds in references), file=sys.stderr)
    print("\n".join(report(lessons, unit)))
    if any(lesson.failure for lesson in lessons):
        return 2
    return 1 if args.check and budget_breaches(lessons, unit) else 0


if __name__ == "__main__":
    sys.exit(main())
