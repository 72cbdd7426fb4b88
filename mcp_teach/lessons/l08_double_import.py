"""Lesson 08: the double-import trap, run for real with ``python -m``, and its fix.

``python -m demo.main`` loads ``demo/main.py`` as the module ``__main__``. When ``demo/tools.py`` then does
``from demo.main import register_tool``, Python finds no ``demo.main`` in ``sys.modules`` and loads the same
file a second time, as ``demo.main``: two module objects, two ``TOOLS`` registries. The decorator in
``tools.py`` writes into ``demo.main.TOOLS``; the server started by ``__main__`` reads ``__main__.TOOLS``, which
holds only the tool defined in ``main.py`` itself. The fix: the registry in its own module
(``demo/registry.py``), which every module imports under one name, so there is one module object whoever
imports it.

:func:`run_package` writes a package given as a dict of files into a temporary directory, runs it as
``python -m <package>.main`` (a real low-level MCP server over stdio), asks it ``tools/list``, reads what each
module reported on stderr and removes the directory; :func:`run_variant` runs the demo's broken or fixed version
with it, and exercise 08.3 a student's fix. :func:`listing` prints a package's files for reading.

The log lines carry ``id(TOOLS)``, which changes from run to run; shown in a lesson they are numbered instead
(``<dict 1>``, ``<dict 2>``: the first and second dict object seen), so a stored output stays the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mcp_teach.display.show import table
from mcp_teach.wire.modern_post import modern_post
from mcp_teach.wire.plain_text import PlainText

#: How long a demo server may take to start and answer (it imports the mcp SDK: about a second, far longer on a
#: busy machine); only a server that hangs waits this long.
TIMEOUT = 120.0

_SERVE = '''
def serve():
    """A low-level MCP server over stdio listing the tools this module's TOOLS holds."""
    import sys

    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    main = sys.modules["__main__"]  # multiprocessing aliases it as __mp_main__: one object, counted once
    same_file = sorted(
        n for n, m in list(sys.modules.items())
        if getattr(m, "__file__", None) == __file__ and (n == "__main__" or m is not main)
    )
    print(f"SERVER module {__name__!r} reads TOOLS at {id(TOOLS):#x}: {sorted(TOOLS)}", file=sys.stderr)
    print(f"LOADED main.py as {same_file}", file=sys.stderr, flush=True)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[
            types.Tool(name=name, description=fn.__doc__, input_schema={"type": "object"}) for name, fn in TOOLS.items()
        ])

    async def main():
        server = Server("double-import-demo", version="1.0.0", on_list_tools=list_tools)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
'''

_REGISTRY = '''
TOOLS = {}


def register_tool(fn):
    """Record fn in TOOLS under its name."""
    import sys

    TOOLS[fn.__name__] = fn
    print(f"REGISTER {fn.__name__} into TOOLS of module {__name__!r} at {id(TOOLS):#x}", file=sys.stderr)
    return fn
'''

_ADD = '''

@register_tool
def add(a, b):
    """Add two numbers."""
    return a + b


import {package}.tools  # noqa: E402  (registers the tools defined there)
'''

_TOOLS = '''from {package}.{home} import register_tool


@register_tool
def subtract(a, b):
    """Subtract b from a."""
    return a - b
'''

_MAIN_GUARD = """

if __name__ == "__main__":
    serve()
"""


def demo_files(package: str, *, fixed: bool) -> dict[str, str]:
    """The files of the demo package: ``main.py`` and ``tools.py`` (and ``registry.py`` when ``fixed``)."""
    if fixed:
        main = f"from {package}.registry import TOOLS, register_tool\n" + _ADD.format(package=package)
        files = {"registry.py": _REGISTRY, "tools.py": _TOOLS.format(package=package, home="registry")}
    else:
        main = _REGISTRY + _ADD.format(package=package)
        files = {"tools.py": _TOOLS.format(package=package, home="main")}
    return {"__init__.py": "", "main.py": main + _SERVE + _MAIN_GUARD, **files}


#: Where the demo's main.py stops being about registries: the server it starts is the same in every version.
SERVE_MARKER = "\ndef serve():"


def listing(files: dict[str, str], package: str) -> str:
    """The files of a demo package as one text, each under its path; ``main.py``'s ``serve()`` is summarised.

    Runs of blank lines are shown as one, so that a file fits on a screen.
    """
    parts = []
    for name, text in files.items():
        if SERVE_MARKER in text:
            text = text.split(SERVE_MARKER)[0].rstrip() + (
                "\n\n\ndef serve(): ...  # a low-level Server over stdio whose tools/list reads TOOLS\n"
                '\n\nif __name__ == "__main__":\n    serve()'
            )
        text = re.sub(r"\n{3,}", "\n\n", text.strip())
        if name != "__init__.py" or files[name]:  # an empty __init__.py is left out
            parts.append(f"# ---- {package}/{name} ----\n{text}\n")
    return "\n".join(parts)


_ADDRESS = re.compile(r"\b0x[0-9a-f]+\b")


def numbered_addresses(lines: list[str]) -> list[str]:
    """``lines`` with each ``0x...`` address replaced by ``<dict N>``, N counting distinct addresses in order."""
    seen: dict[str, int] = {}

    def label(match: re.Match[str]) -> str:
        return f"<dict {seen.setdefault(match.group(0), len(seen) + 1)}>"

    return [_ADDRESS.sub(label, line) for line in lines]


@dataclass(frozen=True, repr=False)
class DemoRun(PlainText):
    """One ``python -m <package>.main`` run: what it listed over MCP and what its modules said."""

    variant: str
    command: str
    #: The tool names the running server answered to ``tools/list``.
    listed: list[str]
    #: The module objects ``main.py`` was loaded as, by name (``['__main__', 'broken.main']``: twice).
    main_loaded_as: list[str]
    #: ``REGISTER ...`` and ``SERVER ...`` lines from stderr, in order.
    log: list[str]

    def text(self) -> str:
        rows = [[self.command, ", ".join(self.main_loaded_as), ", ".join(self.listed) or "(none)"]]
        shown = repr(table(["command", "main.py loaded as", "tools/list answers"], rows))
        return f"{self.variant}\n\n{shown}\n\n" + "\n".join(numbered_addresses(self.log))


async def _run(root: Path, package: str, variant: str) -> DemoRun:
    command = [sys.executable, "-m", f"{package}.main"]
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": ""}
    pipes = dict.fromkeys(("stdin", "stdout", "stderr"), asyncio.subprocess.PIPE)
    process = await asyncio.create_subprocess_exec(*command, cwd=root, env=environment, **pipes)
    assert process.stdin is not None and process.stdout is not None
    request = modern_post("tools/list").body  # one 2026-07-28 request: no handshake needed
    try:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a package that exits at once
            process.stdin.write(json.dumps(request).encode() + b"\n")
            await process.stdin.drain()
        line = await asyncio.wait_for(process.stdout.readline(), TIMEOUT)
        process.stdin.close()
        _, stderr = await asyncio.wait_for(process.communicate(), TIMEOUT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    lines = stderr.decode(errors="replace").splitlines()
    if not line.strip():
        last = "\n".join(lines[-5:]) or "(nothing on stderr)"
        raise RuntimeError(f"python -m {package}.main answered nothing to tools/list; its stderr ended with:\n{last}")
    loaded = next((line for line in lines if line.startswith("LOADED main.py as ")), "LOADED main.py as []")
    listed = [tool["name"] for tool in json.loads(line)["result"]["tools"]]
    main_loaded_as = json.loads(loaded.removeprefix("LOADED main.py as ").replace("'", '"'))
    log = [line for line in lines if line.startswith(("REGISTER ", "SERVER "))]
    return DemoRun(variant, f"python -m {package}.main", listed, main_loaded_as, log)


async def run_package(files: dict[str, str], package: str, variant: str | None = None) -> DemoRun:
    """Write ``files`` (name -> text) as the package ``package`` in a temporary directory, run it, remove it.

    The package's ``main.py`` must start a stdio MCP server, as the demo's do; the run is
    ``python -m <package>.main`` with the directory as the working directory.
    """
    if not package.isidentifier():
        raise ValueError(f"a package name is a Python identifier, not {package!r}")
    with tempfile.TemporaryDirectory(prefix="mcp-teach-l08-") as directory:
        root = Path(directory)
        (root / package).mkdir()
        for name, text in {"__init__.py": "", **files}.items():  # a regular package: no namesake elsewhere wins
            (root / package / name).write_text(text)
        return await _run(root, package, variant or package)


async def run_variant(variant: str) -> DemoRun:
    """Run one version of the demo: ``"broken"`` (the registry in main.py) or ``"fixed"`` (in registry.py)."""
    labels = {"broken": "broken: the registry in main.py", "fixed": "fixed: the registry in registry.py"}
    if variant not in labels:
        raise ValueError(f"choose 'broken' or 'fixed', not {variant!r}")
    return await run_package(demo_files(variant, fixed=variant == "fixed"), variant, labels[variant])
