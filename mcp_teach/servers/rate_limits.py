"""A rate limit that every worker process of one server shares: a sliding window kept in SQLite.

An in-memory window (:class:`~mcp_teach.servers.gates.SlidingWindow`) is kept per process, so a class server
with ``--workers 2`` admits twice the limit: the kernel hands each connection to either worker. Here the calls
live in one SQLite file beside the server's data; each check counts and records inside one ``BEGIN IMMEDIATE``
transaction, which SQLite serialises across processes with a file lock, so two workers cannot both admit the
last allowed call. The data is only a minute of call times (each check drops every user's older calls, so a
student who has left leaves no rows behind): it is not flushed to disk (``synchronous=OFF``), and a file that
cannot be read as a database is started anew.

A check runs on the server's event loop (gate 3 is synchronous), so it must not wait long: a check takes well
under a millisecond, and only a process that keeps the file locked (a stuck worker, an ``sqlite3`` shell left
open in a transaction) makes one wait :data:`BUSY_SECONDS`. That call is then refused as a tool error saying
so, and so is every call for the next :data:`LOCKED_PAUSE_SECONDS` without waiting at all: the other requests
of the server (``tools/list``, other students' calls) are held up by at most :data:`BUSY_SECONDS` per pause.
Only processes of the server's own user can take the lock (the notes folder is private to it).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from fastmcp.exceptions import ToolError

from mcp_teach.private_files import make_private
from mcp_teach.servers.gates import Clock

#: The file's name in the server's data folder (it starts with ``.``, which no note id may).
FILE_NAME = ".rate-limits.sqlite3"
#: How long a process waits for another one's transaction (a check takes well under a millisecond).
BUSY_SECONDS = 0.2
#: How long calls are refused without waiting after the database was found locked for :data:`BUSY_SECONDS`.
LOCKED_PAUSE_SECONDS = 2.0
LOCKED = (
    f"Denied by gate 3 (rate limit): the rate limit could not be checked, because another process keeps its "
    f"database ({FILE_NAME} in the notes folder) locked. Try again in a few seconds; if this lasts, the "
    "instructor should end the process that holds it (a stuck server worker, or an sqlite3 shell left in a "
    "transaction)."
)
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
    #: Until when (monotonic seconds) calls are refused without trying the database, which was found locked.
    _locked_until: float = field(default=0.0, repr=False)

    def admit(self, who: str) -> float | None:
        """Count a call by ``who`` and return None, or return how many seconds until one is allowed again.

        ``ToolError`` if another process keeps the database locked (see the module docstring).
        """
        if time.monotonic() < self._locked_until:
            raise ToolError(LOCKED)
        try:
            return self._count(who)
        except sqlite3.DatabaseError as error:
            if not _busy(error):
                raise
            self._locked_until = time.monotonic() + LOCKED_PAUSE_SECONDS
            raise ToolError(LOCKED) from None

    def _count(self, who: str) -> float | None:
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
            except sqlite3.DatabaseError as error:  # not a database (a stray or damaged file): start the minute anew
                if _busy(error):  # a database another process is using: its counts are kept
                    raise
                self.path.unlink(missing_ok=True)
                make_private(self.path)
                self._connection = _connect(self.path)
        return self._connection


def _busy(error: sqlite3.DatabaseError) -> bool:
    """Whether ``error`` says another process keeps the database locked."""
    return error.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _connect(path: Path) -> sqlite3.Connection:
    database = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    database.executescript(_SETUP)
    return database
