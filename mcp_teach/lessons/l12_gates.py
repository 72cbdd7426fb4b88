"""Lesson 12's four gates, one cell each: the notes server on loopback streamable HTTP, called as demo users.

::

    lab = NotesLab(calls_per_minute=3)                    # a fresh notes folder, a clock at 10:00
    await lab.without_token()                             # gate 1: HttpAnswer(status=401, ...)
    await lab.tools("dave")                               # gate 2: ['list_notes', 'read_note']
    step = await lab.call("alice", "read_note", note_id="bob-plan")   # gate 4: refused, says why
    lab.clock.set("23:00"); await lab.call("bob", "save_note", title="late", content="...")  # gate 3

Every step serves the same server object (same notes, same rate-limit counts, same clock) on a free loopback
port for its own connection, so no server outlives a cell. What a step returns prints without ports, times,
session ids or tokens; ``step.capture`` holds the step's JSON-RPC messages and HTTP exchanges (credentials
redacted by :mod:`mcp_teach.wire.redact`) for ``show(...)``. The demo tokens are never printed: a step names
the user.
"""

from __future__ import annotations

import contextlib
import logging
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from fastmcp.utilities.logging import temporary_log_level

from mcp_teach.client import teaching_client
from mcp_teach.lessons.scratch import scratch_folder
from mcp_teach.servers.gates import DenialStyle, ManualClock
from mcp_teach.servers.notes import DEMO_USERS, build_notes_server
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture
from mcp_teach.wire.modern_post import modern_post

#: Demo user name -> their (public, fake) token; the lesson names users, never tokens.
TOKENS: dict[str, str] = {user.name: token for token, user in DEMO_USERS.items()}
#: A token no user has, for gate 1's second refusal.
UNKNOWN_TOKEN = "demo-mallory-token-not-a-secret"
#: Answers are wrapped to this many characters when printed.
WIDTH = 116


@dataclass(frozen=True)
class Step:
    """One ``tools/call`` as a user, and what came back; ``capture`` holds the whole connection."""

    user: str
    tool: str
    arguments: dict[str, Any]
    is_error: bool
    text: str
    capture: Capture

    def __str__(self) -> str:
        """The call, then the answer wrapped to fit a notebook's width."""
        arguments = ", ".join(f"{name}={value!r}" for name, value in self.arguments.items())
        text = "\n".join(textwrap.fill(line, WIDTH) if line else line for line in self.text.splitlines())
        return f"{self.user} -> {self.tool}({arguments})  isError: {str(self.is_error).lower()}\n{text}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


@dataclass(frozen=True)
class HttpAnswer:
    """What the transport answered an HTTP request before any JSON-RPC was read."""

    status: int
    www_authenticate: str | None
    body: str


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """No log lines in a cell: fastmcp's INFO lines (a refused token) and the mcp client's warning when a call
    names a tool its ``tools/list`` did not show (gate 2 hid it: the very thing the cell shows)."""
    client_logger = logging.getLogger("client")  # mcp.client.session's logger
    level = client_logger.level
    client_logger.setLevel(logging.ERROR)
    try:
        with temporary_log_level("WARNING"):
            yield
    finally:
        client_logger.setLevel(level)


def _user_token(user: str) -> str:
    if user not in TOKENS:
        raise ValueError(f"unknown demo user {user!r}: choose one of {', '.join(TOKENS)}")
    return TOKENS[user]


class NotesLab:
    """The notes server of lesson 12 with the demo users, a fresh folder and a clock the lesson moves.

    ``denials`` ``"tool-error"`` (``isError: true``, the spec's) or ``"text"`` (``isError: false``, plain text);
    ``calls_per_minute`` small, so the rate limit shows in a few calls.
    """

    def __init__(
        self, *, denials: DenialStyle = "tool-error", calls_per_minute: int = 5, folder: Path | None = None
    ) -> None:
        self.clock = ManualClock()
        self.folder = folder or scratch_folder("notes")
        limits = {"denials": denials, "calls_per_minute": calls_per_minute}
        self.server = build_notes_server(users=DEMO_USERS, notes_dir=self.folder, clock=self.clock, **limits)

    async def tools(self, user: str) -> list[str]:
        """Gate 2: the tool names ``tools/list`` answers ``user``."""
        with quiet_logs():
            async with serve_http(server=self.server) as url, teaching_client(url, auth=_user_token(user)) as client:
                return [tool.name for tool in await client.list_tools()]

    async def call(self, user: str, tool: str, **arguments: Any) -> Step:
        """List the tools, then call ``tool`` as ``user`` over streamable HTTP, captured: a refusal is a result."""
        with quiet_logs():
            async with serve_http(server=self.server) as url:
                capture = CaptureTransport(url)
                async with teaching_client(capture, auth=_user_token(user)) as client:
                    await client.list_tools()  # as a host does first; the call is then checked against it
                    result = await client.call_tool_mcp(tool, arguments)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        return Step(user, tool, arguments, result.is_error, text, capture.capture)

    async def without_token(self, token: str | None = None) -> HttpAnswer:
        """Gate 1: POST ``tools/list`` with no token (or a ``token`` no user has): 401 before any JSON-RPC runs."""
        post = modern_post("tools/list").with_headers({"Authorization": None if token is None else f"Bearer {token}"})
        with quiet_logs():
            async with serve_http(server=self.server) as url, httpx2.AsyncClient() as http:
                response = await http.post(url, content=post.json(), headers=post.headers)
        return HttpAnswer(response.status_code, response.headers.get("www-authenticate"), response.text)

    def files(self) -> list[str]:
        """The names in the notes folder, to show that nothing else was written; the server's own file (its
        rate-limit counts) starts with ``.``, which no note id may, and is left out."""
        return sorted(path.name for path in self.folder.iterdir() if not path.name.startswith("."))
