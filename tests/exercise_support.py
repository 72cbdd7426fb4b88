"""Small notebooks that follow the exercise convention (student-copy and grading tests), and what every lesson's
exercise tests share: running the solved lesson's solution cells, and the blank-exercise checks."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from fastmcp import FastMCP
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from mcp_teach.exercises.catalogue import GRADING_VARIABLE, check, expectations
from mcp_teach.exercises.check import ExerciseFailed, ExerciseNotAttempted
from mcp_teach.exercises.convention import PLACEHOLDER, find_exercises

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def stdout(text: str) -> Any:
    return new_output("stream", name="stdout", text=text)


def exercise(exercise_id: str, task: str, solution: str, solution_output: str = "") -> list[Any]:
    """The three cells of one exercise, with the outputs a real run of the teaching notebook stores.

    Its expectations are registered by the notebook's first code cell (:data:`EXPECTATIONS`), as a lesson's
    live in ``mcp_teach/exercises/lNN.py``.
    """
    return [
        new_markdown_cell(f"### Exercise {exercise_id} — {task}"),
        new_code_cell(
            solution,
            metadata={"tags": ["solution", f"exercise:{exercise_id}"]},
            execution_count=2,
            outputs=[stdout(solution_output)] if solution_output else [],
        ),
        new_code_cell(
            f'check("{exercise_id}")',
            metadata={"tags": ["check", f"exercise:{exercise_id}"]},
            execution_count=3,
            outputs=[stdout(f"✔ Exercise {exercise_id} passed\n")],
        ),
    ]


#: The demo lesson's expectations, registered in its first code cell (the real lessons import theirs).
EXPECTATIONS = """from mcp_teach.exercises import check, exercise


@exercise("99.1", answers=("product",))
def _(c, product):
    c.equal(product, 60, "the product of numbers", hint="multiply them one by one")


@exercise("99.2", answers=("largest",))
def _(c, largest):
    c.equal(largest([2, 9, 4]), 9, "largest([2, 9, 4])", hint="the largest, not the smallest")


@exercise("99.3", answers=("squares",))
def _(c, squares):
    c.equal(squares, [9, 16, 25], "squares")


@exercise("99.4", answers=("total",))
def _(c, total):
    c.equal(total, 12, "total")


@exercise("99.5", answers=("text",))
def _(c, text):
    c.equal(text, "3, 4, 5", "text")


@exercise("99.6", answers=("maximum",))
def _(c, maximum):
    c.equal(maximum, 5, "maximum")
"""


def demo_lesson() -> Any:
    """A teaching notebook with six exercises."""
    cells = [
        new_markdown_cell("# 99 — Demo\n\nA lesson with exercises."),
        new_code_cell(
            "numbers = [3, 4, 5]\nprint(sum(numbers))\n\n" + EXPECTATIONS, execution_count=1, outputs=[stdout("12\n")]
        ),
        new_markdown_cell("## Exercises"),
        *exercise(
            "99.1",
            "product",
            "### BEGIN SOLUTION\nproduct = 1\nfor n in numbers:\n    product *= n\n### END SOLUTION",
        ),
        *exercise(
            "99.2",
            "largest",
            "### BEGIN SOLUTION\ndef largest(values):\n    return max(values)\n### END SOLUTION",
        ),
        *exercise(
            "99.3",
            "squares",
            "### BEGIN SOLUTION\nsquares = [n * n for n in numbers]\n### END SOLUTION",
        ),
        *exercise(
            "99.4",
            "total",
            "### BEGIN SOLUTION\ntotal = sum(numbers)\n### END SOLUTION",
        ),
        *exercise(
            "99.5",
            "text",
            '### BEGIN SOLUTION\ntext = ", ".join(str(n) for n in numbers)\n### END SOLUTION',
        ),
        *exercise(
            "99.6",
            "maximum",
            "### BEGIN SOLUTION\nmaximum = max(numbers)\n### END SOLUTION",
        ),
        new_markdown_cell("## Summary\n\n- done"),
    ]
    return new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})


def plain_notebook() -> Any:
    """A notebook without exercises (with an output)."""
    cell = new_code_cell("print('hello')", execution_count=1, outputs=[stdout("hello\n")])
    return new_notebook(cells=[new_markdown_cell("# Notes"), cell], metadata={"kernelspec": KERNELSPEC})


def solution_cell(notebook: Any, exercise_id: str) -> Any:
    return next(
        c
        for c in notebook.cells
        if "solution" in c.metadata.get("tags", []) and f"exercise:{exercise_id}" in c.metadata.tags
    )


def fill(notebook: Any, exercise_id: str, code: str) -> None:
    """Write a student's ``code`` in place of the placeholder of ``exercise_id`` (keeping its indentation)."""
    cell = solution_cell(notebook, exercise_id)
    lines = cell.source.split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip() == PLACEHOLDER[0])
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at : at + 2] = [indent + line for line in code.split("\n")]
    cell.source = "\n".join(lines)


def write(notebook: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def passed(capsys: Any, exercise_id: str) -> str:
    """What ``check(exercise_id)`` printed, which must say the exercise passed."""
    out = capsys.readouterr().out
    assert f"✔ Exercise {exercise_id} passed" in out
    return out


def failed_with(exercise_id: str, namespace: dict, *fragments: str) -> str:
    """The ``ExerciseFailed`` message of ``check(exercise_id, namespace)``: expected, found, hint, ``fragments``."""
    with pytest.raises(ExerciseFailed) as failure:
        check(exercise_id, namespace)
    message = str(failure.value)
    for fragment in ("expected", "found", "Hint:", *fragments):
        assert fragment in message, message
    return message


class SolvedLesson:
    """A solved lesson's exercise cells, run as the kernel runs them, so the lesson and its checks cannot drift.

    ``defined``: what the lesson has defined by the time its exercises start (the names their solution cells use),
    or a function returning it afresh for each run.
    """

    def __init__(self, notebook: str, defined: dict[str, Any] | Callable[[], dict[str, Any]]) -> None:
        self.path = Path(__file__).resolve().parent.parent / "notebooks" / "solutions" / notebook
        self.defined = defined

    def solution_source(self, exercise_id: str) -> str:
        notebook = nbformat.read(self.path, as_version=4)
        exercise = next(found for found in find_exercises(notebook) if found.id == exercise_id)
        return notebook.cells[exercise.solution].source

    async def run_solution(self, exercise_id: str) -> dict[str, Any]:
        """Run the solution cell of ``exercise_id`` (top-level ``await`` included); return the namespace it leaves."""
        namespace = dict(self.defined() if callable(self.defined) else self.defined)
        source = self.solution_source(exercise_id)
        if source.startswith("%%"):  # a cell magic (lesson 13's %%server_part): the kernel runs the cell's body
            source = source.partition("\n")[2]
        result = eval(compile(source, f"<{exercise_id}>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), namespace)
        if inspect.isawaitable(result):
            await result
        return namespace

    def assert_answers_defined_nowhere_else(self) -> list[str]:
        """A blank lesson must not look attempted: no code cell before an exercise defines its answers.

        Returns the exercise ids in lesson order.
        """
        notebook = nbformat.read(self.path, as_version=4)
        exercises = find_exercises(notebook)
        for exercise in exercises:
            earlier = "\n".join(c.source for c in notebook.cells[: exercise.solution] if c.cell_type == "code")
            for name in expectations(exercise.id).answers:
                assert f"{name} =" not in earlier and f"def {name}(" not in earlier, (exercise.id, name)
        return [exercise.id for exercise in exercises]


def assert_not_attempted(exercise_id: str, capsys: Any, monkeypatch: Any) -> None:
    """A blank exercise prints *not attempted yet*; while grading it raises ``ExerciseNotAttempted``."""
    check(exercise_id, {})
    assert "not attempted yet" in capsys.readouterr().out
    monkeypatch.setenv(GRADING_VARIABLE, "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, {})


def build_remainder_server() -> FastMCP:
    """Exercise 04.2's server, solved: a tool the model finds by its description."""
    server = FastMCP("remainder-tools", version="1.0.0")

    @server.tool
    def remainder(dividend: float, divisor: float) -> float:
        """The remainder of dividend divided by divisor (dividend mod divisor)."""
        return dividend % divisor

    return server


def build_anonymous_server() -> FastMCP:
    """Exercise 04.2's other server: the same computation behind a name and no description, which the model skips."""
    server = FastMCP("anonymous-tools", version="1.0.0")

    @server.tool
    def f(x: float, y: float) -> float:
        return x % y

    return server
