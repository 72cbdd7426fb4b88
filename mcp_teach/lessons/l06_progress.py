"""Progress bars for lesson 06's long measurements: an ipywidgets bar in a notebook cell, silent elsewhere."""

from __future__ import annotations

from typing import Any


class Progress:
    """A progress bar for a notebook cell (an ipywidgets ``IntProgress``); silent outside a kernel.

    The bar is displayed once at its starting state and then only its value
    changes, so a saved notebook's text output (``IntProgress(value=0, ...)``)
    is the same on every run.
    """

    def __init__(self, total: int, description: str) -> None:
        self.total = total
        self.done = 0
        self._bar = _display_bar(total, description)

    def advance(self, count: int = 1) -> None:
        """Move the bar ``count`` steps on."""
        self.done += count
        if self._bar is not None:
            self._bar.value = min(self.done, self.total)

    def finish(self) -> None:
        """Fill the bar and colour it green."""
        self.done = self.total
        if self._bar is not None:
            self._bar.value = self.total
            self._bar.bar_style = "success"


def _display_bar(total: int, description: str) -> Any:
    """An ``IntProgress`` shown in the current cell, or ``None`` when not inside a Jupyter kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    import ipywidgets
    from IPython.display import display

    bar = ipywidgets.IntProgress(value=0, min=0, max=total, description=description)
    display(bar)
    return bar


def progress_bar(progress: Progress | bool | None, total: int, description: str) -> Progress | None:
    """The bar a ``progress=`` argument asks for: ``True`` makes one, a :class:`Progress` is used as is, else none."""
    if progress is True:
        return Progress(total, description)
    return progress or None
