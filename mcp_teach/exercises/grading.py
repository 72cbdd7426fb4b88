"""Grade submitted notebooks: run each in a fresh kernel and report every exercise.

::

    mcp-teach grade submissions/ --timeout 120 --csv grades.csv

Per exercise (found by the tags ``solution``/``check`` + ``exercise:NN.k``); each check cell runs the course's check
as the grader writes it (:data:`~mcp_teach.exercises.catalogue.GRADED_CHECK`), not as submitted:

- ``pass``: the check finished without raising (what any cell printed plays no part);
- ``fail``: the check raised (its ``ExerciseFailed`` message is shown), or the solution cell raised
  something other than ``NotImplementedError`` or did not finish in time;
- ``not attempted``: the check found the exercise's answers undefined or still blank (it raises ``ExerciseNotAttempted``
  while grading), the solution cell still raises ``NotImplementedError`` (an nbgrader-style stub), or the
  run stopped before reaching it (the reason is shown);
- ``error`` (one row per notebook, no exercise): the notebook could not be graded at all (not valid
  JSON, no exercises, malformed exercise tags, kernel failed to start).

Notebooks run one after another; a broken or endless one is reported and grading goes on. The report shows no
credential of the grader's environment or ``.env`` (:func:`tidy`), and no CSV cell starts a spreadsheet formula.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from dotenv import dotenv_values

from mcp_teach.display.show import table
from mcp_teach.exercises.catalogue import GRADED_CHECK
from mcp_teach.exercises.convention import SOLUTION, Exercise, describe, find_exercises, tags
from mcp_teach.exercises.kernel import Limits, NotebookRun, run_notebook
from mcp_teach.wire.redact import REDACTED, is_credential_option, redact_text

PASS, FAIL, NOT_ATTEMPTED, ERROR = "pass", "fail", "not attempted", "error"
CSV_COLUMNS = ("notebook", "exercise", "result", "message")
#: What a spreadsheet takes for the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Grade:
    """One row of the report."""

    notebook: str
    exercise: str
    result: str
    message: str = ""


@dataclass
class NotebookGrades:
    """The grades of one notebook, plus notes on errors outside the exercises."""

    notebook: str
    grades: list[Grade] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def submissions(path: Path) -> list[Path]:
    """The notebooks to grade: ``path`` itself, or every ``*.ipynb`` under it (hidden folders skipped)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is neither a folder nor a notebook")
    found = path.rglob("*.ipynb")
    return sorted(p for p in found if not any(part.startswith(".") for part in p.relative_to(path).parts))


def grade_exercise(exercise: Exercise, notebook: Any, run: NotebookRun) -> tuple[str, str]:
    """``(result, message)`` of one exercise, from what its solution and check cells did."""
    solution, check = run.cells.get(exercise.solution), run.cells.get(exercise.check)
    if solution is None:
        if not notebook.cells[exercise.solution].source.strip():
            return NOT_ATTEMPTED, "the solution cell is empty"
        return NOT_ATTEMPTED, f"not reached: {run.stopped}"
    if solution.status == "stopped":
        return FAIL, f"the solution cell {solution.evalue}"
    if solution.ename == "NotImplementedError":
        return NOT_ATTEMPTED, "the solution cell still raises NotImplementedError"
    if solution.status == "error":
        return FAIL, f"the solution cell raised {solution.error}"
    if check is None:
        return NOT_ATTEMPTED, f"the check was not reached: {run.stopped}"
    if check.status == "stopped":
        return FAIL, f"the check cell {check.evalue}"
    if check.ename == "ExerciseNotAttempted":
        return NOT_ATTEMPTED, check.evalue
    if check.ename == "NotImplementedError":
        return NOT_ATTEMPTED, "the solution still raises NotImplementedError (when the check calls it)"
    if check.status == "error":
        return FAIL, check.evalue if check.ename == "ExerciseFailed" else f"the check raised {check.error}"
    return PASS, ""


def _notes(notebook: Any, exercises: list[Exercise], run: NotebookRun) -> list[str]:
    """Errors in cells that are not exercises (they often explain a failure), and an early stop."""
    exercise_cells = {i for e in exercises for i in (e.solution, e.check)}
    notes = [
        f"{describe(notebook.cells[index], index)} raised {cell.error}"
        if cell.status == "error"
        else f"{describe(notebook.cells[index], index)} {cell.evalue}"
        for index, cell in sorted(run.cells.items())
        if index not in exercise_cells
        and cell.status != "ok"
        and not (cell.status == "error" and "raises-exception" in tags(notebook.cells[index]))
    ]
    if run.stopped:
        notes.append(f"stopped early: {run.stopped}")
    return notes


def grade_notebook(path: Path, label: str, limits: Limits, digest: str | None = None) -> NotebookGrades:
    """Run the notebook at ``path`` (its folder as working directory) and grade each exercise; ``digest``: the
    SHA-256 its content had when grading began (a kernel graded before it could have changed it)."""
    try:
        content = path.read_bytes()
        if digest and hashlib.sha256(content).hexdigest() != digest:
            return _not_graded(label, "it changed while the notebooks before it were graded: grade it again")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat's validation warnings: the notebook is graded anyway
            notebook = nbformat.reads(content.decode("utf-8"), as_version=4)
        exercises = find_exercises(notebook)
    except Exception as error:  # any unreadable submission is reported, not fatal
        return _not_graded(label, f"cannot read the notebook: {error}")
    if not exercises:
        return _not_graded(label, f"no exercises found (no cells tagged '{SOLUTION}')")
    for exercise in exercises:  # the course's check, whatever the submitted check cell says
        notebook.cells[exercise.check].source = GRADED_CHECK.format(id=exercise.id)
    try:
        run = run_notebook(notebook, path.parent, limits)
    except Exception as error:  # e.g. the kernel could not start
        return _not_graded(label, f"could not run: {type(error).__name__}: {error}", path.parent)
    secrets = credentials(path.parent)
    result = NotebookGrades(label, notes=[tidy(note, secrets) for note in _notes(notebook, exercises, run)])
    for exercise in exercises:
        outcome, message = grade_exercise(exercise, notebook, run)
        result.grades.append(Grade(label, exercise.id, outcome, tidy(message, secrets)))
    return result


def credentials(folder: Path) -> list[str]:
    """The values of the grader's environment and of the ``.env`` nearest above ``folder`` (the one its kernel
    reads) whose names say credential (``GITHUB_TOKEN``, ``MCP_AUTH_TOKEN``), longest first."""
    env_file = next((found / ".env" for found in (folder, *folder.parents) if (found / ".env").is_file()), None)
    values = {**(dotenv_values(env_file) if env_file else {}), **os.environ}
    found = {value for name, value in values.items() if value and len(value) >= 8 and is_credential_option(name)}
    return sorted(found, key=len, reverse=True)


def tidy(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` on one line, without control characters (a terminal would obey them), each of ``secrets`` and
    anything shaped like a credential (a ``ghp_`` token, ``Bearer ...``) redacted."""
    text = _CONTROL.sub("", " ".join(text.split()))
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return redact_text(text)


def _not_graded(label: str, message: str, folder: Path | None = None) -> NotebookGrades:
    return NotebookGrades(label, [Grade(label, "", ERROR, tidy(message, credentials(folder) if folder else ()))])


def grade_all(path: Path, limits: Limits, progress: Callable[[str], None]) -> list[NotebookGrades]:
    """Grade every notebook of ``path`` (a notebook or a folder), one after another, each as it was when grading
    began. Each kernel and all it started are gone before the next notebook starts (:mod:`.kernel`)."""
    base = path if path.is_dir() else path.parent
    found = {notebook: _digest(notebook) for notebook in submissions(path)}
    results = []
    for notebook, digest in found.items():
        label = _CONTROL.sub("", notebook.relative_to(base).as_posix())
        progress(f"grading {label} ...")
        results.append(grade_notebook(notebook, label, limits, digest))
    return results


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:  # reported when it is graded
        return None


def all_grades(results: Iterable[NotebookGrades]) -> list[Grade]:
    """Every row, in notebook order."""
    return [grade for result in results for grade in result.grades]


def all_passed(results: Sequence[NotebookGrades]) -> bool:
    """True only if there is at least one exercise and every one passed."""
    grades = all_grades(results)
    return bool(grades) and all(grade.result == PASS for grade in grades)


def report(results: Sequence[NotebookGrades]) -> str:
    """The terminal report: a table, notes on other errors, and a one-line summary."""
    grades = all_grades(results)
    lines = [repr(table(CSV_COLUMNS, [(g.notebook, g.exercise or "-", g.result, g.message) for g in grades]))]
    notes = [f"  {result.notebook}: {note}" for result in results for note in result.notes]
    if notes:
        lines += ["", "notes (errors outside the exercises):", *notes]
    exercises = [g for g in grades if g.exercise]
    counts = ", ".join(f"{sum(g.result == r for g in exercises)} {label}" for r, label in _LABELS)
    summary = f"{_count(len(exercises), 'exercise')} in {_count(len(results), 'notebook')}: {counts}"
    if errors := sum(g.result == ERROR for g in grades):
        summary += f"; {_count(errors, 'notebook')} could not be graded"
    return "\n".join([*lines, "", summary])


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


_LABELS = ((PASS, "passed"), (FAIL, "failed"), (NOT_ATTEMPTED, "not attempted"))


def write_csv(results: Sequence[NotebookGrades], path: Path) -> None:
    """One row per exercise (and per notebook that could not be graded): notebook, exercise, result, message.

    Every field quoted and one that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, a tab or
    carriage return first) led by ``'`` (OWASP, "CSV Injection"). Written whole, then moved in place of ``path``,
    readable by its owner only: a link a graded notebook planted there is replaced, not followed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [[_cell(text) for text in row] for row in [CSV_COLUMNS, *map(astuple, all_grades(results))]]
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".grades-", delete=False, encoding="utf-8") as file:
        try:
            csv.writer(file, quoting=csv.QUOTE_ALL).writerows(rows)
        except BaseException:
            Path(file.name).unlink()
            raise
    os.replace(file.name, path)


def _cell(text: str) -> str:
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def default_csv(path: Path) -> Path:
    """Where the CSV goes without ``--csv``: ``grades.csv`` in the graded folder (for one notebook, its folder)."""
    return (path if path.is_dir() else path.parent) / "grades.csv"
