"""mcp_teach.servers.rate_limits: the shared window's file holds only the last minute of calls, whoever made them."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from mcp_teach.servers.rate_limits import FILE_NAME, SharedSlidingWindow


def test_calls_older_than_the_window_are_dropped_for_every_user(tmp_path):
    now = [datetime(2026, 5, 1, 9, 0)]
    window = SharedSlidingWindow(3, lambda: now[0], tmp_path / FILE_NAME)
    for who in ("ana", "ben", "cem"):
        assert window.admit(who) is None
    assert window.admit("ana") is None and window.admit("ana") is None
    assert window.admit("ana") is not None  # ana's limit: 3 a minute
    now[0] += timedelta(seconds=61)
    assert window.admit("ana") is None  # a new minute for ana, and ben and cem, who left, keep no rows
    with sqlite3.connect(tmp_path / FILE_NAME) as database:
        assert database.execute("SELECT who FROM calls").fetchall() == [("ana",)]
