"""mcp_teach.lessons.l06_progress: outside a kernel a progress bar only counts."""

from __future__ import annotations

from mcp_teach.lessons.l06_progress import Progress


def test_progress_outside_a_kernel_counts_silently(capsys):
    progress = Progress(10, "calls")
    progress.advance(4)
    assert progress.done == 4
    progress.finish()
    assert progress.done == 10
    assert capsys.readouterr().out == ""
