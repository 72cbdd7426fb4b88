"""Which servers ``--server`` can name, and how to build one: transports know servers only through this table.

Each entry names a module and its factory, imported only when that server is built: a stdio client starts a
server for every connection, and serving the calculator should not import the knowledge base (or the reverse).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastmcp import FastMCP

#: ``--server`` name -> (module, factory function); the first one is the default.
SERVERS: dict[str, tuple[str, str]] = {
    "calculator": ("mcp_teach.servers.calculator", "build_calculator_server"),
    "knowledge": ("mcp_teach.servers.knowledge", "build_knowledge_server"),
    "assistant": ("mcp_teach.servers.assistant", "build_assistant_server"),
    "notes": ("mcp_teach.servers.notes", "build_notes_server"),
    "capstone": ("mcp_teach.servers.capstone", "build_capstone_server"),
}
SERVER_NAMES: tuple[str, ...] = tuple(SERVERS)
DEFAULT_SERVER = "calculator"


def server_factory(name: str = DEFAULT_SERVER) -> Callable[[], FastMCP]:
    """The function that builds a fresh server called ``name``; ``ValueError`` names the choices."""
    if name not in SERVERS:
        raise ValueError(f"unknown server {name!r}: choose one of {', '.join(SERVER_NAMES)}")
    module, function = SERVERS[name]
    return getattr(importlib.import_module(module), function)


def build_server(name: str = DEFAULT_SERVER) -> FastMCP:
    """A fresh server called ``name`` (each call builds a new one, as each class-mode worker needs)."""
    return server_factory(name)()
