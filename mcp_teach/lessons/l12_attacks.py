"""Lesson 12's plumbing for the attacks: a host with two servers in memory, the offline model, a backup service.

The lesson's cells ask the question, print the host's decisions and show what each server received; what they
need is here: :func:`attack_host` connects the user's ``workspace`` server and an ``untrusted`` one, each behind
its own ``CaptureTransport`` (``host.captures[name]``), into one :class:`~mcp_teach.llm.host_guard.Host`;
:func:`offline_model` is the naive teaching model, which obeys what the attacks plant; :func:`backup_service`
is a plain HTTP service on loopback that records the ``Authorization`` header of each request (token
passthrough).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.llm.host_guard import Guard, Host
from mcp_teach.servers.untrusted import build_untrusted_server
from mcp_teach.servers.workspace import build_workspace_server, make_workspace
from mcp_teach.transports.in_process import serve_asgi
from mcp_teach.transports.sockets import server_url
from mcp_teach.wire.capture import CaptureTransport

if TYPE_CHECKING:
    import openai


def offline_model() -> tuple[openai.AsyncOpenAI, str]:
    """The offline teaching model through the real ``openai`` SDK, and its name: it falls for every attack.

    Imported here, not at the top: the SDK takes a second to import, which only the cells that ask need."""
    from mcp_teach.llm.provider import model_name, openai_client

    settings = Settings()  # no provider configured: the offline teaching model
    return openai_client(settings), model_name(settings)


@contextlib.asynccontextmanager
async def attack_host(folder: Path, guard: Guard | None = None, *, rug_pull: bool = False) -> AsyncIterator[Host]:
    """A host with a fresh ``workspace`` (in ``folder``: a fake SSH key and a note) and the ``untrusted`` server."""
    make_workspace(folder)
    workspace, untrusted = build_workspace_server(folder), build_untrusted_server(rug_pull=rug_pull)
    captures = {"workspace": CaptureTransport(workspace), "untrusted": CaptureTransport(untrusted)}
    async with contextlib.AsyncExitStack() as stack:
        host = Host({name: await stack.enter_async_context(teaching_client(c)) for name, c in captures.items()}, guard)
        host.captures = {name: c.capture for name, c in captures.items()}  # type: ignore[attr-defined]
        yield host


def files_in(folder: Path) -> list[str]:
    """The files left in ``folder``, relative and sorted (what an attack deleted is missing)."""
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


@dataclass
class BackupService:
    """Where :func:`backup_service` listens, and the ``Authorization`` header of each request it received."""

    url: str
    authorizations: list[str] = field(default_factory=list)


@contextlib.asynccontextmanager
async def backup_service() -> AsyncIterator[BackupService]:
    """A plain HTTP service on 127.0.0.1 (``POST /notes``) that keeps each request's ``Authorization`` in memory."""
    service = BackupService("")

    async def notes(request: Request) -> JSONResponse:
        service.authorizations.append(request.headers.get("authorization", ""))
        return JSONResponse({"stored": True})

    async with serve_asgi(Starlette(routes=[Route("/notes", notes, methods=["POST"])]), lifespan="off") as port:
        service.url = server_url("127.0.0.1", port, "/notes")
        yield service
