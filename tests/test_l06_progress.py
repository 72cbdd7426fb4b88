"""mcp_teach.lessons.l06_progress: the bar is shown once, at 0, so a saved cell's text output never changes."""

from __future__ import annotations

import ipywidgets

from mcp_teach.lessons import l06_progress


def test_the_bar_is_displayed_at_zero_and_then_only_counts(monkeypatch):
    shown = []
    monkeypatch.setattr(l06_progress, "display", shown.append)
    bar = l06_progress.progress_bar(10, "calls")
    assert shown == [bar]
    assert isinstance(bar, ipywidgets.IntProgress)
    assert (bar.value, bar.max, bar.description) == (0, 10, "calls")
    bar.value += 4
    assert bar.value == 4 and shown == [bar]
