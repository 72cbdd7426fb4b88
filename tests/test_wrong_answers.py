"""Every exercise's check is tried with at least three plausible wrong answers, and docs/CHECKS.md says how many
(benchmarks/wrong_answers.py collects the tests marked ``wrong_answer``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROW = re.compile(r"^\| (\d\d\.\d) \| .* \| (\d+) \|$", re.MULTILINE)


def test_every_exercise_is_tried_with_three_wrong_answers_and_the_table_says_so():
    made = subprocess.run(
        [sys.executable, "benchmarks/wrong_answers.py"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert made.returncode == 0, made.stderr
    rows = dict(ROW.findall(made.stdout))
    assert len(rows) >= 48, "the table lists every exercise of the solved lessons"
    assert {number: tried for number, tried in rows.items() if int(tried) < 3} == {}
    committed = (REPO / "docs" / "CHECKS.md").read_text()
    assert made.stdout == committed, "docs/CHECKS.md is out of date: python benchmarks/wrong_answers.py --write"
