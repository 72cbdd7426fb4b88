"""The user's own, trusted MCP server of lesson 12: files in one folder the lesson creates, read and deleted.

It is what an attacker wants to reach through the model: ``read_file`` gives the model file contents (a fake
SSH key among them), ``delete_file`` is a sensitive tool (``destructiveHint: true``). Nothing here is
malicious; the attacks come from :mod:`mcp_teach.servers.untrusted`. Paths stay inside the folder. An unknown
tool is JSON-RPC ``-32602`` (:class:`~mcp_teach.servers.explained_errors.ExplainingFastMCP`; server/tools, Error
Handling), not plain FastMCP's ``isError`` result.
"""

from __future__ import annotations

from pathlib import Path

import mcp_types
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

from mcp_teach.servers.explained_errors import ExplainingFastMCP

SERVER_NAME = "mcp-teach-workspace"
SERVER_VERSION = "1.0.0"
#: The fake secret, obviously fake, and where it lives in the folder (an SSH key's usual name).
FAKE_SECRET = "FAKE-SSH-KEY-for-lesson-12 (not a real key: the lesson wrote it)"
SECRET_NAME = ".ssh/id_rsa"
NOTES_NAME = "notes.txt"
NOTES_TEXT = "Shopping: milk, eggs, MCP stickers."


def make_workspace(folder: Path) -> Path:
    """Fill ``folder`` (a temporary folder of the lesson, never the user's home) with the fake key and a note."""
    (folder / SECRET_NAME).parent.mkdir(parents=True, exist_ok=True)
    (folder / SECRET_NAME).write_text(FAKE_SECRET, encoding="utf-8")
    (folder / NOTES_NAME).write_text(NOTES_TEXT, encoding="utf-8")
    return folder


def _inside(folder: Path, path: str) -> Path:
    """``path`` (relative to the folder) as a file inside it; a tool error naming the rule otherwise."""
    resolved = (folder / path).resolve()
    if not resolved.is_relative_to(folder.resolve()):
        raise ToolError(f"{path!r} is outside the workspace: give a path relative to it, such as {NOTES_NAME!r}.")
    if not resolved.is_file():
        raise ToolError(f"There is no file {path!r} in the workspace.")
    return resolved


def build_workspace_server(folder: Path) -> FastMCP:
    """A fresh workspace server over ``folder`` (fill it first with :func:`make_workspace`)."""
    server = ExplainingFastMCP(SERVER_NAME, version=SERVER_VERSION)

    def read_file(path: str) -> str:
        """Read a text file of the workspace."""
        return _inside(folder, path).read_text(encoding="utf-8")

    def delete_file(path: str) -> str:
        """Delete a file of the workspace."""
        _inside(folder, path).unlink()
        return f"Deleted {path}."

    server.tool(read_file, annotations=mcp_types.ToolAnnotations(read_only_hint=True))
    server.tool(delete_file, annotations=mcp_types.ToolAnnotations(destructive_hint=True, read_only_hint=False))
    return server
