"""Files only their owner may read: logs, recordings and rate-limit counters hold what users did and said.

One way to make them, used by every layer that writes one: created 0600, an existing file made 0600, a symbolic
link planted at the path not followed, and nothing but a regular file accepted (a FIFO would block a writer).
A file that every run appends to (the stdio servers' log, a tap's recording) is kept bounded by
:func:`rotate_if_over` before each run writes to it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import IO

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows
_NO_BLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO nobody reads fails at once instead of blocking


def private_descriptor(path: Path, *, truncate: bool = False) -> int:
    """Open ``path`` for writing (appending, or emptied with ``truncate``) as a private regular file."""
    flags = os.O_WRONLY | os.O_CREAT | _NO_FOLLOW | _NO_BLOCK | (os.O_TRUNC if truncate else os.O_APPEND)
    descriptor = os.open(path, flags, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(f"{path} is not a regular file")
        if hasattr(os, "fchmod"):
            os.fchmod(descriptor, 0o600)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def open_private(path: Path, mode: str = "ab", *, encoding: str | None = None) -> IO:
    """:func:`open` for ``mode`` ``a``/``ab`` (append) or ``w``/``wb`` (rewrite) on a private regular file."""
    return open(private_descriptor(path, truncate=mode.startswith("w")), mode, encoding=encoding)


def make_private(path: Path) -> Path:
    """Create ``path`` or check the one there (see :func:`private_descriptor`), for a process that opens it by name."""
    os.close(private_descriptor(path))
    return path


def rotate_if_over(path: Path, limit: int) -> Path:
    """Move ``path`` to ``<name>.1`` (replacing the older one) if it has grown past ``limit`` bytes; return ``path``.

    Called before a run appends, so the two files hold at most ``limit`` bytes plus two runs' worth. A path that
    cannot be moved is left as it is: the run still writes, and the next one tries again.
    """
    with contextlib.suppress(OSError):
        if path.lstat().st_size > limit:
            path.replace(path.with_name(path.name + ".1"))
    return path
