"""A rate limit that every worker process of one server shares: a sliding window kept in SQLite.

An in-memory window (:class:`~mcp_teach.servers.gates.SlidingWindow`) is kept per process, so a class server
with ``--workers 2`` admits twice the limit: the kernel hands each connection to either worker. Here the calls
live in one SQLite file beside the server's data; each check counts and records inside one ``BEGIN IMMEDIATE``
transaction, which SQLite serialises across processes with a file lock, so two workers cannot both admit the
last allowed call. The data is only a minute of call times (each check drops every user's older calls, so a
student who has left leaves no rows behind): it is not flushed to disk (``synchronous=OFF``), and a file that
cannot be read as a database is started anew.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

from mcp_teach.private_files import make_private
from mcp_teach.servers.gates import Clock

#: The file's name in the server's data folder (it starts with ``.``, which no note id may).
FILE_NAME = ".rate-limits.sqlite3"
#: How long a process waits for another one's transaction (a check takes well under a millisecond).
BUSY_SECONDS = 5.0
#: What a connection runs first: no flushing to disk, the table and its two indexes.
_SETUP = """
PRAGMA synchronous=OFF;
CREATE TABLE IF NOT EXISTS calls (who TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS calls_by_who ON calls (who, at);
CREATE INDEX IF NOT EXISTS calls_by_time ON calls (at);
"""


@dataclass
class SharedSlidingWindow:
    """At most ``limit`` calls per user in any ``seconds`` long window, counted over every process using ``path``."""

    limit: int
    clock: Clock
    path: Path
    seconds: float = 60.0
    _connection: sqlite3.Connection | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def admit(self, who: str) -> float | None:
        """Count a call by ``who`` and return None, or return how many seconds until one is allowed again."""
        now = self.clock().timestamp()  # a naive clock (a lesson's manual one) counts as local time
        with self._lock, self._open() as database:  # the connection commits at the end, or rolls back
            database.execute("BEGIN IMMEDIATE")
            database.execute("DELETE FROM calls WHERE at <= ?", (now - self.seconds,))
            rows = database.execute("SELECT at FROM calls WHERE who = ? ORDER BY at LIMIT ?", (who, self.limit))
            times = [at for (at,) in rows]
            if len(times) >= self.limit:
                return self.seconds - (now - times[0])
            database.execute("INSERT INTO calls (who, at) VALUES (?, ?)", (who, now))
        return None

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # private at once, as the notes store
            make_private(self.path)
            try:
                self._connection = _connect(self.path)
            except sqlite3.DatabaseError:  # not a database (a stray or damaged file): start the minute anew
                self.path.unlink(missing_ok=True)
                make_private(self.path)
                self._connection = _connect(self.path)
        return self._connection


def _connect(path: Path) -> sqlite3.Connection:
    database = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    database.executescript(_SETUP)
    return database
