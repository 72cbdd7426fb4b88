"""Lesson 13, your own project: the folder ``my-capstone/`` whose ``server.py`` is the lesson's cells.

:func:`start_project` makes the folder (``src/my_capstone/``, ``tests/``) and, in IPython, registers two cell magics:

- ``%%server_part NAME`` runs the cell in the notebook, then saves its source as the part ``NAME`` of
  ``src/my_capstone/server.py`` (:class:`ServerModule`): running a cell again replaces its part, parts stay in the
  order first run, the file starts with the docstring the lesson gives and ends with the two lines that call
  ``main()`` when it is run as a program (in a cell they would start the server);
- ``%%project_file PATH`` writes the cell to ``PATH`` inside the folder, as ``%%writefile`` would, printing nothing.

:func:`serve_project` starts the server from its folder as a process of its own (``python -m my_capstone.server
--transport streamable-http --port 0``, ``PYTHONPATH=src``), waits until it answers and yields its URL; on leaving
it stops the process. The folder lies beside the lesson, where the learner keeps it; a test run (nbval) names
another parent folder in ``MCP_TEACH_PROJECT_PARENT`` so nothing is left in the repository.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from mcp_teach.display.console import start_console, stop_console

PROJECT = "my-capstone"
PACKAGE = "my_capstone"
#: The line before each part in server.py: it names the cell the part came from.
PART_LINE = "# --- part: {name} " + "-" * 60
FOOTER = 'if __name__ == "__main__":\n    main()\n'
#: What uvicorn prints once the server answers, with the port it was given (``--port 0``: a free one).
READY = re.compile(r"running on (http://127\.0\.0\.1:\d+)")


class ServerModule:
    """``server.py`` as named parts after a docstring; every change is written at once."""

    def __init__(self, path: Path, docstring: str) -> None:
        self.path, self.docstring = path, docstring.strip()
        self.parts: dict[str, str] = {}

    def save(self, name: str, source: str) -> None:
        """Add the part ``name``, or replace it where it stands."""
        self.parts[name] = source.strip("\n")
        self.path.write_text(self.text(), encoding="utf-8")

    def text(self) -> str:
        parts = [f"{PART_LINE.format(name=name)[:120]}\n{source}" for name, source in self.parts.items()]
        docstring = f'"""{self.docstring}\n"""' if "\n" in self.docstring else f'"""{self.docstring}"""'
        return "\n\n\n".join([docstring, *parts, FOOTER])


def project_folder() -> Path:
    """``my-capstone`` beside the lesson, or in the folder that ``MCP_TEACH_PROJECT_PARENT`` names."""
    return Path(os.environ.get("MCP_TEACH_PROJECT_PARENT") or ".") / PROJECT


def start_project(docstring: str, folder: Path | None = None) -> ServerModule:
    """Make the project's folders and a ``server.py`` with ``docstring``; register the magics in IPython."""
    folder = folder or project_folder()
    package = folder / "src" / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    (folder / "tests").mkdir(exist_ok=True)
    (package / "__init__.py").write_text('"""My MCP server (lesson 13 of mcp-teach)."""\n', encoding="utf-8")
    module = ServerModule(package / "server.py", docstring)
    module.path.write_text(module.text(), encoding="utf-8")
    shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
    if shell is not None:

        def server_part(line: str, cell: str) -> None:
            code = shell.transform_cell(cell)
            name = f"<server part {line.strip()}>"
            linecache.cache[name] = (len(code), None, code.splitlines(keepends=True), name)  # as IPython keeps a cell
            exec(compile(code, name, "exec"), shell.user_ns)
            module.save(line.strip(), cell)

        def project_file(line: str, cell: str) -> None:
            (folder / line.strip()).write_text(cell, encoding="utf-8")

        shell.register_magic_function(server_part, "cell")
        shell.register_magic_function(project_file, "cell")
    return module


@contextlib.contextmanager
def serve_project(folder: Path | None = None) -> Iterator[str]:
    """Start the project's server from its folder over streamable HTTP on a free port; yield its URL; stop it."""
    command = [sys.executable, "-m", f"{PACKAGE}.server", "--transport", "streamable-http", "--port", "0"]
    cwd = folder or project_folder()
    process, stderr, printed = start_console(command, READY, cwd=cwd, env={"PYTHONPATH": "src"})
    try:
        yield f"{READY.search(printed)[1]}/mcp"
    finally:
        stop_console(process, stderr)
