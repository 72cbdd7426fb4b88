"""Grading: real kernels run real submissions; results, messages, CSV, exit code, and no process left behind."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import nbformat
import psutil
import pytest
from exercise_support import demo_lesson, fill, plain_notebook, write
from nbformat.v4 import new_code_cell
from support import HANG_TIMEOUT

from mcp_teach import cli
from mcp_teach.course.authoring import lesson_notebooks
from mcp_teach.exercises.convention import find_exercises
from mcp_teach.exercises.grading import ERROR, FAIL, NOT_ATTEMPTED, PASS, grade_notebook
from mcp_teach.exercises.kernel import Limits
from mcp_teach.exercises.student_copy import plan_copies, student_notebook, write_copies

MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))  # the console script next to the interpreter
SOLVED = Path(__file__).resolve().parent.parent / "notebooks" / "solutions"
NOTEBOOKS = SOLVED.parent  # the blank lessons
CHILD = "import subprocess, sys\nchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
#: The classroom's cell time limit: the endless cells are interrupted after it; no other cell comes near it, even on a
#: busy machine.
CELL_TIMEOUT = 20
STUCK = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.1)"


def run_cli(*argv: str) -> SimpleNamespace:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return SimpleNamespace(code=code, out=out.getvalue(), err=err.getvalue())


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie waiting for init counts as exited); waits for it to exit."""
    deadline = time.monotonic() + HANG_TIMEOUT
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def lessons_with_exercises() -> list[Path]:
    """The solved lessons (notebooks/solutions/) that have exercises."""
    return [path for path in lesson_notebooks(SOLVED) if '"exercise:' in path.read_text(encoding="utf-8")]


def _sources(path: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(path, as_version=4).cells]


def _check_cells(path: Path) -> list[nbformat.NotebookNode]:
    notebook = nbformat.read(path, as_version=4)
    return [notebook.cells[exercise.check] for exercise in find_exercises(notebook)]


def _output_ignored(cell: nbformat.NotebookNode) -> bool:
    return "nbval-ignore-output" in cell.metadata.get("tags", []) or "# NBVAL_IGNORE_OUTPUT" in cell.source


def make_classroom(root: Path) -> Path:
    """A teaching notebook, its student copy, and five submissions (the folder returned)."""
    student, _ = student_notebook(demo_lesson())
    write(demo_lesson(), root / "teaching" / "01_demo.ipynb")
    write(student, root / "copies" / "01_demo.ipynb")

    alice = copy.deepcopy(student)
    fill(alice, "99.1", CHILD + "open('alice-child.pid', 'w').write(str(child.pid))\nproduct = 60")
    fill(alice, "99.2", "def largest(values):\n    return min(values)")
    fill(alice, "99.4", "while True:\n    pass")
    fill(alice, "99.5", 'text = ", ".join(str(n) for n in numbers')
    fill(alice, "99.6", "maximum = max(numbers)")
    alice.cells.insert(2, new_code_cell("print(scratch)"))  # a student's own cell that fails
    submissions = root / "submissions"
    write(alice, submissions / "alice" / "01_demo.ipynb")
    write(alice, submissions / "alice" / ".ipynb_checkpoints" / "01_demo-checkpoint.ipynb")  # skipped

    bob = copy.deepcopy(student)
    fill(bob, "99.1", "product = 60")
    fill(bob, "99.3", CHILD + "open('bob-child.pid', 'w').write(str(child.pid))\n" + STUCK)
    write(bob, submissions / "bob" / "01_demo.ipynb")

    erin = copy.deepcopy(student)
    fill(erin, "99.1", "import os\nos._exit(1)")
    write(erin, submissions / "erin" / "01_demo.ipynb")

    (submissions / "carol").mkdir()
    (submissions / "carol" / "01_demo.ipynb").write_text('{"cells": [', encoding="utf-8")
    write(plain_notebook(), submissions / "dave" / "notes.ipynb")
    return submissions


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Every grading run the module's tests read, done at once: the classroom's submissions graded with
    ``mcp-teach grade``, fresh student copies of the lessons with exercises, and the solved lessons nbval
    cannot vouch for.

    nbval runs every solved lesson on every test run and compares each check cell's output with the stored
    ``✔ Exercise NN.k passed`` (:func:`test_every_solved_lesson_stores_a_pass_for_each_exercise`), which is what
    grading it would prove; only where a check's output is not compared (``nbval-ignore-output``: lesson 06's
    checks print timings) is the solved lesson graded here.

    The lessons are graded by two workers, one kernel each (CI has 2 cores), the lessons graded twice (solved
    and copy, the slowest) first; the classroom, which mostly waits for its timeouts, is graded meanwhile by
    the command in a process of its own.
    """
    root = tmp_path_factory.mktemp("class")
    submissions = make_classroom(root)
    csv_path = root / "g.csv"
    command = [MCP_TEACH, "grade", str(submissions), "--timeout", str(CELL_TIMEOUT), "--time-limit", str(HANG_TIMEOUT)]
    command += ["--csv", str(csv_path)]
    classroom = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    lessons = lessons_with_exercises()
    copies = tmp_path_factory.mktemp("student")
    write_copies(plan_copies(lessons, copies))
    unvouched = [path for path in lessons if any(_output_ignored(cell) for cell in _check_cells(path))]
    twice = [path.name for path in unvouched]
    paths = unvouched + sorted((copies / path.name for path in lessons), key=lambda path: path.name not in twice)
    limits = Limits(cell_timeout=300, time_limit=900)
    with ThreadPoolExecutor(2) as pool:
        graded = dict(zip(paths, pool.map(lambda path: grade_notebook(path, path.name, limits), paths), strict=True))
    out, err = classroom.communicate(timeout=300)
    return SimpleNamespace(
        root=root,
        submissions=submissions,
        result=SimpleNamespace(code=classroom.returncode, out=out, err=err),
        rows=read_csv(csv_path),
        student=[graded[copies / path.name] for path in lessons],
        copies=[copies / path.name for path in lessons],
        teaching=[graded[path] for path in unvouched],
    )


def test_each_exercise_is_graded_pass_fail_or_not_attempted(runs):
    rows = [(r["notebook"], r["exercise"], r["result"]) for r in runs.rows]
    assert rows == [
        ("alice/01_demo.ipynb", "99.1", PASS),
        ("alice/01_demo.ipynb", "99.2", FAIL),
        ("alice/01_demo.ipynb", "99.3", NOT_ATTEMPTED),
        ("alice/01_demo.ipynb", "99.4", FAIL),
        ("alice/01_demo.ipynb", "99.5", FAIL),
        ("alice/01_demo.ipynb", "99.6", PASS),  # graded: the endless 99.4 was interrupted and the kernel went on
        ("bob/01_demo.ipynb", "99.1", PASS),
        ("bob/01_demo.ipynb", "99.2", NOT_ATTEMPTED),
        ("bob/01_demo.ipynb", "99.3", FAIL),
        ("bob/01_demo.ipynb", "99.4", NOT_ATTEMPTED),
        ("bob/01_demo.ipynb", "99.5", NOT_ATTEMPTED),
        ("bob/01_demo.ipynb", "99.6", NOT_ATTEMPTED),
        ("carol/01_demo.ipynb", "", ERROR),
        ("dave/notes.ipynb", "", ERROR),
        *[("erin/01_demo.ipynb", f"99.{k}", FAIL if k == 1 else NOT_ATTEMPTED) for k in range(1, 7)],
    ]


def test_messages_say_why(runs):
    messages = {(r["notebook"].split("/")[0], r["exercise"]): r["message"] for r in runs.rows}
    assert messages["alice", "99.1"] == ""
    assert messages["alice", "99.2"] == (
        "Exercise 99.2 — largest([2, 9, 4]): expected 9, found 2. Hint: the largest, not the smallest"
    )
    assert messages["alice", "99.3"] == (
        "Exercise 99.3 — not attempted yet: write your answer in the cell above so that it defines `squares`, "
        "run that cell, then run this one again."
    )
    assert messages["alice", "99.4"] == f"the solution cell did not finish within {CELL_TIMEOUT} s (interrupted)"
    assert messages["alice", "99.5"].startswith("the solution cell raised SyntaxError: ")
    assert messages["bob", "99.2"].startswith("Exercise 99.2 — not attempted yet: ")
    assert "defines `largest`" in messages["bob", "99.2"]
    assert messages["bob", "99.3"] == f"the solution cell did not finish within {CELL_TIMEOUT} s (interrupted)"
    assert messages["bob", "99.4"] == (
        "not reached: cell 10 (`import subprocess, sys`) did not finish and the kernel did not stop when interrupted"
    )
    assert messages["erin", "99.1"] == "the solution cell made the kernel die (it crashed or exited)"
    assert messages["erin", "99.2"] == "not reached: the kernel died in cell 4 (`import os`)"
    assert messages["carol", ""].startswith("cannot read the notebook: ")
    assert messages["dave", ""] == "no exercises found (no cells tagged 'solution')"


def test_terminal_report_table_notes_and_summary(runs):
    result = runs.result
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].split() == ["notebook", "exercise", "result", "message"]
    assert any(line.split()[:4] == ["alice/01_demo.ipynb", "99.3", "not", "attempted"] for line in lines)
    assert "  alice/01_demo.ipynb: cell 2 (`print(scratch)`) raised NameError: name 'scratch' is not defined" in lines
    assert lines[-2] == (
        "18 exercises in 5 notebooks: 3 passed, 5 failed, 10 not attempted; 2 notebooks could not be graded"
    )
    assert lines[-1] == f"report written to {runs.root / 'g.csv'}"
    assert result.err.splitlines() == [
        f"grading {name} ..."
        for name in (
            "alice/01_demo.ipynb",
            "bob/01_demo.ipynb",
            "carol/01_demo.ipynb",
            "dave/notes.ipynb",
            "erin/01_demo.ipynb",
        )
    ]


def test_no_process_is_left_behind(runs):
    for name in ("alice", "bob"):
        pid = int((runs.submissions / name / f"{name}-child.pid").read_text())  # written in the notebook's folder
        assert gone(pid), f"{name}'s child process {pid} is still running"
    assert psutil.Process().children(recursive=True) == []


def test_the_teaching_notebook_passes_and_its_student_copy_is_not_attempted(runs):
    teaching = run_cli("grade", str(runs.root / "teaching"), "--csv", str(runs.root / "t.csv"))
    assert teaching.code == 0, teaching.out
    assert [r["result"] for r in read_csv(runs.root / "t.csv")] == [PASS] * 6
    copies = run_cli("grade", str(runs.root / "copies" / "01_demo.ipynb"))
    assert copies.code == 1
    rows = read_csv(runs.root / "copies" / "grades.csv")  # the default: next to the graded notebook
    assert [r["result"] for r in rows] == [NOT_ATTEMPTED] * 6
    assert "notes" not in copies.out  # nothing but the exercises failed


def test_the_notebook_time_limit_stops_the_run(tmp_path):
    notebook = demo_lesson()
    notebook.cells[2:2] = [new_code_cell("import time\ntime.sleep(1.5)") for _ in range(4)]
    path = write(notebook, tmp_path / "slow.ipynb")
    graded = grade_notebook(path, "slow.ipynb", Limits(cell_timeout=30, time_limit=4))
    assert {g.result for g in graded.grades} == {NOT_ATTEMPTED}
    assert graded.grades[0].message.startswith("not reached: the notebook's time limit (4 s) ran out")
    assert graded.notes[-1].startswith("stopped early: the notebook's time limit (4 s) ran out")


def test_ctrl_c_stops_grading_and_the_kernel(tmp_path):
    notebook = demo_lesson()
    notebook.cells[2:2] = [new_code_cell(CHILD + "open('started', 'w').write(str(child.pid))")]
    notebook.cells[3:3] = [new_code_cell("import time\ntime.sleep(120)")]
    write(notebook, tmp_path / "01_demo.ipynb")
    grader = subprocess.Popen(
        [MCP_TEACH, "grade", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As in a terminal's foreground: a run started in the background (nohup ... &) ignores SIGINT, and its
        # children inherit that, so Python would install no KeyboardInterrupt handler in the grader.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    started = tmp_path / "started"
    deadline = time.monotonic() + HANG_TIMEOUT  # the kernel starts and runs two cells: slow on a busy machine
    while not started.exists() or not started.read_text():
        if grader.poll() is not None or time.monotonic() > deadline:
            grader.kill()
            raise AssertionError(f"the kernel never ran the cell that starts a child: {grader.communicate()}")
        time.sleep(0.1)
    family = psutil.Process(grader.pid).children(recursive=True)
    grader.send_signal(signal.SIGINT)
    _, stderr = grader.communicate(timeout=HANG_TIMEOUT)
    assert grader.returncode == 130
    assert stderr.splitlines()[-1] == "mcp-teach grade: interrupted, no report written"
    assert int(started.read_text()) in [p.pid for p in family]  # the kernel's child was seen, and is gone
    assert all(gone(process.pid) for process in family)
    assert not (tmp_path / "grades.csv").exists()


def test_a_graded_lesson_leaves_no_scratch_folder_though_its_kernel_is_killed(tmp_path):
    notebook = demo_lesson()
    made = "from mcp_teach.lessons.scratch import scratch_folder\nopen('made', 'w').write(str(scratch_folder('notes')))"
    notebook.cells[2:2] = [new_code_cell(made)]
    write(notebook, tmp_path / "01_demo.ipynb")
    limits = Limits(cell_timeout=HANG_TIMEOUT, time_limit=900)
    graded = grade_notebook(tmp_path / "01_demo.ipynb", "01_demo.ipynb", limits)
    assert {grade.result for grade in graded.grades} == {PASS}
    folder = Path((tmp_path / "made").read_text())
    assert folder.parent.parent.name.startswith("mcp-teach-grading-")  # the kernel's own temporary folder
    assert not folder.parent.parent.exists()  # removed, with the scratch folder the lesson made in it


def test_a_missing_path_is_a_usage_error(tmp_path):
    result = run_cli("grade", str(tmp_path / "nowhere"))
    assert result.code == 2 and "neither a folder nor a notebook" in result.err


def test_every_solved_lesson_stores_a_pass_for_each_exercise():
    """With nbval comparing these outputs on every run, each solved lesson's every check passes when run."""
    for path in lessons_with_exercises():
        notebook = nbformat.read(path, as_version=4)
        for exercise in find_exercises(notebook):
            cell = notebook.cells[exercise.check]
            text = "".join(output.get("text", "") for output in cell.outputs)
            assert cell.execution_count is not None, f"{path.name} {exercise.id}: the check cell has no stored run"
            assert text.endswith(f"✔ Exercise {exercise.id} passed\n"), f"{path.name} {exercise.id}: {text!r}"


def test_the_solved_lessons_whose_check_outputs_nbval_ignores_pass_when_graded(runs):
    assert [graded.notebook for graded in runs.teaching] == ["06_latency_lab.ipynb"]
    for graded in runs.teaching:
        failed = [g for g in graded.grades if g.result != PASS]
        assert graded.grades and not failed and not graded.notes, (failed, graded.notes)


def test_student_copies_of_the_lessons_stop_only_at_the_exercises(runs):
    """Each copy is the blank lesson students open (its code cells, byte for byte): graded here, every blank lesson
    runs top to bottom on every test run, which nbval does not repeat (pyproject's addopts)."""
    for copy_path, lesson in zip(runs.copies, lessons_with_exercises(), strict=True):
        blank = NOTEBOOKS / lesson.name
        assert _sources(copy_path) == _sources(blank), f"the student copy of {lesson.name} is not {blank}"
    for graded in runs.student:
        assert graded.grades and not graded.notes, graded.notes
        for grade in graded.grades:
            assert grade.result == NOT_ATTEMPTED and "not attempted yet" in grade.message, grade
