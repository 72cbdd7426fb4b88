"""What one user of a notes folder could do to the others: fill it, slow every listing, wait everyone's saves out,
or pass for someone else by their name.

The folder is private to the user who runs the server (0700), so another local user cannot even take its lock;
each user keeps at most 100 notes and 1,000,000 bytes of them; a listing reads a note's file again only when it
has changed; and student names that already mean someone else on the folder (the local user, the demo users,
the instructor, the roles) are refused by ``mcp-teach class-tokens`` and by every class server.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import hmac
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx2
import pytest
from fastmcp.client.transports import StdioTransport
from support import HANG_TIMEOUT

from mcp_teach.cli import main
from mcp_teach.client import teaching_client
from mcp_teach.lessons.l12_gates import TOKENS, NotesLab, quiet_logs
from mcp_teach.servers import notes_store
from mcp_teach.servers.notes import DEMO_USERS, LOCAL_USER, ROLES, build_notes_server
from mcp_teach.servers.notes_store import MAX_CONTENT_LENGTH, Note, NoteStore
from mcp_teach.servers.student_tokens import RESERVED_NAMES, StudentTokens
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.modern_post import modern_post

NOTES_PER_USER, BYTES_PER_USER = 100, 1_000_000
SECRET = "class-secret-Hq2Vw7Lp4Zx9"  # made up for these tests
#: A Python every user may run (the test's own may lie in a folder only its user may enter).
SYSTEM_PYTHON = "/usr/bin/python3"
#: Another local user: opens the folder and holds its lock until told to stop (run as ``nobody``).
OTHER_USER = """
import fcntl, os, sys
try:
    descriptor = os.open(sys.argv[1], os.O_RDONLY)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
except OSError as error:
    print("refused:", type(error).__name__, flush=True)
else:
    print("holding the lock", flush=True)
    sys.stdin.read()
"""


def call(run, lab: NotesLab, user: str, tool: str, **arguments):
    return run(functools.partial(lab.call, user, tool, **arguments))


def plant(folder: Path, owner: str, count: int, characters: int, prefix: str = "") -> None:
    """``count`` notes of ``owner`` written as the server writes them, as if saved earlier (quicker than saving)."""
    folder.mkdir(exist_ok=True)
    for n in range(count):
        note = Note(title=f"{prefix}{owner}-{n}", owner=owner, content="x" * characters)
        (folder / f"{note.title}.json").write_text(note.model_dump_json(indent=2), encoding="utf-8")


@pytest.fixture
def usual_umask():
    """The usual umask 022, under which a folder made with default permissions is readable by every user."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


# The folder is private ------------------------------------------------------------------------------------------


def test_a_new_notes_folder_is_private_and_an_existing_one_is_made_private(run, tmp_path, usual_umask):
    lab = NotesLab(folder=tmp_path / "new", calls_per_minute=100)
    assert not call(run, lab, "alice", "save_note", title="first", content="x").is_error
    assert stat.S_IMODE(lab.folder.stat().st_mode) == 0o700
    (tmp_path / "old").mkdir(mode=0o755)
    lab = NotesLab(folder=tmp_path / "old", calls_per_minute=100)
    assert call(run, lab, "alice", "list_notes").text.startswith("No notes that alice may read yet.")
    assert stat.S_IMODE(lab.folder.stat().st_mode) == 0o700


async def _save_over_stdio(folder: Path, cwd: Path, title: str) -> tuple[bool, str]:
    """``save_note`` as the local user of ``mcp-teach serve --server notes`` over stdio (a real subprocess)."""
    command = ["-m", "mcp_teach.serve", "--server", "notes", "--transport", "stdio"]
    environment = {"MCP_TEACH_NOTES_DIR": str(folder), "MCP_TEACH_WRITE_HOURS": "00:00-24:00"}
    transport = StdioTransport(sys.executable, command, env=environment, cwd=str(cwd), log_file=cwd / "server.log")
    async with teaching_client(transport) as client:
        result = await client.call_tool_mcp("save_note", {"title": title, "content": "x"})
    return result.is_error, result.content[0].text


def test_over_stdio_the_folder_is_made_private_and_the_local_user_has_a_quota_too(run, tmp_path, usual_umask):
    folder = tmp_path / "notes"
    folder.mkdir(mode=0o755)
    plant(folder, "local", NOTES_PER_USER, 10)
    is_error, text = run(_save_over_stdio, folder, tmp_path, "one more")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert is_error and text.startswith("The note 'one more' was not saved: local already keeps 100 notes")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or not Path(SYSTEM_PYTHON).exists(),
    reason="needs root to run as another user, and a Python that user may run",
)
def test_another_local_user_cannot_take_the_folders_lock_and_stall_the_saves(run, monkeypatch, usual_umask):
    monkeypatch.setattr(notes_store, "LOCK_SECONDS", 1.0)  # a stalled save gives up after 1 s instead of 10
    parent = Path(tempfile.mkdtemp())
    try:
        parent.chmod(0o755)  # as a home folder often is: every user may pass through
        lab = NotesLab(folder=parent / "notes", calls_per_minute=100)
        assert call(run, lab, "alice", "list_notes").text.startswith("No notes")  # the server made the folder
        other = subprocess.Popen(
            [SYSTEM_PYTHON, "-c", OTHER_USER, str(lab.folder)],
            user="nobody",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            took = other.stdout.readline().strip()
            saved = call(run, lab, "alice", "save_note", title="plan", content="mine")
        finally:
            other.communicate(timeout=HANG_TIMEOUT)
    finally:
        shutil.rmtree(parent)
    assert took == "refused: PermissionError"
    assert (saved.is_error, saved.text) == (False, "Saved note 'plan' (owner alice, 4 characters).")


# A quota for each user ------------------------------------------------------------------------------------------


def test_a_user_keeps_at_most_100_notes_and_is_told_how_to_make_room(run, tmp_path):
    lab = NotesLab(folder=tmp_path / "notes", calls_per_minute=100)
    plant(lab.folder, "alice", NOTES_PER_USER, 10)
    refused = call(run, lab, "alice", "save_note", title="one more", content="x")
    assert refused.is_error and refused.text == (
        "The note 'one more' was not saved: alice already keeps 100 notes, the most one user may keep. Delete a "
        "note you no longer need (delete_note; list_notes shows yours), or save over one of them."
    )
    assert not call(run, lab, "alice", "save_note", title="alice-7", content="saved over").is_error
    assert not call(run, lab, "bob", "save_note", title="bob-1", content="his own quota").is_error
    assert not call(run, lab, "alice", "delete_note", note_id="alice-0").is_error
    assert not call(run, lab, "alice", "save_note", title="one more", content="x").is_error
    assert len(lab.files()) == NOTES_PER_USER + 1


def test_a_user_keeps_at_most_a_million_bytes_of_notes(run, tmp_path):
    lab = NotesLab(folder=tmp_path / "notes", calls_per_minute=100)
    plant(lab.folder, "alice", 49, MAX_CONTENT_LENGTH)  # 49 full notes: 983,028 bytes
    refused = call(run, lab, "alice", "save_note", title="big", content="y" * MAX_CONTENT_LENGTH)
    assert refused.is_error and refused.text == (
        "The note 'big' was not saved: alice's notes would take 1,003,085 bytes, more than the 1,000,000 one user "
        "may keep. Delete notes you no longer need (delete_note; list_notes shows yours), or save a shorter note."
    )
    assert not call(run, lab, "alice", "save_note", title="small", content="y" * 1000).is_error
    assert lab.files() == sorted([*(f"alice-{n}.json" for n in range(49)), "small.json"])


# Listing stays fast ---------------------------------------------------------------------------------------------


async def _listings(lab: NotesLab, count: int) -> list[str]:
    """``count`` list_notes by carol (admin: every note) at once over real HTTP."""
    with quiet_logs():
        async with serve_http(server=lab.server) as url, teaching_client(url, auth=TOKENS["carol"]) as client:
            results = await asyncio.gather(*(client.call_tool_mcp("list_notes", {}) for _ in range(count)))
    return [result.content[0].text for result in results]


def test_listing_reads_a_note_again_only_when_it_has_changed(run, tmp_path, monkeypatch):
    """A class's folder: 3 users at their quota of full notes. 10 listings at once parse nothing already seen."""
    lab = NotesLab(folder=tmp_path / "notes", calls_per_minute=1000)
    for owner in ("alice", "bob", "dave"):
        plant(lab.folder, owner, 49, MAX_CONTENT_LENGTH)
    assert run(_listings, lab, 1)[0].startswith("Notes carol may read (147):")
    parse, parsed = notes_store._parse, []
    monkeypatch.setattr(notes_store, "_parse", lambda note_id, data: parsed.append(note_id) or parse(note_id, data))
    listings = run(_listings, lab, 10)
    assert parsed == [] and all(listing.startswith("Notes carol may read (147):") for listing in listings)
    assert not call(run, lab, "bob", "save_note", title="bob-3", content="changed").is_error
    assert call(run, lab, "carol", "list_notes").text.startswith("Notes carol may read (147):")
    assert parsed.count("bob-3") >= 1 and set(parsed) == {"bob-3"}


# Names that mean someone else -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["local", "admin", "carol", "instructor"])
def test_class_tokens_refuses_a_name_that_means_someone_else(capsys, monkeypatch, name):
    monkeypatch.setenv("MCP_AUTH_TOKEN", SECRET)
    assert main(["class-tokens", "ana", name]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and SECRET not in captured.err
    assert f"the student name {name!r} already means " in captured.err and "choose another" in captured.err


def _token_made_by_hand(name: str) -> str:
    """What ``mcp-teach class-tokens`` printed for ``name`` before such names were refused."""
    mac = hmac.new(SECRET.encode(), b"mcp-teach student token v1\x00" + name.encode(), hashlib.sha256).digest()
    return f"{name}.{base64.urlsafe_b64encode(mac).decode()[:32]}"


async def _read_as(url: str, token: str, note_id: str) -> tuple[int, str]:
    post = modern_post("tools/call", {"name": "read_note", "arguments": {"note_id": note_id}})
    headers = {**post.headers, "Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
        response = await http.post(url, content=post.json(), headers=headers)
    return response.status_code, response.text


@pytest.mark.parametrize("name", ["local", "carol"])
def test_a_student_token_for_a_name_that_means_someone_else_gets_401(run, tmp_path, name):
    """The local user's notes (a stdio server on the same folder), the demo admin's: not a student's by name."""
    NoteStore(tmp_path).save("lab-log", "LOCAL-SECRET", owner=name)
    server = build_notes_server(auth=StudentTokens(SECRET), notes_dir=tmp_path)

    async def attack() -> tuple[int, str]:
        with quiet_logs():
            async with serve_http(server=server) as url:
                return await _read_as(url, _token_made_by_hand(name), "lab-log")

    status, body = run(attack)
    assert status == 401 and "LOCAL-SECRET" not in body
    assert StudentTokens(SECRET).identify(_token_made_by_hand("ana")) == ("ana", "student")


def test_every_name_the_notes_server_gives_someone_is_reserved():
    names = {user.name for user in DEMO_USERS.values()} | {LOCAL_USER.name, *ROLES}
    assert names <= RESERVED_NAMES
