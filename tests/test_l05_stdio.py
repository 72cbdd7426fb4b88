"""mcp_teach.lessons.l05_stdio: tapped pipe lines as a table, long ones cut in the middle."""

from __future__ import annotations

from mcp_teach.lessons.l05_stdio import show_stdio
from mcp_teach.wire.stdio_tap import TappedLine


def test_show_stdio_keeps_the_end_of_long_lines_visible():
    long_line = b'{"jsonrpc":"2.0","id":2,"result":{"tools":[' + b"x" * 200 + b"]}}\n"
    lines = [TappedLine("stdin", b'{"a":1}\n'), TappedLine("stderr", b"log\n"), TappedLine("stdout", long_line)]
    text = repr(show_stdio(lines, width=60))
    rows = text.splitlines()[2:]
    assert len(rows) == 2  # stderr left out by default
    assert rows[0].split() == ["#1", "stdin", "client", "→", "server", "8", "b'{\"a\":1}\\n'"]
    assert rows[1].endswith("xx]}}\\n'") and "…" in rows[1]
    assert len(rows[1].split("  ")[-1]) == 60
    assert "log" in repr(show_stdio(lines, streams=("stderr",)))
