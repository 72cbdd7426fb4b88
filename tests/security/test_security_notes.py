"""The notes store under attack: racing saves and deletes, planted files, and what an interrupted write leaves.

Ownership is decided in the store, under one lock from the check to the rename, so neither a race past gate 4 (200
concurrent saves to one new title over real HTTP) nor a second process sharing the folder writes into another
user's note. A hard link, a FIFO or a file that is no note is refused and skipped, never read, followed or waited
on; no answer names an absolute path or carries parser or errno text; leftovers of a killed write are removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l12_gates import TOKENS, NotesLab, quiet_logs
from mcp_teach.servers import notes_store
from mcp_teach.servers.notes_store import NoteDamaged, NoteError, NoteOwned, NoteStore
from mcp_teach.transports.in_process import serve_http

RACERS = ("alice", "bob")
#: Words only a parser, a traceback or the OS would put in an answer.
LEAKS = re.compile(r"Errno|Expecting|JSONDecodeError|KeyError|codec|Traceback|line \d+ column")
#: A process of its own, saving to the same titles as another one in the same folder, printing what happened.
HAMMER = """
import json, pathlib, sys, time
from mcp_teach.servers.notes_store import NoteOwned, NoteStore
folder, user, go, rounds, titles = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
store = NoteStore(folder)
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
for i in range(rounds):
    for title in titles:
        try:
            note = store.save(title, f"{user} wrote #{i}", owner=user, may_change=lambda owner: owner == user)
            print(json.dumps([title, user, note.owner]))
        except NoteOwned as refusal:
            print(json.dumps([title, user, str(refusal)]))
"""


@pytest.fixture
def place(tmp_path: Path):
    """``tmp_path`` emptied afterwards: no note, link, FIFO or leftover outlives the test."""
    yield tmp_path
    for path in tmp_path.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def call(run, lab: NotesLab, user: str, tool: str, **arguments):
    return run(functools.partial(lab.call, user, tool, **arguments))


async def _calls(lab: NotesLab, calls: list[tuple[str, str, dict]]) -> list[tuple[bool, str]]:
    """All ``(user, tool, arguments)`` at once over one real HTTP server, one client per user: (isError, text)."""
    users = sorted({user for user, _, _ in calls})
    with quiet_logs():
        async with serve_http(server=lab.server) as url, contextlib.AsyncExitStack() as stack:
            clients = {user: await stack.enter_async_context(teaching_client(url, auth=TOKENS[user])) for user in users}
            for client in clients.values():
                await client.list_tools()

            async def one(user: str, tool: str, arguments: dict) -> tuple[bool, str]:
                result = await clients[user].call_tool_mcp(tool, arguments)
                return result.is_error, "\n".join(getattr(block, "text", "") for block in result.content)

            return await asyncio.gather(*(one(*c) for c in calls))


def _stored(folder: Path, note_id: str) -> dict:
    return json.loads((folder / f"{note_id}.json").read_text(encoding="utf-8"))


# Ownership is decided once, atomically ------------------------------------------------------------------------


@pytest.mark.parametrize("first_write_seconds", [0, 0.3], ids=["as-is", "slow-disk"])
def test_200_concurrent_saves_to_one_new_title_never_cross_owners(run, place, monkeypatch, first_write_seconds):
    """On a slow disk (the first write takes 0.3 s) every save arriving meanwhile finds no note at gate 4."""
    write, started = notes_store.write_atomically, threading.Event()

    def slow_first_write(path: Path, data: bytes) -> None:
        if not started.is_set():
            started.set()
            time.sleep(first_write_seconds)
        write(path, data)

    monkeypatch.setattr(notes_store, "write_atomically", slow_first_write)
    lab = NotesLab(folder=place / "notes", calls_per_minute=10_000)
    writers = [RACERS[i % 2] for i in range(200)]
    saves = [(user, "save_note", {"title": "Race", "content": f"{user} wrote #{i}"}) for i, user in enumerate(writers)]
    answers = list(zip(writers, run(_calls, lab, saves), strict=True))
    owner = _stored(lab.folder, "race")["owner"]
    crossed = [text for user, (is_error, text) in answers if not is_error and user != owner]
    assert crossed == [], f"{len(crossed)} of 200 saves landed in {owner}'s note: {crossed[:3]}"
    assert _stored(lab.folder, "race")["content"].startswith(f"{owner} wrote #")
    assert {found for _, (_, text) in answers for found in re.findall(r"\(owner (\w+)", text)} == {owner}
    refusals = [(is_error, text) for user, (is_error, text) in answers if user != owner]
    assert len(refusals) == 100 and all(is_error and f"belongs to {owner}" in text for is_error, text in refusals)
    by_the_store = [text for _, text in refusals if not text.startswith("Denied by gate 4")]
    assert by_the_store or not first_write_seconds, "no save raced past gate 4: the race was not exercised"
    assert all(text.startswith("The note 'race' belongs to") and "was not saved" in text for text in by_the_store)


def test_two_processes_on_one_folder_never_write_into_each_others_notes(place):
    folder, go = place / "notes", place / "go"
    titles = [f"shared-{n}" for n in range(20)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", HAMMER, str(folder), user, str(go), "10", *titles],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for user in RACERS
    ]
    try:
        assert [worker.stdout.readline() for worker in workers] == ["ready\n", "ready\n"]
        go.touch()
        outputs = [worker.communicate(timeout=HANG_TIMEOUT) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()
    assert [worker.returncode for worker in workers] == [0, 0], [err for _, err in outputs]
    events = [json.loads(line) for out, _ in outputs for line in out.splitlines()]
    assert len(events) == 2 * 10 * len(titles)
    for title in titles:
        owner = _stored(folder, title)["owner"]
        for _, user, answer in (event for event in events if event[0] == title):
            if user == owner:
                assert answer == owner  # every save by the owner succeeded and said so
            else:
                assert answer.startswith(f"The note {title!r} belongs to {owner}"), (title, user, answer)
        assert _stored(folder, title)["content"].startswith(f"{owner} wrote #")


def test_the_store_refuses_another_users_note_even_past_the_gates(place):
    store = NoteStore(place / "notes")
    assert store.save("Plan", "alice's", owner="alice", may_change=lambda owner: owner == "alice").owner == "alice"
    with pytest.raises(NoteOwned) as refused:
        store.save("plan", "bob's", owner="bob", may_change=lambda owner: owner == "bob")
    assert str(refused.value) == (
        "The note 'plan' belongs to alice, so bob's text was not saved: only its owner, or a role that may change "
        "every note, may change it. Choose another title for your note (list_notes shows the notes you may change)."
    )
    with pytest.raises(NoteOwned, match=r"^The note 'plan' belongs to alice, so it was not deleted"):
        store.delete("plan", may_change=lambda owner: owner == "bob")
    edited = store.save("plan", "admin's edit", owner="carol", may_change=lambda owner: True)
    assert (edited.owner, store.read("plan").content) == ("alice", "admin's edit")  # the owner is fixed at creation


def test_concurrent_deletes_answer_not_found_without_a_path(run, place):
    lab = NotesLab(folder=place / "notes", calls_per_minute=10_000)
    store = NoteStore(lab.folder)
    ids = [f"del-race-{n}" for n in range(20)]
    for note_id in ids:
        store.save(note_id, "to be deleted", "alice")
    deletes = [(user, "delete_note", {"note_id": note_id}) for note_id in ids for user in ("alice", "carol") * 2]
    answers = run(_calls, lab, deletes)
    texts = [text for _, text in answers]
    assert not [text for text in texts if str(place) in text or "/" in text or LEAKS.search(text)]
    for note_id in ids:
        mine = [
            answer for (*_, arguments), answer in zip(deletes, answers, strict=True) if arguments["note_id"] == note_id
        ]
        assert sorted(mine) == [
            (False, f"Deleted note {note_id!r} (owner alice)."),
            *[(True, f"There is no note {note_id!r}. Call list_notes to see the note ids.")] * 3,
        ]
    assert store.scan().notes == []


# Only regular files with one link are notes -------------------------------------------------------------------


def test_a_hard_link_to_a_file_outside_is_refused_and_skipped(run, place):
    lab = NotesLab(folder=place / "notes", calls_per_minute=100)
    outside = place / "outside" / "secret.json"
    outside.parent.mkdir()
    outside.write_text(json.dumps({"title": "linked", "owner": "alice", "content": "outside secret"}))
    lab.folder.mkdir()
    os.link(outside, lab.folder / "linked.json")
    read = call(run, lab, "alice", "read_note", note_id="linked")
    assert read.is_error and "outside secret" not in read.text and "hard link" in read.text
    assert call(run, lab, "alice", "save_note", title="linked", content="overwritten").is_error
    listed = call(run, lab, "carol", "list_notes").text
    assert "outside secret" not in listed and "Skipped 1 file" in listed and "'linked'" in listed
    assert json.loads(outside.read_text())["content"] == "outside secret"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_named_like_a_note_does_not_hang_list_notes(run, place):
    lab = NotesLab(folder=place / "notes", calls_per_minute=100)
    lab.folder.mkdir()
    fifo = lab.folder / "x.json"
    os.mkfifo(fifo)
    done, hung = threading.Event(), threading.Event()

    def unblock() -> None:
        """After 10 s, give every reader stuck on the FIFO end of file (so the test ends), and note that one hung."""
        done.wait(10)
        while not done.is_set():
            with contextlib.suppress(OSError):  # ENXIO: nobody is reading, nothing hangs
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                hung.set()
            done.wait(0.05)

    watchdog = threading.Thread(target=unblock)
    watchdog.start()
    try:
        listed = call(run, lab, "carol", "list_notes")
        read = call(run, lab, "carol", "read_note", note_id="x")
    finally:
        done.set()
        watchdog.join()
    assert not hung.is_set(), "list_notes waited on the FIFO"
    assert listed.text.startswith("No notes that carol may read yet.") and "Skipped 1 file" in listed.text
    assert read.is_error and "named pipe" in read.text and str(place) not in read.text


# A file that is no note is reported and skipped ---------------------------------------------------------------

DAMAGED = {
    "broken.json": b"{not json",
    "half.json": json.dumps({"title": "half"}).encode(),
    "latin.json": b"\xff\xfe\x00title",
    "typed.json": json.dumps({"title": 1, "owner": "bob", "content": ["x"]}).encode(),
    "listed.json": b"[1, 2, 3]",
}


def test_damaged_notes_are_skipped_reported_and_never_saved_over(run, place):
    lab = NotesLab(folder=place / "notes", calls_per_minute=100)
    lab.folder.mkdir()
    for name, data in DAMAGED.items():
        (lab.folder / name).write_bytes(data)
    call(run, lab, "alice", "save_note", title="good", content="readable")
    listed = call(run, lab, "alice", "list_notes")
    assert listed.text == (
        "Notes alice may read (1):\n- good: good (owner alice)\n"
        "Skipped 5 files in the notes folder that are not notes this server wrote: 'broken', 'half', 'latin', "
        "'listed', 'typed'. read_note on one says why and what to do."
    )
    saved = call(run, lab, "alice", "save_note", title="Half", content="mine now?")
    assert saved.is_error and saved.text == (
        "The file of the note 'half' is not a note this server wrote (a note is UTF-8 JSON with a text title, owner "
        "and content), so it cannot be read or saved over. Choose another title; an admin may delete it with "
        "delete_note."
    )
    texts = [call(run, lab, "bob", "read_note", note_id=name.removesuffix(".json")).text for name in DAMAGED]
    assert all(text.startswith("The file of the note") and not LEAKS.search(text) for text in texts)
    assert call(run, lab, "bob", "delete_note", note_id="broken").text.startswith("The file of the note 'broken'")
    deleted = call(run, lab, "carol", "delete_note", note_id="broken")
    assert (deleted.is_error, deleted.text) == (False, "Deleted the damaged file of the note 'broken'.")
    assert (lab.folder / "half.json").read_bytes() == DAMAGED["half.json"]
    assert sorted(lab.files()) == ["good.json", "half.json", "latin.json", "listed.json", "typed.json"]


# Interrupted writes and failing disks -------------------------------------------------------------------------


def test_leftovers_of_killed_writes_are_removed_when_the_folder_is_opened(run, place):
    folder = place / "notes"
    folder.mkdir()
    for leftover in (".tmp-k1ll3d.part", ".tmp-0x9.part"):
        (folder / leftover).write_bytes(b'{"title": "half a wri')
    (folder / ".rate-limits.sqlite3").write_bytes(b"another engineer's")
    (folder / "kept.json").write_text(json.dumps({"title": "kept", "owner": "bob", "content": "whole"}))
    assert [note.note_id for note in NoteStore(folder).scan().notes] == ["kept"]
    assert sorted(os.listdir(folder)) == [".rate-limits.sqlite3", "kept.json"]
    assert (folder / ".rate-limits.sqlite3").read_bytes() == b"another engineer's"
    (folder / ".tmp-again.part").write_bytes(b"")
    listed = call(run, NotesLab(folder=folder, calls_per_minute=100), "carol", "list_notes").text
    assert listed == "Notes carol may read (1):\n- kept: kept (owner bob)"
    assert not (folder / ".tmp-again.part").exists()


@pytest.mark.skipif(notes_store.fcntl is None, reason="no flock: one process only")
def test_a_live_write_of_another_process_is_never_cleaned_up(place):
    folder = place / "notes"
    folder.mkdir()
    live = folder / ".tmp-live.part"
    held = os.open(folder, os.O_RDONLY)
    notes_store.fcntl.flock(held, notes_store.fcntl.LOCK_EX)  # as another worker's write holds it
    live.write_bytes(b"being written")
    opened = threading.Thread(target=NoteStore(folder).scan)
    try:
        opened.start()
        time.sleep(0.3)
        assert live.exists() and opened.is_alive()  # the new store waits for the write to finish
    finally:
        os.close(held)
        opened.join(timeout=HANG_TIMEOUT)
    assert not live.exists() and not opened.is_alive()


def test_a_failing_disk_is_answered_with_its_reason_and_the_note_id_only(place, monkeypatch):
    store = NoteStore(place / "notes")

    def full(source, target):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(notes_store.os, "replace", full)
    with pytest.raises(NoteError) as refused:
        store.save("plan", "text", "alice")
    assert str(refused.value) == f"The note 'plan' was not saved: {os.strerror(errno.ENOSPC)}."
    assert os.listdir(place / "notes") == []


def test_a_damaged_note_cannot_be_saved_over_in_the_store(place):
    folder = place / "notes"
    folder.mkdir()
    (folder / "half.json").write_text('{"title": "half"}')
    with pytest.raises(NoteDamaged, match=r"^The file of the note 'half' is not a note this server wrote"):
        NoteStore(folder).save("half", "x", "alice")
