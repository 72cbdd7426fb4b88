"""What the first cell of every lesson calls: versions shown, noise silenced."""

from __future__ import annotations

import asyncio
import logging
import platform
import signal
import socket
import sys
from importlib.metadata import version

import nest_asyncio

from mcp_teach.config import set_lesson_language
from mcp_teach.display.show import table

#: Packages whose versions each lesson prints, so a mismatch is obvious.
COURSE_PACKAGES = ("mcp-teach", "fastmcp", "mcp", "openai")
#: The socket pair of :func:`wake_on_interrupt`, kept for the kernel's lifetime (collected, it would close).
_WAKE_UP_SOCKETS: list[socket.socket] = []


def setup_notebook(language: str = "en") -> None:
    """Prepare a lesson kernel.

    - The exercise checks answer in the lesson's ``language``: ``"en"``, or ``"zh"`` in a Chinese lesson.
    - Server log lines of in-process servers (e.g. "Error calling tool") would
      interleave with the lesson's output, so fastmcp logs only critical
      problems here; a stdio server logs to ``mcp_teach.transports.in_process.STDIO_LOG``.
    - ``nest_asyncio`` lets ``asyncio.run(...)`` work inside a cell (cells can
      also simply ``await``).
    - The Interrupt button stops a cell that is waiting (see :func:`wake_on_interrupt`).
    - The first ``tools/call`` does not spend a second on a grammar no lesson uses (:func:`skip_format_grammar`).
    - On Colab the widgets render (:func:`use_colab_widget_manager`).
    """
    set_lesson_language(language)  # first: a language no check speaks is refused before anything changes
    import fastmcp  # noqa: F401  (importing fastmcp resets its logger, so import it first)

    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
    nest_asyncio.apply()
    wake_on_interrupt()
    skip_format_grammar()
    use_colab_widget_manager()


def use_colab_widget_manager() -> None:
    """On Colab, let the ipywidgets 8 widgets (the explorer, the forms) render; anywhere else, do nothing.

    Colab's page draws the ipywidgets 7 it ships; widgets of version 8, which the course installs, are drawn by the
    widget manager that ``google.colab.output.enable_custom_widget_manager()`` turns on (colabtools#3020, #4525).
    """
    if "google.colab" not in sys.modules:  # a Colab kernel has imported it; elsewhere it is not even installed
        return
    from google.colab import output

    output.enable_custom_widget_manager()


def skip_format_grammar() -> None:
    """Keep ``jsonschema`` from loading ``rfc3987_syntax``, which makes its first import take a second, not 0.1 s.

    The MCP client checks every tool result against the tool's ``outputSchema`` with jsonschema, importing it
    at the first ``tools/call`` of a kernel. jsonschema then builds, with ``rfc3987_syntax`` (installed with
    JupyterLab), the grammar of the ``iri`` formats, which is most of that second. Formats are only checked with
    a ``FormatChecker``, which neither the MCP client nor any lesson uses; without ``rfc3987_syntax`` jsonschema
    leaves those two formats unchecked and everything else as it was. Lesson 06 measures the cost in a fresh
    process, where this does not apply. A kernel that imported it already keeps it.
    """
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "import it" raises ImportError


def wake_on_interrupt() -> None:
    """Let the kernel's Interrupt reach a cell that is ``await``-ing something quiet (a server, a sleep).

    ipykernel 7 answers SIGINT by scheduling the cell's cancellation with a
    call that does not wake the event loop (ipython/ipykernel#881): a loop
    asleep in ``select()`` only notices when some other message arrives, so
    the button seems to do nothing. ``signal.set_wakeup_fd`` writes a byte to
    a socket the loop watches on every signal, which wakes it at once.
    Does nothing outside a running event loop, or if a wake-up fd is already
    set (by an earlier call, or by asyncio's own signal handling).
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    if (previous := signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)) != -1:
        signal.set_wakeup_fd(previous)
        reader.close()
        writer.close()
        return
    loop.add_reader(reader.fileno(), reader.recv, 4096)
    _WAKE_UP_SOCKETS.extend((reader, writer))


def print_versions(packages: tuple[str, ...] = COURSE_PACKAGES) -> None:
    """Print the Python version and the installed versions of ``packages``."""
    rows = [("python", platform.python_version()), *((name, version(name)) for name in packages)]
    print(repr(table(("package", "version"), rows)))
