"""Attacks on a shared class server, each over real HTTP on 127.0.0.1 against a server started from the CLI.

One shared class token made the whole class one user: a student could read and delete another's notes, end
another's session, and use up everyone's rate limit; with ``--workers 2`` every limit doubled. A loop of
``initialize`` could fill the SDK's session table for everyone; a server on every interface ran without a
token; a body was parsed before the token was checked; the stdio log lay in the shared temporary folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx2
import pytest
from support import HANG_TIMEOUT

from mcp_teach.cli import main
from mcp_teach.servers.notes import DEMO_USERS, build_notes_server
from mcp_teach.servers.student_tokens import INSTRUCTOR, StudentTokens, student_token
from mcp_teach.transports.in_process import STDIO_LOG, bounded_log, serve_http
from mcp_teach.transports.session_quota import SESSIONS_PER_PERSON
from mcp_teach.wire.modern_post import modern_post

SECRET = "class-secret-Hq2Vw7Lp4Zx9"  # made up for these tests
MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
NOTES = [MCP_TEACH, "serve", "--server", "notes", "--transport", "streamable-http", "--port", "0"]
CALCULATOR = [MCP_TEACH, "serve", "--transport", "streamable-http", "--port", "0"]
#: Write tools at any hour: these tests must not depend on when they run.
ANY_TIME = {"MCP_TEACH_WRITE_HOURS": "00:00-24:00"}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _call(url: str, token: str, tool: str, **arguments: object) -> dict:
    """One 2026-07-28 ``tools/call`` on a fresh connection (so a multi-worker server may hand it to any worker)."""
    post = modern_post("tools/call", {"name": tool, "arguments": arguments})
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, content=post.json(), headers={**post.headers, **_bearer(token)})
    assert response.status_code == 200, response.text
    return _result(response.text)


def _result(text: str) -> dict:
    """The JSON-RPC result in a JSON or an SSE response body."""
    lines = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")] or [text]
    return json.loads(lines[-1])["result"]


def _text(result: dict) -> str:
    return "\n".join(block.get("text", "") for block in result["content"])


# Students are told apart ----------------------------------------------------------------------------------------


def test_two_students_on_one_class_server_cannot_touch_each_others_notes(run, cli_server, tmp_path):
    server = cli_server(NOTES, MCP_AUTH_TOKEN=SECRET, MCP_TEACH_NOTES_DIR=str(tmp_path), **ANY_TIME)
    ana, ben = student_token(SECRET, "ana"), student_token(SECRET, "ben")

    async def scenario() -> list[dict]:
        return [
            await _call(server.url, ana, "save_note", title="ana diary", content="private"),
            await _call(server.url, ben, "list_notes"),
            await _call(server.url, ben, "read_note", note_id="ana diary"),
            await _call(server.url, ben, "delete_note", note_id="ana diary"),
            await _call(server.url, ben, "save_note", title="ana diary", content="ben was here"),
            await _call(server.url, ana, "read_note", note_id="ana diary"),
        ]

    saved, listed, read, deleted, overwritten, own = run(scenario)
    assert _text(saved) == "Saved note 'ana diary' (owner ana, 7 characters)."
    assert "ana diary" not in _text(listed)
    for refused in (read, deleted, overwritten):
        assert refused["isError"] and "student ben may only" in _text(refused) and "belongs to ana" in _text(refused)
    assert _text(own).endswith("private")
    assert SECRET not in "".join(server.stderr_lines)


def test_a_student_can_neither_use_nor_end_another_students_session(run, cli_server):
    server = cli_server(CALCULATOR, MCP_AUTH_TOKEN=SECRET)
    ana, ben = _bearer(student_token(SECRET, "ana")), _bearer(student_token(SECRET, "ben"))
    tools_list = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

    async def scenario() -> tuple[int, int, int, int]:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(server.url, json=INITIALIZE, headers={**ACCEPT, **ana})
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            ridden = await http.post(server.url, json=tools_list, headers={**ACCEPT, **ben, **session})
            ended = await http.delete(server.url, headers={**ben, **session})
            still = await http.post(server.url, json=tools_list, headers={**ACCEPT, **ana, **session})
            await http.delete(server.url, headers={**ana, **session})
            return opened.status_code, ridden.status_code, ended.status_code, still.status_code

    assert run(scenario) == (200, 404, 404, 200)


def test_each_student_has_their_own_rate_limit_across_workers(run, cli_server, tmp_path):
    argv = [*NOTES, "--workers", "2", "--stateless"]
    server = cli_server(argv, MCP_AUTH_TOKEN=SECRET, MCP_TEACH_NOTES_DIR=str(tmp_path), **ANY_TIME)
    server.matches(re.compile(r"worker process \d+ ready"), count=2)  # a busy machine starts them slowly
    ana, ben = student_token(SECRET, "ana"), student_token(SECRET, "ben")

    async def scenario() -> tuple[list[dict], dict]:
        calls = [_call(server.url, ana, "list_notes") for _ in range(45)]
        answers = []
        for start in range(0, len(calls), 15):  # bounded: 15 connections at a time
            answers += await asyncio.gather(*calls[start : start + 15])
        return answers, await _call(server.url, ben, "list_notes")

    answers, bens = run(scenario)
    refused = [answer for answer in answers if answer["isError"]]
    assert (len(answers) - len(refused), len(refused)) == (30, 15)  # one window for both worker processes
    assert all("Denied by gate 3 (rate limit): student ana made 30" in _text(answer) for answer in refused)
    assert not bens["isError"]  # ana's calls used up ana's limit only


COUNT_CALLS = """
import sys
from datetime import datetime
from pathlib import Path
from mcp_teach.servers.rate_limits import SharedSlidingWindow
window = SharedSlidingWindow(30, datetime.now, Path(sys.argv[1]))
print(sum(window.admit("ana") is None for _ in range(25)))
"""


def test_two_processes_share_one_rate_limit(tmp_path):
    """What the workers of one server do, without the kernel's choice of worker: two processes, one window."""
    database = tmp_path / ".rate-limits.sqlite3"
    workers = [
        subprocess.Popen([sys.executable, "-c", COUNT_CALLS, str(database)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    admitted = [int(worker.communicate(timeout=HANG_TIMEOUT)[0]) for worker in workers]
    assert sum(admitted) == 30, admitted  # 50 asked for; windows kept per process would allow all 50
    assert stat.S_IMODE(database.stat().st_mode) == 0o600


def test_a_loop_of_initialize_cannot_lock_other_students_out(run, cli_server):
    server = cli_server(CALCULATOR, MCP_AUTH_TOKEN=SECRET)
    ana, ben = _bearer(student_token(SECRET, "ana")), _bearer(student_token(SECRET, "ben"))

    async def scenario() -> tuple[list[int], int, int, str]:
        async with httpx2.AsyncClient(timeout=30) as http:
            answers = [await http.post(server.url, json=INITIALIZE, headers={**ACCEPT, **ana}) for _ in range(40)]
            bens = await http.post(server.url, json=INITIALIZE, headers={**ACCEPT, **ben})
            first = answers[0].headers["mcp-session-id"]
            await http.delete(server.url, headers={**ana, "Mcp-Session-Id": first})
            again = await http.post(server.url, json=INITIALIZE, headers={**ACCEPT, **ana})
            return [a.status_code for a in answers], bens.status_code, again.status_code, answers[-1].text

    statuses, bens, after_delete, refusal = run(scenario)
    assert statuses == [200] * SESSIONS_PER_PERSON + [429] * (40 - SESSIONS_PER_PERSON)
    assert (bens, after_delete) == (200, 200)
    assert "16 open sessions on this server" in refusal and "DELETE" in refusal


def test_the_instructor_holds_the_class_secret_and_no_student_can_forge_it():
    tokens = StudentTokens(SECRET)
    assert tokens.identify(SECRET) == (INSTRUCTOR, "admin")
    assert tokens.identify(student_token(SECRET, "ana")) == ("ana", "student")
    mac = student_token(SECRET, "ana").partition(".")[2]
    forged = [f"ben.{mac}", f"{INSTRUCTOR}.{mac}", student_token("another-secret-0000", "ana"), "ana.", mac]
    assert [tokens.identify(token) for token in forged] == [None] * len(forged)
    with pytest.raises(ValueError, match="class secret's own name"):
        student_token(SECRET, INSTRUCTOR)


def test_class_tokens_prints_one_token_per_student(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.setenv("MCP_AUTH_TOKEN", SECRET)
    roster = tmp_path / "roster.txt"
    roster.write_text("# week 1\ncara\n\nana\n")
    assert main(["class-tokens", "ana", "ben", "--roster", str(roster)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"{name}\t{student_token(SECRET, name)}" for name in ("ana", "ben", "cara")]
    assert main(["class-tokens", "Ana"]) == 2 and "lower-case letters" in capsys.readouterr().err
    monkeypatch.delenv("MCP_AUTH_TOKEN")
    assert main(["class-tokens", "ana"]) == 2 and "set MCP_AUTH_TOKEN to the class secret" in capsys.readouterr().err


# Weak spots -----------------------------------------------------------------------------------------------------


def test_a_server_on_every_interface_refuses_to_start_without_a_class_secret(cli_server, tmp_path):
    server = cli_server([*NOTES, "--host", "0.0.0.0"], MCP_TEACH_NOTES_DIR=str(tmp_path))
    server.process.wait(HANG_TIMEOUT)  # it ends by itself, before it listens
    code, stdout, stderr = server.stop()
    assert (code, stdout) == (2, "")
    assert "--host 0.0.0.0 makes the server reachable from other machines" in stderr
    assert "MCP_AUTH_TOKEN" in stderr and "mcp-teach class-tokens" in stderr and "127.0.0.1" in stderr


def test_a_request_without_a_token_gets_401_before_its_body_is_read(run, tmp_path):
    async def scenario() -> list[tuple[int, str]]:
        server = build_notes_server(users=DEMO_USERS, notes_dir=tmp_path)
        async with serve_http(server=server) as url, httpx2.AsyncClient() as http:
            answers = [await http.post(url, content=body, headers=ACCEPT) for body in (b"{}", b"\xff not json")]
        return [(answer.status_code, answer.headers.get("www-authenticate", "")) for answer in answers]

    assert [status for status, _ in run(scenario)] == [401, 401]


def test_the_stdio_log_is_private_and_never_written_through_a_link(tmp_path):
    assert not STDIO_LOG.is_relative_to(tempfile.gettempdir())
    log = tmp_path / "logs" / "server.log"
    assert bounded_log(log) == log
    assert stat.S_IMODE(log.stat().st_mode) == 0o600 and stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    target = tmp_path / "victim.txt"
    target.write_text("untouched")
    planted = tmp_path / "logs" / "planted.log"
    os.symlink(target, planted)
    with pytest.raises(OSError, match="cannot be opened as a regular file"):
        bounded_log(planted)
    assert target.read_text() == "untouched"
