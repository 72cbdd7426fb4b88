"""The file ``mcp-teach tap`` writes: one JSON object per line, each stamped with when it happened.

Both taps (stdio and HTTP) append records here as things cross the wire, not at the end, so a
recording is complete up to the moment a host killed the tap. Every record carries ``type``,
``time`` (wall clock, ISO 8601 UTC, for HAR and for people) and ``at`` (seconds since the tap
started, for diagrams and timings). The first record (``type: "tap"``) says what was tapped.

Standard library only (and the course's standard-library modules): the stdio tap is started by a host for
every connection and must start fast.
The file is created 0600 (:func:`~mcp_teach.private_files.open_private`), and one another user owns is refused:
whoever planted it would read what the tap records. A host starts the stdio tap for every connection, each run
appending to the same file: one grown past :data:`RECORDING_LIMIT` is first moved to ``<name>.1``
(:func:`~mcp_teach.private_files.rotate_if_over`). One record holds at most :data:`RECORD_LIMIT` of a body, a line
or an event (:func:`capped`), so no single message grows a recording far past that.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_teach.private_files import open_private, rotate_if_over

#: Version of the record format, in the first record; :func:`~mcp_teach.wire.host_tap_recording.load_tap` checks it.
FORMAT_VERSION = 1
#: A recording over this size is moved to ``<name>.1`` (replacing the older one) before a tap appends to it.
RECORDING_LIMIT = 16 * 1024 * 1024
#: What one record keeps of a body, a line or an event (bytes); a bigger one is cut and its record says how big it
#: was (``truncated_from``).
RECORD_LIMIT = 1024 * 1024
#: How far past the cut a body is redacted: a credential the cut splits is found whole (up to this long).
CUT_MARGIN = 64 * 1024


def capped(field: str, data: bytes, redact: Callable[..., str], *args: Any, errors: str = "replace") -> dict[str, Any]:
    """A record's ``field``: ``data`` decoded and redacted (``redact(text, *args)``), cut to :data:`RECORD_LIMIT` if
    it is longer, and then ``truncated_from`` its size. What may be the start of a credential cut in two is left out."""
    text = redact(data[: RECORD_LIMIT + CUT_MARGIN].decode("utf-8", errors), *args)
    if len(data) <= RECORD_LIMIT:
        return {field: text}
    return {field: text[: min(RECORD_LIMIT, len(text) - CUT_MARGIN)], "truncated_from": len(data)}


def wall_time(seconds: float) -> str:
    """``time.time()`` seconds as ISO 8601 in UTC with microseconds, e.g. ``2026-05-01T09:30:00.123456+00:00``."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds")


class TapWriter:
    """Appends records to a recording; safe to call from several threads (the stdio relays) at once."""

    def __init__(self, path: Path, **header: Any) -> None:
        # Open for the tap's lifetime, owner only.
        self._out = open_private(rotate_if_over(Path(path), RECORDING_LIMIT), "a", encoding="utf-8")
        if hasattr(os, "geteuid") and os.fstat(self._out.fileno()).st_uid != os.geteuid():
            self._out.close()
            raise PermissionError(f"{path} belongs to another user, who could read the recording: record elsewhere")
        self._lock = threading.Lock()
        self._wall0 = time.time()
        self._start = time.perf_counter()
        self.write("tap", version=FORMAT_VERSION, **header)

    def write(self, kind: str, *, ascii_only: bool = False, **fields: Any) -> None:
        """Append one record of type ``kind`` now (flushed, so nothing waits in a buffer).

        ``ascii_only`` for text decoded with ``surrogateescape``: its undecodable bytes are kept as ``\\udcXX``.
        """
        at = time.perf_counter() - self._start
        record = {"type": kind, "time": wall_time(self._wall0 + at), "at": round(at, 6), **fields}
        row = json.dumps(record, ensure_ascii=ascii_only)
        with self._lock:
            if not self._out.closed:
                self._out.write(row + "\n")
                self._out.flush()

    def close(self) -> None:
        with self._lock:
            self._out.close()
