"""What the first cell of every lesson calls: versions shown, noise silenced."""

from __future__ import annotations

import logging
import platform
from importlib.metadata import version

import nest_asyncio

from mcp_teach.show import table

#: Packages whose versions each lesson prints, so a mismatch is obvious.
COURSE_PACKAGES = ("mcp-teach", "fastmcp", "mcp", "openai")


def setup_notebook() -> None:
    """Prepare a lesson kernel.

    - Server log lines of in-process servers (e.g. "Error calling tool") would
      interleave with the lesson's output, so fastmcp logs only critical
      problems here; a stdio server logs to ``mcp_teach.runners.STDIO_LOG``.
    - ``nest_asyncio`` lets ``asyncio.run(...)`` work inside a cell (cells can
      also simply ``await``).
    """
    import fastmcp  # noqa: F401  (importing fastmcp resets its logger, so import it first)

    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
    nest_asyncio.apply()


def print_versions(packages: tuple[str, ...] = COURSE_PACKAGES) -> None:
    """Print the Python version and the installed versions of ``packages``."""
    rows = [("python", platform.python_version())]
    rows += [(name, version(name)) for name in packages]
    print(repr(table(("package", "version"), rows)))
