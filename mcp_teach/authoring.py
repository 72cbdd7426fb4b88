"""Re-execute the lesson notebooks and save their outputs (for contributors).

Committed outputs are what nbval compares, so after editing a lesson run
``mcp-teach execute-notebooks`` and commit the result.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path("notebooks")


def lesson_notebooks(folder: Path = NOTEBOOKS) -> list[Path]:
    """The numbered lesson notebooks in reading order."""
    return sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))


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
