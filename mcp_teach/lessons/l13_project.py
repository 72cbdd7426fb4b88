"""Lesson 13, your own project: the folder ``my-capstone/`` whose ``server.py`` is the lesson's cells.

:func:`start_project` makes the folder (``src/my_capstone/``, ``tests/``) and, in IPython, registers two cell magics:

- ``%%server_part NAME`` runs the cell in the notebook, then saves its source as the part ``NAME`` of
  ``src/my_capstone/server.py`` (:class:`ServerModule`): running a cell again replaces its part, parts stay in the
  order first run, the file starts with the docstring the lesson gives and ends with the two lines that call
  ``main()`` when it is run as a program (in a cell they would start the server);
- ``%%project_file PATH`` writes the cell to ``PATH`` inside the folder, as ``%%writefile`` would, printing nothing.

:func:`open_project` (lesson 14) reads the parts back from ``server.py`` and registers the same magics, so later
cells add to the learner's own server; a learner who skipped lesson 13 gets the folder its solution writes
(:func:`write_from_lesson`), and is told so.

:func:`serve_project` starts the server from its folder as a process of its own (``python -m my_capstone.server
--transport streamable-http --port 0``, ``PYTHONPATH=src``), waits until it answers and yields its URL; on leaving
it stops the process. The folder lies beside the lesson, where the learner keeps it; a test run (nbval) names
another parent folder in ``MCP_TEACH_PROJECT_PARENT`` so nothing is left in the repository.
"""

from __future__ import annotations

import contextlib
import json
import linecache
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from mcp_teach.display.console import start_console, stop_console

PROJECT = "my-capstone"
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
PACKAGE = "my_capstone"
#: The line before each part in server.py: it names the cell the part came from.
PART_LINE = "# --- part: {name} " + "-" * 60
FOOTER = 'if __name__ == "__main__":\n    main()\n'
#: A part's first line, as :data:`PART_LINE` writes it: the part's name.
PART_START = re.compile(r"^# --- part: (\S+) -*\n", re.MULTILINE)
#: The solved lesson that starts the project, beside the package (a wheel) or in the clone.
LESSON_13 = [
    Path(__file__).parents[1] / "notebooks" / "solutions" / "13_capstone.ipynb",
    Path(__file__).parents[2] / "notebooks" / "solutions" / "13_capstone.ipynb",
]
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

    @classmethod
    def read(cls, path: Path) -> ServerModule:
        """The module as ``path`` holds it: its docstring and its parts, in order."""
        head, *pieces = PART_START.split(path.read_text(encoding="utf-8").removesuffix(FOOTER))
        module = cls(path, head.strip().strip('"').strip())
        module.parts = {name: source.strip("\n") for name, source in zip(pieces[::2], pieces[1::2], strict=True)}
        return module

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
    register_magics(module, folder)
    return module


def open_project(folder: Path | None = None) -> ServerModule:
    """The project lesson 13 started, to add to; where there is none, the one lesson 13's solution writes."""
    folder = folder or project_folder()
    path = folder / "src" / PACKAGE / "server.py"
    if path.is_file():
        module = ServerModule.read(path)
    else:
        lesson = next(path for path in LESSON_13 if path.is_file())
        module = write_from_lesson(lesson, folder)
        print(f"No {folder.name}/ here yet, so it starts from lesson 13's solution: {len(module.parts)} parts.")
    register_magics(module, folder)
    return module


def write_from_lesson(notebook: Path, folder: Path, module: ServerModule | None = None) -> ServerModule:
    """What running a solved lesson's project cells writes (no kernel): ``start_project``'s folder and docstring if
    the lesson calls it, then each ``%%server_part`` and ``%%project_file`` cell, solution markers left out."""
    cells = [cell["source"] for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]]
    for source in ["".join(lines) if isinstance(lines, list) else lines for lines in cells]:
        first, _, body = source.partition("\n")
        body = "\n".join(line for line in body.split("\n") if line.strip() not in SOLUTION_MARKERS)
        if start := re.search(r'start_project\("(.+?)"\)', source):
            module = start_project(start[1].replace("\\'", "'"), folder)
        elif first.startswith("%%server_part ") and module is not None:
            module.save(first.split()[1], body)
        elif first.startswith("%%project_file "):
            (folder / first.split()[1]).write_text(body, encoding="utf-8")
    assert module is not None, f"{notebook.name} neither starts a project nor was given one"
    return module


def register_magics(module: ServerModule, folder: Path) -> None:
    """In IPython: ``%%server_part NAME`` runs the cell and saves it as a part; ``%%project_file PATH`` writes it."""
    shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
    if shell is None:
        return

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
