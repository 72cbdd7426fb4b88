"""The folder the notes server keeps its notes in: one JSON file per note, never a path outside the folder.

A note's id is its title in lower case, and it names the file (``shopping list`` -> ``shopping list.json``).
Since titles come from a model (and so, through a prompt injection, from anyone), every title and id is checked
against an allowlist before it becomes a path (:func:`check_note_id`): ``../../etc/passwd``, absolute paths, NUL
bytes, backslashes, Windows device names (``CON``, ``NUL``, ``COM1``...) and over-long names are refused with a
message that says what is allowed. The resolved path must still lie in the folder, and a note file that is a
symbolic link is refused (opened with ``O_NOFOLLOW`` where the system has it): a link planted in the folder
cannot lead a read or a write outside. An allowlist, not a blocklist of bad sequences: there are too many
spellings of ``..`` (``%2e%2e``, ``..\\``, Unicode look-alikes) to list them all.

**Only files this server wrote are notes.** A note is opened with ``O_NOFOLLOW`` and ``O_NONBLOCK`` and checked
with ``fstat`` on the open file (not on the name, which could change in between): it must be a regular file with
one link. A hard link could be another name for a file outside the folder, and a FIFO (named pipe) would make
every reader wait for a writer that never comes. A file that is not UTF-8 JSON with a text title, owner and content
is :class:`NoteDamaged`: reported and skipped by :meth:`NoteStore.scan`, never saved over (only deleted), and
the message names the id, not the parser's complaint.

**Ownership is checked at use, in the store.** The owner is the user who first saved the note and never changes.
The gates (:mod:`.gates`) check ownership before a tool runs, but the note may not exist yet then and be created
by someone else before the tool runs (two saves of a new title, a read racing its owner's save). So the store
applies one rule (:func:`_allow`) to the note it actually uses: :meth:`NoteStore.read` to the note it read and
returns (``may_read``; the owner and the text come from one read of one file, so nothing can come in between),
:meth:`NoteStore.save` and :meth:`NoteStore.delete` to the note they replace or remove (``may_change``), under the
store's lock, held from reading the owner to the rename or unlink. The lock is ``flock`` on the folder itself
(POSIX), so it holds across the worker processes of one server and needs no file of its own; where ``fcntl`` is
missing (Windows) it is a lock in this process only, and several processes on one folder are not kept apart there.

**Each user keeps at most** :data:`MAX_NOTES_PER_USER` **notes and** :data:`MAX_BYTES_PER_USER` **bytes of
them**, counted under the lock when a save would add to them; a refusal names the limit and how to make room.
Listing stays cheap however many notes there are: a note's file is read again only when its ``lstat`` (inode,
size, times) has changed since this store last read it.

**What a shared machine can and cannot promise.** The folder is made private (``0700``) when a store opens it, and
notes are written ``0600``: another user of the machine can neither read the notes nor open the folder, so they
cannot take its lock and make every save wait. Root, and every process of the user who runs the server, can
read and change everything in it; a folder that another user owns stays theirs (it is not made private, and they
may read or replace any note); on Windows the folder has the permissions of where it is (by default
``%LOCALAPPDATA%``, private to its user). Notes are not encrypted: anything that can read the disk can read them.

Writes are atomic: the note goes to a temporary file in the same folder, is flushed to disk (``fsync``) and then
renamed over the old one (``os.replace``, atomic on POSIX and Windows), so a crash mid-write leaves the old note
whole. Temporary files start with ``.``, which no note id may, so they are never listed or read as notes; since
they exist only while the lock is held, those of a killed write are removed, under the lock, when a store first
opens the folder. Other files starting with ``.`` (the server's rate-limit counts) are never listed or removed.
Errors from the system name the note and the system's reason, never a path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, Field, ValidationError

from mcp_teach.config import load_settings

try:
    import fcntl
except ImportError:  # Windows: the lock is this process's only (see the module docstring)
    fcntl = None  # type: ignore[assignment]

#: The longest note title or id (file systems allow 255 bytes; leave room for the suffix and stay readable).
MAX_ID_LENGTH = 64
#: The largest note content, in characters: a note is a note, not a place to park a file.
MAX_CONTENT_LENGTH = 20_000
SUFFIX = ".json"
#: What a write in progress is called; any such file seen while holding the lock is left from a killed write.
TEMPORARY_PREFIX, TEMPORARY_SUFFIX = ".tmp-", ".part"
#: The most notes one user may keep, and the most bytes their notes' files may take together.
MAX_NOTES_PER_USER, MAX_BYTES_PER_USER = 100, 1_000_000
#: How long a save or delete waits for another one's lock before it gives up (a write takes milliseconds).
LOCK_SECONDS = 10.0
#: Letters, digits, space, ``-``, ``_``, ``.``; first a letter or digit; last not a space or ``.`` (Windows drops them).
_ID_SHAPE = re.compile(rf"[A-Za-z0-9](?:[A-Za-z0-9 _.-]{{0,{MAX_ID_LENGTH - 2}}}[A-Za-z0-9_-])?")
#: Device names Windows reserves in every folder, with any extension (``con.json`` is the console).
RESERVED_NAMES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"} | {f"{d}{n}" for d in ("com", "lpt") for n in "123456789"}
)
ID_RULE = (
    f"1 to {MAX_ID_LENGTH} characters: letters A-Z a-z, digits, space, '-', '_' and '.', starting with a letter "
    "or digit and not ending with a space or '.'; no '/', '\\' or '..' path parts, and not a Windows device name "
    "such as CON or NUL. For example 'shopping list' or 'week-3_plan'"
)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
#: One lock per process, around the folder's: threads of one process take turns here, processes at ``flock``.
_PROCESS_LOCK = threading.Lock()

#: Whether the caller may read or change a note owned by this user; None for a damaged note, whose owner is unknown.
OwnerRule = Callable[[str | None], bool]


class NoteError(ValueError):
    """A note the store will not write; the message says what is allowed."""


class NoteNameError(NoteError):
    """A note title or id that could not name a file inside the notes folder; the message says what is allowed."""


class NoteOwned(NoteError):
    """The note belongs to someone the caller may not change notes of; the message says who and what is allowed."""


class NoteDamaged(NoteError):
    """The note's file is not a note this server wrote; the message names the id and says what to do."""


class NoteStorageError(NoteError, OSError):
    """The system refused a read or write; the message names the note and the reason, never a path.

    Also an ``OSError``, so callers that catch those still do.
    """


class NoteNotFound(LookupError):
    """No note has this id; the message says how to find the ones there are."""


class Note(BaseModel, frozen=True, strict=True):
    """One note: its id (the file name without ``.json``, not written in the file), title, owner and content.

    Strict, so a file is a note only if it is UTF-8 JSON with these fields as strings (pydantic checks it).
    """

    note_id: str = Field(default="", exclude=True)
    title: str
    owner: str = Field(min_length=1)  # an empty owner would match no one
    content: str


class Entry(NamedTuple):
    """A note as a listing shows it, without its content, and the bytes its file takes (what the quota counts)."""

    note_id: str
    title: str
    owner: str
    size: int


class Listing(NamedTuple):
    """What :meth:`NoteStore.scan` found: the readable notes, and the ids of note files it skipped (damaged,
    links, FIFOs), so that a refusal to read them is not silent."""

    notes: list[Entry]
    skipped: list[str]


def default_notes_dir() -> Path:
    """``MCP_TEACH_NOTES_DIR`` (environment or ``.env``), else a per-user data folder.

    Windows: ``%LOCALAPPDATA%\\mcp-teach\\notes``; elsewhere ``$XDG_DATA_HOME/mcp-teach/notes``, by default
    ``~/.local/share/mcp-teach/notes``. Not created here: :class:`NoteStore` creates it on first use.
    """
    configured = load_settings().notes_dir
    windows = sys.platform == "win32" and os.environ.get("LOCALAPPDATA")
    base = Path(windows or os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return configured if configured is not None else base / "mcp-teach" / "notes"


def _shown(value: object) -> str:
    """``repr`` of what was sent, cut short: an over-long name is not echoed back whole."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_note_id(value: object) -> str:
    """``value`` (a title or an id) in lower case if it may name a note, else :class:`NoteNameError` saying what is
    allowed."""
    if not isinstance(value, str):
        raise NoteNameError(f"A note id must be a string, got {type(value).__name__}. A note id is {ID_RULE}.")
    if not _ID_SHAPE.fullmatch(value) or ".." in value:
        raise NoteNameError(f"The note id {_shown(value)} is not allowed: a note id is {ID_RULE}.")
    note_id = value.lower()
    if note_id.split(".")[0].rstrip(" ") in RESERVED_NAMES:
        raise NoteNameError(f"The note id {_shown(value)} is a Windows device name: a note id is {ID_RULE}.")
    return note_id


def _note_id_of(file_name: str) -> str | None:
    """The id a file in the folder is the note of, or None for any other file (temporary, hidden, another case)."""
    stem = file_name.removesuffix(SUFFIX)
    with contextlib.suppress(NoteNameError):
        if stem != file_name and check_note_id(stem) == stem:
            return stem
    return None


@contextlib.contextmanager
def _reported(failure: str) -> Iterator[None]:
    """Turn an ``OSError`` into :class:`NoteStorageError` ``"<failure>: <reason>."``: a client never sees a path.

    The reason is the system's ``strerror`` (which leaves out the file name), else the text it was raised with.
    """
    try:
        yield
    except NoteError:
        raise
    except OSError as error:
        raise NoteStorageError(f"{failure}: {error.strerror or str(error) or type(error).__name__}.") from error


def _busy() -> NoteError:
    """The refusal when the lock stays taken: a writer elsewhere is stuck, and waiting longer would hang the call."""
    return NoteError(
        f"The notes folder is busy: another save or delete held it for {LOCK_SECONDS:.0f} seconds. Try again."
    )


@contextlib.contextmanager
def _folder_lock(root: Path) -> Iterator[None]:
    """Hold the store's lock on ``root``: threads of this process one at a time, then ``flock`` for other processes.

    Waits at most :data:`LOCK_SECONDS`, so a stuck writer elsewhere makes a refusal, not a hang.
    """
    deadline = time.monotonic() + LOCK_SECONDS
    if not _PROCESS_LOCK.acquire(timeout=LOCK_SECONDS):
        raise _busy()
    try:
        with contextlib.ExitStack() as held:
            if fcntl is not None:
                descriptor = os.open(root, os.O_RDONLY)
                held.callback(os.close, descriptor)  # closing the descriptor releases the flock
                _flock_by(descriptor, deadline)
            yield
    finally:
        _PROCESS_LOCK.release()


def _flock_by(descriptor: int, deadline: float) -> None:
    """Take an exclusive ``flock`` on ``descriptor``, polling until ``deadline`` (``flock`` itself has no timeout)."""
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise _busy() from None
            time.sleep(0.002)


def _remove_leftovers(root: Path) -> None:
    """Remove the temporary files of writes that were killed; only call it holding the lock (no write is live)."""
    for leftover in root.glob(f"{TEMPORARY_PREFIX}*{TEMPORARY_SUFFIX}"):
        with contextlib.suppress(OSError):  # gone already, or a folder someone named so: not ours to remove
            leftover.unlink()


def _check_plain_file(note_id: str, info: os.stat_result) -> None:
    """Refuse the open file of ``note_id`` unless it is a regular file with one link."""
    if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
        return
    if stat.S_ISREG(info.st_mode):
        what = f"has {info.st_nlink} names (a hard link), and another of them may lie outside the notes folder"
    else:
        kind = "named pipe (FIFO)" if stat.S_ISFIFO(info.st_mode) else "folder or special file"
        what = f"is a {kind}, not a regular file"
    raise NoteNameError(
        f"The note {_shown(note_id)} {what}, so this server neither reads nor writes it: a note is a regular file "
        "with one name, written by this server. Choose another title; whoever looks after the notes folder may "
        "remove the file."
    )


def _read_plain_file(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file with one link, opened without following a link or blocking."""
    note_id = path.stem
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise NoteNotFound(f"There is no note {_shown(note_id)}. Call list_notes to see the note ids.") from None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link that appeared after the check
            raise NoteNameError(
                f"The note {_shown(note_id)} cannot be opened as a regular file ({error.strerror})."
            ) from None
        raise
    with open(descriptor, "rb") as file:
        _check_plain_file(note_id, os.fstat(descriptor))
        return file.read()


def _damaged(note_id: str) -> NoteDamaged:
    """The refusal for a file that is no note: it names the id and what to do, not what the parser found."""
    return NoteDamaged(
        f"The file of the note {_shown(note_id)} is not a note this server wrote (a note is UTF-8 JSON with a text "
        "title, owner and content), so it cannot be read or saved over. Choose another title; an admin may delete "
        "it with delete_note."
    )


def _parse(note_id: str, data: bytes) -> Note:
    """The note in ``data``, or :class:`NoteDamaged` (never the parser's own words, which help no one here)."""
    try:
        return Note.model_validate_json(data).model_copy(update={"note_id": note_id})
    except ValidationError:  # not UTF-8, not JSON, nested too deep, or not a note's fields
        raise _damaged(note_id) from None


def _allow(allowed: OwnerRule, note: Note, outcome: str, verb: str, hint: str) -> None:
    """The one ownership rule, applied to the note being used: :class:`NoteOwned` unless ``allowed(its owner)``."""
    if not allowed(note.owner):
        every = "read" if verb == "read" else "change"
        raise NoteOwned(
            f"The note {_shown(note.note_id)} belongs to {note.owner}, so {outcome}: only its owner, or a role that "
            f"may {every} every note, may {verb} it. {hint}"
        )


class NoteStore:
    """The notes in one folder (created on first use): save, read, list and delete, each inside the folder only."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_notes_dir()
        self._opened = False
        #: Each note file's version (inode, size, modified and changed times) when it was last read, and what it
        #: held (None: no note); see :meth:`_survey`.
        self._seen: dict[str, tuple[tuple[int, ...], Entry | None]] = {}

    def _root(self) -> Path:
        """The folder, created if missing, as an absolute path with links resolved; made private and cleaned of
        leftovers once."""
        with _reported("The notes folder could not be opened"):
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            root = self.folder.resolve()
            if not self._opened:
                with contextlib.suppress(PermissionError):  # private, unless another user owns it: it is theirs
                    root.chmod(stat.S_IMODE(root.stat().st_mode) & 0o700)
                with _folder_lock(root):
                    _remove_leftovers(root)
                self._opened = True
        return root

    def path_for(self, note_id: object) -> Path:
        """The file of ``note_id``, checked to lie directly in the folder and not to be a symbolic link."""
        root = self._root()
        path = root / (check_note_id(note_id) + SUFFIX)
        if path.is_symlink():
            raise NoteNameError(
                f"The note {_shown(note_id)} is a symbolic link, which this server never follows: "
                "a note must be a regular file in the notes folder. Delete the link or choose another title."
            )
        if path.parent != root or not path.resolve().is_relative_to(root):
            raise NoteNameError(f"The note id {_shown(note_id)} would leave the notes folder: a note id is {ID_RULE}.")
        return path

    def read(self, note_id: object, may_read: OwnerRule = lambda owner: True) -> Note:
        """The note ``note_id`` if ``may_read(its owner)`` (else :class:`NoteOwned`), decided on the very note read
        and returned; :class:`NoteNotFound` if there is none, :class:`NoteDamaged` if it is no note."""
        note = self._load(self.path_for(note_id))
        _allow(may_read, note, "it was not read", "read", "Call list_notes to see the notes you may read.")
        return note

    @staticmethod
    def _load(path: Path) -> Note:
        """The note at ``path`` (already checked by :meth:`path_for`); takes no lock, so it may run under one."""
        with _reported(f"The note {_shown(path.stem)} could not be read"):
            return _parse(path.stem, _read_plain_file(path))

    def owner_of(self, note_id: object) -> str | None:
        """Who owns ``note_id``, or None if there is no such note."""
        with contextlib.suppress(NoteNotFound):
            return self.read(note_id).owner
        return None

    def scan(self) -> Listing:
        """Every readable note, sorted by id, and the ids of the note files that are not (damaged, links, FIFOs).

        Files that no note id names (temporary and other hidden files, other suffixes) are neither listed nor
        counted: they are not notes, and some belong to other parts of the server (the rate-limit counts).
        """
        found = sorted(self._survey(self._root()).items())
        return Listing([entry for _, entry in found if entry], [note_id for note_id, entry in found if not entry])

    def _survey(self, root: Path) -> dict[str, Entry | None]:
        """Each note file in ``root`` by id: its entry, or None if it is no note (damaged, a link, a FIFO).

        A file is read only if its version changed since this store last read it, so looking at a folder whose
        notes have not changed costs one ``lstat`` a note, however long they are.
        """
        seen: dict[str, tuple[tuple[int, ...], Entry | None]] = {}
        with _reported("The notes folder could not be listed"), os.scandir(root) as items:
            for item in items:
                note_id = _note_id_of(item.name)
                with contextlib.suppress(FileNotFoundError, NoteNotFound):  # deleted since the folder was listed
                    if note_id is not None:
                        seen[note_id] = self._seen_now(item, note_id)
        self._seen = seen
        return {note_id: entry for note_id, (_, entry) in seen.items()}

    def _seen_now(self, item: os.DirEntry[str], note_id: str) -> tuple[tuple[int, ...], Entry | None]:
        """The version of the file ``item`` and what it holds: read again only if the version is new."""
        info = item.stat(follow_symlinks=False)
        version = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        known = self._seen.get(note_id)
        if known is not None and known[0] == version:
            return known
        try:
            note = self._load(Path(item.path))
        except NoteError:
            return version, None
        return version, Entry(note.note_id, note.title, note.owner, info.st_size)

    def _check_quota(self, root: Path, note: Note, size: int) -> None:
        """Refuse ``note`` (``size`` bytes) if its owner's notes would pass :data:`MAX_NOTES_PER_USER` or
        :data:`MAX_BYTES_PER_USER`; only call it holding the lock, so two saves cannot both take the last place."""
        theirs = {e.note_id: e.size for e in self._survey(root).values() if e is not None and e.owner == note.owner}
        refused = f"The note {_shown(note.note_id)} was not saved:"
        if note.note_id not in theirs and len(theirs) >= MAX_NOTES_PER_USER:
            raise NoteError(
                f"{refused} {note.owner} already keeps {MAX_NOTES_PER_USER} notes, the most one user may keep. Delete "
                "a note you no longer need (delete_note; list_notes shows yours), or save over one of them."
            )
        total = sum(theirs.values()) - theirs.get(note.note_id, 0) + size
        if total > MAX_BYTES_PER_USER:
            raise NoteError(
                f"{refused} {note.owner}'s notes would take {total:,} bytes, more than the {MAX_BYTES_PER_USER:,} one "
                "user may keep. Delete notes you no longer need (delete_note; list_notes shows yours), or save a "
                "shorter note."
            )

    def save(self, title: str, content: str, owner: str, may_change: OwnerRule | None = None) -> Note:
        """Write the note ``title`` atomically, as ``owner``; returns the note as stored, with its real owner.

        A new note is ``owner``'s; an existing one keeps its owner, and may be changed only if ``may_change(its
        owner)`` (default: only by ``owner``), else :class:`NoteOwned`; and the owner's notes must stay within their
        quota (:meth:`_check_quota`). Checked and written under the lock, so no other save or delete, in this
        process or another, comes in between.
        """
        path = self.path_for(title)
        if not isinstance(content, str) or len(content) > MAX_CONTENT_LENGTH:
            raise NoteError(f"A note's content must be text of at most {MAX_CONTENT_LENGTH} characters.")
        allowed = may_change or (lambda current: current == owner)
        with _reported(f"The note {_shown(path.stem)} was not saved"), _folder_lock(path.parent):
            try:
                current: Note | None = self._load(path)  # a damaged note is refused here
            except NoteNotFound:
                current = None
            if current is not None:
                hint = "Choose another title for your note (list_notes shows the notes you may change)."
                _allow(allowed, current, f"{owner}'s text was not saved", "change", hint)
            note = Note(note_id=path.stem, title=title, owner=current.owner if current else owner, content=content)
            data = note.model_dump_json(indent=2).encode("utf-8")
            self._check_quota(path.parent, note, len(data))
            write_atomically(path, data)
            self._seen.pop(note.note_id, None)  # a new file may get the old one's inode and times: read it again
        return note

    def delete(self, note_id: object, *, may_change: OwnerRule) -> Note | None:
        """Remove ``note_id`` if ``may_change(its owner)``; returns what it held (None: it was damaged).

        A damaged note has no owner to read: ``may_change(None)`` decides (give True only to those who may change
        every note). Checked and removed under the lock, so of two deletes one removes and the other gets
        :class:`NoteNotFound`.
        """
        path = self.path_for(note_id)
        with _reported(f"The note {_shown(path.stem)} was not deleted"), _folder_lock(path.parent):
            try:
                note: Note | None = self._load(path)
            except NoteDamaged:
                note = None
            if note is None and not may_change(None):
                raise _damaged(path.stem)
            if note is not None:
                hint = "Call list_notes to see the notes you may change."
                _allow(may_change, note, "it was not deleted", "delete", hint)
            path.unlink()
            self._seen.pop(path.stem, None)
        return note


def write_atomically(path: Path, data: bytes) -> None:
    """Put ``data`` in ``path`` all at once: a temporary file beside it, flushed to disk, renamed over it.

    If anything fails before the rename, ``path`` is as it was and the temporary file is removed. Call it holding
    the store's lock: a temporary file seen without a writer holding the lock is taken for a killed write's.
    """
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=TEMPORARY_PREFIX, suffix=TEMPORARY_SUFFIX)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Flush the folder entry of the rename to disk too (POSIX; Windows cannot open a folder this way)."""
    if sys.platform == "win32":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
