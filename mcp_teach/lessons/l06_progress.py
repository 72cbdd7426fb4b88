"""A progress bar for lesson 06's longer measuring cells."""

from __future__ import annotations

import ipywidgets
from IPython.display import display


def progress_bar(total: int, description: str) -> ipywidgets.IntProgress:
    """An ``IntProgress`` shown in the cell; advance it with ``bar.value += n``.

    It is displayed once, at 0, and only its value changes afterwards, so the saved text output
    (``IntProgress(value=0, ...)``) is the same on every run.
    """
    bar = ipywidgets.IntProgress(value=0, min=0, max=total, description=description)
    display(bar)
    return bar
