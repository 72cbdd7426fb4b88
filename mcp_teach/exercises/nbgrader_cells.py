"""nbgrader's cell metadata, derived from the course's exercise tags, so a course folder can use the lessons unchanged.

nbgrader (``nbgrader generate_assignment`` / ``autograde``) reads ``metadata.nbgrader`` of each cell:
the solution cell is an answer cell (its ``### BEGIN SOLUTION`` block is cleared for students), the check
cell an autograded test cell worth :data:`POINTS`, and the markdown task above the solution read-only.
The tags stay the one source: ``mcp-teach build-lessons`` writes this metadata, and a test fails when a
lesson's metadata is out of date.
"""

from __future__ import annotations

import copy
from typing import Any

from mcp_teach.exercises.convention import find_exercises

#: Points for each exercise's autograded check.
POINTS = 1


def _metadata(grade_id: str, *, solution: bool, grade: bool) -> dict[str, Any]:
    cell = {"grade": grade, "grade_id": grade_id, "locked": not solution, "schema_version": 3, "solution": solution}
    return cell | ({"points": POINTS} if grade else {})


def with_nbgrader_metadata(notebook: Any) -> Any:
    """A copy of ``notebook`` whose exercise cells carry nbgrader's metadata (and no other cell does)."""
    marked = copy.deepcopy(notebook)
    for cell in marked.cells:
        cell.get("metadata", {}).pop("nbgrader", None)
    for exercise in find_exercises(marked):
        name = "exercise-" + exercise.id.replace(".", "-")
        marked.cells[exercise.solution].metadata["nbgrader"] = _metadata(f"{name}-answer", solution=True, grade=False)
        marked.cells[exercise.check].metadata["nbgrader"] = _metadata(f"{name}-check", solution=False, grade=True)
        task = exercise.solution - 1
        if task >= 0 and marked.cells[task].cell_type == "markdown":
            marked.cells[task].metadata["nbgrader"] = _metadata(f"{name}-task", solution=False, grade=False)
    return marked
