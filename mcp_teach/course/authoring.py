"""Keep the lessons' two forms in step (for contributors): the solved source and the blank lessons made from it.

``notebooks/solutions/NN_*.ipynb`` is what contributors edit and run: every exercise solved, outputs of a
real run. ``notebooks/NN_*.ipynb``, what students open, is generated from it (fastbook's ``clean/``): the
same lesson with each ``### BEGIN SOLUTION`` block blanked and the exercise cells' outputs cleared.

- ``mcp-teach execute-notebooks`` re-runs the solved lessons in fresh kernels, saves them, and rebuilds
  the blank ones (commit both);
- ``mcp-teach build-lessons`` only rebuilds: nbgrader's metadata in the solved lessons
  (:mod:`~mcp_teach.exercises.nbgrader_cells`) and the blank lessons. A test fails when either is stale.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from mcp_teach.exercises.nbgrader_cells import with_nbgrader_metadata
from mcp_teach.exercises.student_copy import student_notebook

NOTEBOOKS = Path("notebooks")
SOLUTIONS = NOTEBOOKS / "solutions"
#: Each translated edition's solved lessons (``notebooks/zh/solutions``), built into blank ones as the English are.
TRANSLATED = (NOTEBOOKS / "zh" / "solutions",)
#: The short tour before the lessons: no exercises, so its blank copy is the same notebook.
TOUR = "tour.ipynb"


def lesson_notebooks(folder: Path = NOTEBOOKS) -> list[Path]:
    """The numbered lesson notebooks of ``folder`` in reading order (default: the blank lessons)."""
    return sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))


def course_notebooks(folder: Path = SOLUTIONS) -> list[Path]:
    """The tour (when ``folder`` has it) and the lessons: what the build and ``execute-notebooks`` go through."""
    tour = folder / TOUR
    return [tour, *lesson_notebooks(folder)] if tour.is_file() else lesson_notebooks(folder)


def execute_notebook(path: Path, timeout: int = 600) -> None:
    """Run ``path`` top to bottom in a fresh kernel and save it with its outputs."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        coalesce_streams=True,  # one print, one stored output (not pieces that depend on timing)
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    nbformat.write(notebook, path)


def built_lessons(sources: list[Path] | None = None) -> dict[Path, str]:
    """What the build writes: each solved lesson with nbgrader's metadata, and its blank twin one folder up.

    ``sources``: solved lessons (default: all of ``notebooks/solutions/`` and of each translation's).
    """
    files: dict[Path, str] = {}
    every = [path for folder in (SOLUTIONS, *TRANSLATED) for path in course_notebooks(folder)]
    for source in every if sources is None else sources:
        solved = with_nbgrader_metadata(nbformat.read(source, as_version=4))
        blank, _ = student_notebook(solved)
        files[source] = nbformat.writes(solved) + "\n"
        files[source.parent.parent / source.name] = nbformat.writes(blank) + "\n"
    return files


def stale_lessons(sources: list[Path] | None = None) -> dict[Path, str]:
    """The files :func:`build_lessons` would change (missing ones included), with the text it would write."""
    return {
        path: text for path, text in built_lessons(sources).items() if not path.is_file() or path.read_text() != text
    }


def build_lessons(sources: list[Path] | None = None) -> list[Path]:
    """Write the solved lessons' nbgrader metadata and the blank lessons; returns the files that changed."""
    changed = stale_lessons(sources)
    for path, text in changed.items():
        path.write_text(text)
    return list(changed)
