"""The exercise cell convention: which cells are solutions and checks, and of which exercise.

Each exercise is a markdown task, a code cell tagged ``solution`` + ``exercise:NN.k`` whose working
code sits between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, and a code cell tagged
``check`` + ``exercise:NN.k`` that is one line, ``check("NN.k")``. Student copies and grading both read
notebooks through this module, so they agree on what an exercise is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SOLUTION = "solution"
CHECK = "check"
#: A code cell that runs what the solutions built (a whole server judged, say): its solved run's output would
#: show a blank lesson's student a result they have not earned, so the student copy clears it too.
SOLVED_OUTPUT = "solved-output"
EXERCISE_TAG = re.compile(r"^exercise:(\d{2}\.\d+)$")
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
#: What replaces each BEGIN … END block in a student copy (one line each, at the markers' indentation).
#: Nothing that raises (nbgrader's default stub raises NotImplementedError): Run All on a blank lesson runs to
#: the end, and each check says the exercise is not attempted yet (:mod:`mcp_teach.exercises.catalogue`).
PLACEHOLDER = ("# YOUR CODE HERE", "pass")


class ConventionError(ValueError):
    """A notebook's exercise cells do not follow the convention (so they cannot be copied or graded)."""


@dataclass(frozen=True)
class Exercise:
    """One exercise: its id (``"03.2"``) and the indexes of its solution and check cells."""

    id: str
    solution: int
    check: int


def tags(cell: Any) -> list[str]:
    """The cell's tags (``metadata.tags``), empty if it has none."""
    return list(cell.get("metadata", {}).get("tags", []))


def describe(cell: Any, index: int) -> str:
    """``cell 12 (`capture = ...`)``: how reports name a cell (its index and first line)."""
    first = next((line.strip() for line in str(cell.get("source", "")).splitlines() if line.strip()), "")
    first = first if len(first) <= 40 else first[:39] + "…"
    return f"cell {index}" + (f" (`{first}`)" if first else "")


def find_exercises(notebook: Any) -> list[Exercise]:
    """The exercises of ``notebook`` in order; :class:`ConventionError` if the tags are inconsistent."""
    found: dict[str, dict[str, int]] = {}
    for index, cell in enumerate(notebook.cells):
        cell_tags = tags(cell)
        roles = [role for role in (SOLUTION, CHECK) if role in cell_tags]
        if not roles:
            continue
        ids = [match.group(1) for tag in cell_tags if (match := EXERCISE_TAG.match(tag))]
        where = describe(cell, index)
        if len(roles) == 2:
            raise ConventionError(f"{where} is tagged both 'solution' and 'check'")
        if cell.cell_type != "code":
            raise ConventionError(f"{where} is tagged {roles[0]!r} but is not a code cell")
        if len(ids) != 1:
            raise ConventionError(f"{where} is tagged {roles[0]!r} and needs exactly one 'exercise:NN.k' tag")
        roles_of_id = found.setdefault(ids[0], {})
        if roles[0] in roles_of_id:
            first = roles_of_id[roles[0]]
            raise ConventionError(f"exercise {ids[0]} has two {roles[0]} cells (cells {first} and {index})")
        roles_of_id[roles[0]] = index
    exercises = []
    for exercise_id, roles_of_id in found.items():
        for role in (SOLUTION, CHECK):
            if role not in roles_of_id:
                raise ConventionError(f"exercise {exercise_id} has no {role} cell")
        if roles_of_id[CHECK] < roles_of_id[SOLUTION]:
            raise ConventionError(f"exercise {exercise_id}: the check cell comes before the solution cell")
        exercises.append(Exercise(exercise_id, roles_of_id[SOLUTION], roles_of_id[CHECK]))
    return exercises
