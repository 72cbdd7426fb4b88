"""Lesson 12: tool poisoning, a rug pull and a prompt injection, each run for real and then defended.

A host (:class:`~mcp_teach.llm.host_guard.Host`) holds two servers in memory, each behind its own
``CaptureTransport``: the user's ``workspace`` (:mod:`mcp_teach.servers.workspace`, a temporary folder with a fake
SSH key and a note) and an ``untrusted`` one (:mod:`mcp_teach.servers.untrusted`). The offline teaching model
answers through the real ``openai`` SDK and, being naive, obeys what the attacks plant
(:mod:`mcp_teach.llm.teaching_attacks`). Each function is one lesson step, one ``await`` in a cell::

    run = await tool_poisoning(folder)                              # the leak
    print(run.received)                                             # what the untrusted server got
    run = await tool_poisoning(folder, Guard(no_cross_server_data=True))   # refused, nothing sent

Everything a :class:`Run` prints is deterministic (no ports, times or ids); the folder is the caller's temporary
folder and never appears in what is printed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.llm.host_guard import Guard, Host, describe_tools
from mcp_teach.llm.loop import ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.servers.untrusted import build_untrusted_server
from mcp_teach.servers.workspace import build_workspace_server, make_workspace
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture

POISONING_QUESTION = "Add 2 and 3."
INJECTION_QUESTION = "Use get_fact for octopus."


@dataclass
class Run:
    """One question through the host: the answer, what each server received, what the host decided."""

    question: str
    answer: str
    #: Each server's capture (``workspace``, ``untrusted``): every message of the connection.
    captures: dict[str, Capture]
    decisions: list[str]
    #: The files left in the workspace afterwards.
    files: list[str] = field(default_factory=list)

    def calls(self, server: str) -> list[tuple[str, dict[str, Any]]]:
        """The ``tools/call`` requests ``server`` received, as (tool, arguments)."""
        return [(w.message["params"]["name"], w.message["params"].get("arguments", {}))
                for w in self.captures[server].requests("tools/call")]  # fmt: skip

    def tools_calls(self, server: str) -> Capture:
        """Only the ``tools/call`` requests ``server`` received and their answers, for ``show(...)``."""
        capture = self.captures[server]
        picked = [m for pair in capture.pairs() if pair[0].method == "tools/call" for m in pair if m is not None]
        return Capture.of(picked)

    @property
    def received(self) -> str:
        """One line per ``tools/call`` the untrusted server received: tool and arguments as JSON."""
        lines = [f"{name} {json.dumps(arguments, ensure_ascii=False)}" for name, arguments in self.calls("untrusted")]
        return "\n".join(lines) or "(the untrusted server received no tools/call)"

    def __str__(self) -> str:
        decisions = "\n".join(f"  host: {line}" for line in self.decisions)
        received = self.received.replace("\n", "\n  ")
        return f"Q: {self.question}\nA: {self.answer}\n{decisions}\nuntrusted server received:\n  {received}"


def _offline() -> tuple[openai.AsyncOpenAI, str]:
    settings = Settings()  # no provider: the offline teaching model, which falls for the attacks every time
    return openai_client(settings), model_name(settings)


@contextlib.asynccontextmanager
async def _host(folder: Path, guard: Guard | None, *, rug_pull: bool = False) -> AsyncIterator[Host]:
    make_workspace(folder)
    captures = {
        "workspace": CaptureTransport(build_workspace_server(folder)),
        "untrusted": CaptureTransport(build_untrusted_server(rug_pull=rug_pull)),
    }
    async with contextlib.AsyncExitStack() as stack:
        clients = {name: await stack.enter_async_context(teaching_client(c)) for name, c in captures.items()}
        host = Host(clients, guard)
        host.captures = {name: c.capture for name, c in captures.items()}  # type: ignore[attr-defined]
        yield host


async def _ask(host: Host, question: str, folder: Path, llm: Any = None, model: str | None = None) -> Run:
    if llm is None:
        llm, model = _offline()
    result = await ask(question, host, llm, model=model or "")  # type: ignore[arg-type]
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    return Run(question, result.answer, host.captures, list(host.decisions), files)  # type: ignore[attr-defined]


async def approval_view(folder: Path) -> str:
    """What a host should show before the user approves the servers: every definition in full, with its hash."""
    async with _host(folder, None) as host:
        parts = [describe_tools(await client.list_tools(), name) for name, client in host.clients.items()]
    return "\n".join(parts)


async def tool_poisoning(folder: Path, guard: Guard | None = None, question: str = POISONING_QUESTION) -> Run:
    """Ask a plain sum with the poisoned ``add`` listed: the model reads the fake key and sends it along."""
    async with _host(folder, guard) as host:
        return await _ask(host, question, folder)


async def rug_pull(folder: Path, guard: Guard | None = None) -> Run:
    """Two questions on one connection: ``add`` is harmless for the first, poisoned (``list_changed``) for the
    second. The :class:`Run` is the second question's; its decisions include both."""
    async with _host(folder, guard, rug_pull=True) as host:
        await _ask(host, "Add 1 and 1.", folder)
        return await _ask(host, POISONING_QUESTION, folder)


async def result_injection(folder: Path, guard: Guard | None = None, question: str = INJECTION_QUESTION) -> Run:
    """Ask for a fun fact: the result tells the model to delete the user's notes, and it does (see ``files``)."""
    async with _host(folder, guard) as host:
        return await _ask(host, question, folder)
