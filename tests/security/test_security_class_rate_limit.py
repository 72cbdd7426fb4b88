"""Attacks on a class server's shared rate limit, over real HTTP on 127.0.0.1 against ``mcp-teach serve``.

The notes server counts calls in one SQLite file that all its worker processes share. Another process that held
that file's write lock made every ``tools/call`` wait 5 s for it, on the event loop, and then fail with -32603;
an unrelated ``tools/list`` waited as long. A worker that first opened the file while it was locked took it for a
damaged file and started a new, empty one: every count so far forgotten.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import httpx2
import pytest
from fastmcp.exceptions import ToolError
from support import HANG_TIMEOUT

from mcp_teach.servers.rate_limits import FILE_NAME, SharedSlidingWindow
from mcp_teach.servers.student_tokens import student_token
from mcp_teach.wire.modern_post import modern_post

SECRET = "class-secret-Lw4Pn7Xc2Hd9"  # made up for these tests
NOTES = [
    str(Path(sys.executable).with_name("mcp-teach")),
    *("serve", "--server", "notes", "--transport", "streamable-http", "--port", "0"),
]
#: Another process of the server's user that takes the rate limit's write lock and keeps it until stdin closes.
HOLD_THE_LOCK = """
import sqlite3, sys
database = sqlite3.connect(sys.argv[1], isolation_level=None)
database.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
"""


async def _post(http: httpx2.AsyncClient, url: str, token: str, method: str, params: dict) -> tuple[float, str]:
    """How long a 2026-07-28 request took, and its answer."""
    post = modern_post(method, params)
    started = time.monotonic()
    response = await http.post(url, content=post.json(), headers={**post.headers, "Authorization": f"Bearer {token}"})
    return time.monotonic() - started, response.text


def test_a_held_rate_limit_lock_neither_stalls_the_server_nor_ends_in_an_internal_error(run, cli_server, tmp_path):
    server = cli_server(NOTES, MCP_AUTH_TOKEN=SECRET, MCP_TEACH_NOTES_DIR=str(tmp_path))
    ana, ben = student_token(SECRET, "ana"), student_token(SECRET, "ben")
    list_notes = {"name": "list_notes", "arguments": {}}

    async def scenario() -> tuple[tuple[float, str], tuple[float, str]]:
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
            await _post(http, server.url, ana, "tools/call", list_notes)  # the database exists from now on
            holder = subprocess.Popen(
                [sys.executable, "-c", HOLD_THE_LOCK, str(tmp_path / FILE_NAME)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                assert holder.stdout.readline() == "locked\n"
                call = asyncio.create_task(_post(http, server.url, ana, "tools/call", list_notes))
                await asyncio.sleep(0.05)  # the call is waiting for the lock now
                listed = await _post(http, server.url, ben, "tools/list", {})
                return await call, listed
            finally:
                holder.communicate(timeout=HANG_TIMEOUT)

    (call_took, call), (list_took, listed) = run(scenario)
    assert list_took < 1.0 and '"list_notes"' in listed  # was 4.8 s
    assert call_took < 1.0  # was 5.1 s
    assert '"isError":true' in call and "rate limit" in call and "another process" in call, call  # was -32603
    assert str(tmp_path) not in call


def test_a_worker_that_starts_while_the_lock_is_held_keeps_the_other_workers_counts(tmp_path):
    """A worker opening the database while another process locks it took the lock for damage and started anew."""
    database = tmp_path / FILE_NAME
    first = SharedSlidingWindow(2, datetime.now, database)
    assert [first.admit("ana"), first.admit("ana")] == [None, None]  # ana's two calls: her limit
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK.replace("IMMEDIATE", "EXCLUSIVE"), str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(ToolError, match="another process keeps its database"):
            SharedSlidingWindow(2, datetime.now, database).admit("ana")  # was: None, a new empty database
    finally:
        holder.communicate(timeout=HANG_TIMEOUT)
    assert SharedSlidingWindow(2, datetime.now, database).admit("ana") is not None  # still at her limit
