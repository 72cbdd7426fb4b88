"""Student copies of the lessons: solutions replaced by a placeholder, exercise outputs cleared.

::

    mcp-teach student-copy notebooks/ -o student/

In every cell tagged ``solution`` each ``### BEGIN SOLUTION`` … ``### END SOLUTION`` block (markers
included) becomes ``# YOUR CODE HERE`` + ``pass`` at the markers' indentation (nothing that raises, so Run All
goes on);
solution and check cells, and cells tagged ``solved-output`` (they run what the solutions built), lose their
outputs and execution counts; everything else is kept as is.
Running it on its own output changes nothing, and a notebook without exercises is copied byte for byte.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from mcp_teach.exercises.convention import (
    BEGIN,
    CHECK,
    END,
    PLACEHOLDER,
    SOLUTION,
    SOLVED_OUTPUT,
    ConventionError,
    describe,
    tags,
)


@dataclass(frozen=True)
class StudentCopy:
    """One notebook to write: where it comes from, where it goes, how many solutions it hides."""

    source: Path
    target: Path
    solutions: int
    notebook: Any  # the student version, or None when the source is copied unchanged


def strip_solution(source: str, where: str = "a solution cell") -> str:
    """``source`` with each BEGIN … END SOLUTION block replaced by the placeholder lines."""
    lines: list[str] = []
    inside = False
    for line in source.split("\n"):
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ConventionError(f"{where}: '{BEGIN}' inside another solution block")
            indent = line[: len(line) - len(line.lstrip())]
            lines += [indent + text for text in PLACEHOLDER]
            inside = True
        elif marker == END:
            if not inside:
                raise ConventionError(f"{where}: '{END}' without '{BEGIN}'")
            inside = False
        elif not inside:
            lines.append(line)
    if inside:
        raise ConventionError(f"{where}: '{BEGIN}' without '{END}'")
    return "\n".join(lines)


def student_notebook(notebook: Any) -> tuple[Any, int]:
    """The student version of ``notebook`` (a new object) and the number of solution cells in it."""
    student = copy.deepcopy(notebook)
    solutions = 0
    for index, cell in enumerate(student.cells):
        cell_tags = tags(cell)
        if cell.cell_type != "code" or not {SOLUTION, CHECK, SOLVED_OUTPUT} & set(cell_tags):
            continue
        if SOLUTION in cell_tags:
            solutions += 1
            where = describe(cell, index)
            if BEGIN in cell.source or END in cell.source:
                cell.source = strip_solution(cell.source, where)
            elif not all(text in cell.source for text in PLACEHOLDER):
                raise ConventionError(
                    f"{where} is tagged 'solution' but has no '{BEGIN}' … '{END}' block: "
                    "its student copy would contain the solution"
                )
        cell.outputs = []
        cell.execution_count = None
    return student, solutions


def notebooks_in(paths: Sequence[Path]) -> list[Path]:
    """The notebooks named by ``paths``: each folder's ``*.ipynb`` (not recursive, sorted) and each notebook."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(path.glob("*.ipynb"))
        elif path.suffix == ".ipynb" and path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path} is neither a folder nor a notebook (.ipynb)")
    return found


def plan_copies(paths: Sequence[Path], out: Path) -> list[StudentCopy]:
    """Read and convert every notebook first (nothing is written if one of them is malformed)."""
    out_resolved = out.resolve()
    for path in paths:
        folder = (path if path.is_dir() else path.parent).resolve()
        if out_resolved == folder or folder in out_resolved.parents:
            raise ValueError(
                f"refusing to write student copies into {out}: it is (inside) the source folder {folder}; "
                "choose a folder outside it"
            )
    plans: list[StudentCopy] = []
    for source in notebooks_in(paths):
        target = out / source.name
        if any(plan.target == target for plan in plans):
            raise ValueError(f"two notebooks would be written to {target}")
        try:
            notebook = nbformat.read(source, as_version=4)
            student, solutions = student_notebook(notebook)
        except ConventionError as error:
            raise ConventionError(f"{source}: {error}") from None
        except ValueError as error:  # not JSON, or not a notebook
            raise ValueError(f"{source} is not a valid notebook: {error}") from None
        plans.append(StudentCopy(source, target, solutions, None if student == notebook else student))
    return plans


def write_copies(plans: Sequence[StudentCopy]) -> None:
    """Write the planned copies (folders created as needed)."""
    for plan in plans:
        plan.target.parent.mkdir(parents=True, exist_ok=True)
        if plan.notebook is None:
            shutil.copyfile(plan.source, plan.target)
        else:
            nbformat.write(plan.notebook, plan.target)


def describe_copy(plan: StudentCopy) -> str:
    """One line for the terminal: what was written."""
    if plan.solutions == 0:
        return f"wrote {plan.target} (no exercises: copied unchanged)"
    exercises = f"{plan.solutions} exercise{'s' if plan.solutions != 1 else ''}"
    if plan.notebook is None:
        return f"wrote {plan.target} ({exercises}, already a student copy: copied unchanged)"
    return f"wrote {plan.target} ({exercises}, solutions replaced)"
