"""A note read is checked at use: gate 4 asks who owns a note before the tool runs, and the note may change owner
in between (created, or deleted and created again by someone else).

The store applies one ownership rule to the note it actually reads, saves over or deletes, so what gate 4 saw no
longer matters. Made deterministic by a ``NoteStore.owner_of`` that lets the victim save the note the moment gate 4
has looked, then shown over real HTTP with a victim saving and deleting while another student reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l12_gates import TOKENS, NotesLab, quiet_logs
from mcp_teach.servers.notes_store import NoteStore
from mcp_teach.transports.in_process import serve_http

SECRET = "VICTIM-SECRET"
#: Reads racing the victim's saves and deletes: on the unchecked read about 8 % of them leaked.
RACING_READS = 200


def call(run, lab: NotesLab, user: str, tool: str, **arguments):
    return run(functools.partial(lab.call, user, tool, **arguments))


@pytest.fixture
def created_after_gate_4(monkeypatch):
    """``NoteStore.owner_of`` as gate 4 calls it, except that the first time it is asked about a note that does
    not exist yet, bob saves it right after the answer "nobody", before the tool runs."""
    owner_of = NoteStore.owner_of

    def owner_then_bob_saves(store: NoteStore, note_id: object) -> str | None:
        owner = owner_of(store, note_id)
        if owner is None:
            monkeypatch.setattr(NoteStore, "owner_of", owner_of)  # once
            NoteStore(store.folder).save(str(note_id), SECRET, owner="bob")
        return owner

    monkeypatch.setattr(NoteStore, "owner_of", owner_then_bob_saves)


@pytest.mark.parametrize(
    ("tool", "arguments", "refusal"),
    [
        ("read_note", {"note_id": "diary"}, "The note 'diary' belongs to bob, so it was not read"),
        ("save_note", {"title": "diary", "content": "alice's"}, "The note 'diary' belongs to bob, so alice's text"),
        ("delete_note", {"note_id": "diary"}, "The note 'diary' belongs to bob, so it was not deleted"),
    ],
    ids=["read", "save", "delete"],
)
def test_a_note_created_after_gate_4_looked_is_refused_at_use(run, tmp_path, created_after_gate_4, tool, arguments,
                                                               refusal):  # fmt: skip
    lab = NotesLab(folder=tmp_path / "notes", calls_per_minute=100)
    answer = call(run, lab, "alice", tool, **arguments)
    assert SECRET not in answer.text
    assert answer.is_error and answer.text.startswith(refusal), answer.text
    assert NoteStore(lab.folder).read("diary").content == SECRET  # bob's note, untouched


def test_the_owner_and_a_reader_of_every_note_still_read_it(run, tmp_path, created_after_gate_4):
    lab = NotesLab(folder=tmp_path / "notes", calls_per_minute=100)
    assert call(run, lab, "bob", "list_notes").text.startswith("No notes that bob may read yet.")
    for reader in ("bob", "carol", "dave"):  # the owner, admin, readonly
        read = call(run, lab, reader, "read_note", note_id="diary")
        assert (read.is_error, read.text) == (False, f"Note 'diary': diary (owner bob)\n\n{SECRET}")


async def _reads_while_bob_saves_and_deletes(lab: NotesLab) -> list[str]:
    """Alice's :data:`RACING_READS` reads of ``diary`` at once over real HTTP, while bob saves and deletes it in a
    loop on a connection of his own: the texts alice got."""
    with quiet_logs():
        async with serve_http(server=lab.server) as url, contextlib.AsyncExitStack() as stack:
            alice, bob = [
                await stack.enter_async_context(teaching_client(url, auth=TOKENS[user])) for user in ("alice", "bob")
            ]
            done = asyncio.Event()

            async def bob_saves_and_deletes() -> None:
                while not done.is_set():
                    await bob.call_tool_mcp("save_note", {"title": "diary", "content": SECRET})
                    await bob.call_tool_mcp("delete_note", {"note_id": "diary"})

            async def alice_reads() -> list[str]:
                try:
                    reads = [alice.call_tool_mcp("read_note", {"note_id": "diary"}) for _ in range(RACING_READS)]
                    return [result.content[0].text for result in await asyncio.gather(*reads)]
                finally:
                    done.set()

            _, texts = await asyncio.gather(bob_saves_and_deletes(), alice_reads())
    return texts


def test_reads_racing_the_owners_saves_and_deletes_over_http_never_leak(run, tmp_path):
    lab = NotesLab(folder=tmp_path / "notes", calls_per_minute=100_000)
    texts = run(_reads_while_bob_saves_and_deletes, lab)
    leaked = [text for text in texts if SECRET in text]
    assert leaked == [], f"{len(leaked)} of {RACING_READS} reads returned bob's note to alice"
    expected = ("Denied by gate 4 (ownership): student alice", "There is no note 'diary'", "The note 'diary' belongs")
    assert all(text.startswith(expected) for text in texts), {text[:60] for text in texts}
    seen = {prefix for prefix in expected[:2] if any(text.startswith(prefix) for text in texts)}
    assert seen == set(expected[:2]), "the reads never met bob's note both there and gone: no race was run"
