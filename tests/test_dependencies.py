"""Every third-party package the course's code imports is declared in pyproject.toml, not only brought in by another.

A package that arrives only as a dependency of a dependency can vanish with that package's next release.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import mcp_teach

PACKAGE = Path(mcp_teach.__file__).parent
PYPROJECT = PACKAGE.parent / "pyproject.toml"
#: Imported only where they exist (inside ``try``/``except ImportError``, or on one platform): not declared.
OPTIONAL = {"fcntl": "POSIX only", "google": "google.colab: imported only in a Colab kernel, which has it"}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_top_level_modules(root: Path = PACKAGE) -> set[str]:
    """The first part of every module any file under ``root`` imports (``from a.b import c`` -> ``a``)."""
    found = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
    return found


def declared() -> set[str]:
    """The distributions named in ``[project] dependencies``, normalized."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    names = (re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0] for requirement in project["dependencies"])
    return {_normalized(name) for name in names}


def test_every_imported_package_is_declared():
    third_party = imported_top_level_modules() - set(sys.stdlib_module_names) - {"mcp_teach", *OPTIONAL}
    distributions = importlib.metadata.packages_distributions()
    missing = {
        module: distributions.get(module)
        for module in sorted(third_party)
        # the module's own name counts too: fastmcp (declared) is a meta package over fastmcp-slim (which has it)
        if not {_normalized(name) for name in [module, *distributions.get(module, [])]} & declared()
    }
    assert missing == {}, f"imported but not declared in pyproject.toml [project] dependencies: {missing}"


def test_the_scan_finds_imports_and_declarations():
    modules = imported_top_level_modules()
    assert {"fastmcp", "mcp_types", "httpx2", "json"} <= modules
    assert {"fastmcp", "mcp-types", "httpx2"} <= declared()
