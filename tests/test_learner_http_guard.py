"""The guard a learner's own fastmcp server needs over HTTP (lessons 12 and 13), tested as a learner runs it.

fastmcp 4.2.3 serves ``mcp.run(transport="streamable-http", host="127.0.0.1")`` with no Host/Origin check at all
(``settings.http_host_origin_protection`` is ``False``, and it switches the mcp SDK's own check off): a
DNS-rebinding request (foreign ``Host`` and ``Origin``) gets 200 and the conformance suite's
``dns-rebinding-protection`` scenario fails. fastmcp's switch ``host_origin_protection=True`` checks ``Host`` first
and answers that request 421, where "If the `Origin` header is present and invalid, servers **MUST** respond with
HTTP 403 Forbidden" (2026-07-28, basic/transports/streamable-http, Security; 2025-11-25, basic/transports). The
suite accepts any 4xx, so it cannot tell; the direct test here does.

:data:`LEARNER_GUARD` is the code lesson 12 shows, read from its cell: the tests run it as it is.
"""

from __future__ import annotations

import functools
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import nbformat
import pytest
from fastmcp import FastMCP
from starlette.middleware import Middleware
from support import HANG_TIMEOUT, discover, initialize

from mcp_teach.course.conformance import quiet_server_logs, run_suite
from mcp_teach.transports.in_process import serve_asgi
from mcp_teach.transports.sockets import bind_socket

#: Where the guard is taught: lesson 12 writes it in a cell, and lesson 13 writes it again for the capstone.
SOLVED = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"
LESSON, CAPSTONE = SOLVED / "12_security.ipynb", SOLVED / "13_capstone.ipynb"


def _lesson_guard(lesson: Path = LESSON) -> str:
    """The code of the lesson's cell that defines ``LocalOnly``, exactly as a learner types it."""
    for cell in nbformat.read(lesson, as_version=4).cells:
        if cell.cell_type == "code" and "class LocalOnly" in cell.source:
            # Lesson 13 saves it into the learner's server.py: its first line, %%server_part NAME, is the magic.
            return cell.source.partition("\n")[2] if cell.source.startswith("%%server_part") else cell.source
    raise AssertionError(f"{lesson.name} has no cell defining LocalOnly: the guard the lesson teaches is gone")


#: The guard, exactly as the lesson shows it.
LEARNER_GUARD = _lesson_guard()


def test_the_capstone_writes_the_same_guard_as_lesson_12():
    """A learner who typed the guard in lesson 12 types the same lines in lesson 13: what is tested here is both."""
    assert _lesson_guard(CAPSTONE) == LEARNER_GUARD


#: How the learner serves it.
LEARNER_RUN = 'mcp.run(transport="streamable-http", host="127.0.0.1", port=PORT, middleware=[Middleware(LocalOnly)])'
JSON_OR_SSE = "application/json, text/event-stream"
REVISIONS = ("2025-11-25", "2026-07-28")


def learner_guard() -> type:
    """The ``LocalOnly`` class :data:`LEARNER_GUARD` defines."""
    namespace: dict[str, Any] = {}
    exec(compile(LEARNER_GUARD, "learner_guard", "exec"), namespace)
    return namespace["LocalOnly"]


def plain_server() -> FastMCP:
    """A learner's own server: plain fastmcp, one tool."""
    mcp = FastMCP("mine")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return mcp


def _request(revision: str) -> tuple[dict, dict[str, str]]:
    """The suite's first request at ``revision``, and its headers beyond Host and Origin."""
    if revision == "2026-07-28":
        return discover(revision), {"MCP-Protocol-Version": revision, "Mcp-Method": "server/discover"}
    return initialize(revision), {"MCP-Protocol-Version": revision}


def answers(url: str, revision: str) -> dict[str, int]:
    """Status of a good request, a foreign Origin, a DNS-rebinding request (both foreign), a foreign Host."""
    own = url.rsplit("/", 1)[0]
    body, extra = _request(revision)
    cases = {
        "good": {"Origin": own},
        "foreign Origin": {"Origin": "http://evil.example.com"},
        "rebinding": {"Host": "evil.example.com", "Origin": "http://evil.example.com"},
        "foreign Host": {"Host": "evil.example.com"},
    }
    with httpx2.Client(timeout=HANG_TIMEOUT) as http:
        return {
            name: http.post(url, json=body, headers={"Accept": JSON_OR_SSE, **extra, **headers}).status_code
            for name, headers in cases.items()
        }


async def _served_answers(**http_app: Any) -> dict[str, dict[str, int]]:
    app = plain_server().http_app(transport="streamable-http", **http_app)
    with quiet_server_logs():
        async with serve_asgi(app) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            return {revision: await anyio.to_thread.run_sync(answers, url, revision) for revision in REVISIONS}


def test_the_learners_guard_answers_origin_first_403_and_a_foreign_host_421(run):
    for found in run(functools.partial(_served_answers, middleware=[Middleware(learner_guard())])).values():
        assert found == {"good": 200, "foreign Origin": 403, "rebinding": 403, "foreign Host": 421}


def test_what_fastmcp_does_without_it(run):
    """The sentences of the lessons: no guard by default; fastmcp's own switch answers the rebinding request 421."""
    for found in run(_served_answers).values():
        assert found == {"good": 200, "foreign Origin": 200, "rebinding": 200, "foreign Host": 200}
    for found in run(functools.partial(_served_answers, host_origin_protection=True)).values():
        assert found == {"good": 200, "foreign Origin": 403, "rebinding": 421, "foreign Host": 421}


def test_the_learners_guard_passes_the_suites_dns_rebinding_scenario(run, node_folder):
    async def scenario() -> list[Any]:
        app = plain_server().http_app(transport="streamable-http", middleware=[Middleware(learner_guard())])
        with quiet_server_logs():
            async with serve_asgi(app) as port:
                url = f"http://127.0.0.1:{port}/mcp"
                return [
                    await run_suite(url, revision, ["dns-rebinding-protection"], node_folder=node_folder)
                    for revision in REVISIONS
                ]

    for report in run(scenario, timeout=600):
        assert report.passed, str(report)


def _free_port() -> int:
    with bind_socket() as sock:
        return sock.getsockname()[1]


def _wait_until_listening(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + HANG_TIMEOUT
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail("the learner's server did not start listening")


def test_the_learners_server_run_as_they_run_it(tmp_path):
    """``mcp.run(..., middleware=[Middleware(LocalOnly)])`` in a process of its own, as a learner starts it."""
    port = _free_port()
    script = tmp_path / "my_server.py"
    script.write_text(
        textwrap.dedent(LEARNER_GUARD)
        + "\nfrom fastmcp import FastMCP\n\nmcp = FastMCP('mine')\n\n\n@mcp.tool\ndef add(a: int, b: int) -> int:\n"
        + "    return a + b\n\n\n"
        + LEARNER_RUN.replace("PORT", str(port)).replace("middleware=", "show_banner=False, middleware=")
        + "\n"
    )
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_until_listening(port, process)
        found = answers(f"http://127.0.0.1:{port}/mcp", "2026-07-28")
    finally:
        process.terminate()
        process.communicate(timeout=HANG_TIMEOUT)
    assert found == {"good": 200, "foreign Origin": 403, "rebinding": 403, "foreign Host": 421}
