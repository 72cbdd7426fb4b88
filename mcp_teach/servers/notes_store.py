"""The folder the notes server keeps its notes in: one JSON file per note, never a path outside the folder.

A note's id is its title in lower case, and it names the file (``shopping list`` -> ``shopping list.json``).
Since titles come from a model (and so, through a prompt injection, from anyone), every title and id is checked
against an allowlist before it becomes a path (:func:`check_note_id`): ``../../etc/passwd``, absolute paths, NUL
bytes, backslashes, Windows device names (``CON``, ``NUL``, ``COM1``...) and over-long names are refused with a
message that says what is allowed. The resolved path must still lie in the folder, and a note file that is a
symbolic link is refused (opened with ``O_NOFOLLOW`` where the system has it): a link planted in the folder
cannot lead a read or a write outside. An allowlist, not a blocklist of bad sequences: there are too many
spellings of ``..`` (``%2e%2e``, ``..\\``, Unicode look-alikes) to list them all.

Writes are atomic: the note goes to a temporary file in the same folder, is flushed to disk (``fsync``) and then
renamed over the old one (``os.replace``, atomic on POSIX and Windows), so a crash mid-write leaves the old note
whole. Temporary files start with ``.``, which no note id may, so they are never listed or read as notes.

Each note records its owner, the user who first saved it; the server's gates (:mod:`.gates`) decide who may
touch it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from mcp_teach.config import load_settings

#: The longest note title or id (file systems allow 255 bytes; leave room for the suffix and stay readable).
MAX_ID_LENGTH = 64
#: The largest note content, in characters: a note is a note, not a place to park a file.
MAX_CONTENT_LENGTH = 20_000
SUFFIX = ".json"
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


class NoteError(ValueError):
    """A note the store will not write; the message says what is allowed."""


class NoteNameError(NoteError):
    """A note title or id that could not name a file inside the notes folder; the message says what is allowed."""


class NoteNotFound(LookupError):
    """No note has this id; the message says how to find the ones there are."""


@dataclass(frozen=True)
class Note:
    """One note as stored: its id (the file name without ``.json``), title, owner and content."""

    note_id: str
    title: str
    owner: str
    content: str


def default_notes_dir() -> Path:
    """``MCP_TEACH_NOTES_DIR`` (environment or ``.env``), else a per-user data folder.

    Windows: ``%LOCALAPPDATA%\\mcp-teach\\notes``; elsewhere ``$XDG_DATA_HOME/mcp-teach/notes``, by default
    ``~/.local/share/mcp-teach/notes``. Not created here: :class:`NoteStore` creates it on first use.
    """
    configured = load_settings().notes_dir
    if configured is not None:
        return configured
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "mcp-teach" / "notes"


def _shown(value: object) -> str:
    """``repr`` of what was sent, cut short: an over-long name is not echoed back whole."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_note_id(value: object, what: str = "note id") -> str:
    """``value`` in lower case if it may name a note, else :class:`NoteNameError` saying what is allowed."""
    if not isinstance(value, str):
        raise NoteNameError(f"A {what} must be a string, got {type(value).__name__}. A {what} is {ID_RULE}.")
    if not _ID_SHAPE.fullmatch(value) or ".." in value:
        raise NoteNameError(f"The {what} {_shown(value)} is not allowed: a {what} is {ID_RULE}.")
    note_id = value.lower()
    if note_id.split(".")[0].rstrip(" ") in RESERVED_NAMES:
        raise NoteNameError(f"The {what} {_shown(value)} is a Windows device name: a {what} is {ID_RULE}.")
    return note_id


class NoteStore:
    """The notes in one folder (created on first use): save, read, list and delete, each inside the folder only."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_notes_dir()

    def _root(self) -> Path:
        """The folder, created if missing, as an absolute path with links resolved."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder.resolve()

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

    def exists(self, note_id: object) -> bool:
        return self.path_for(note_id).is_file()

    def read(self, note_id: object) -> Note:
        """The note ``note_id``; :class:`NoteNotFound` if there is none."""
        path = self.path_for(note_id)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        try:
            descriptor = os.open(path, flags)
        except FileNotFoundError:
            raise NoteNotFound(f"There is no note {_shown(note_id)}. Call list_notes to see the note ids.") from None
        except OSError as error:  # ELOOP: a link appeared after the check
            raise NoteNameError(
                f"The note {_shown(note_id)} cannot be opened as a regular file ({error.strerror})."
            ) from None
        with os.fdopen(descriptor, "rb") as file:
            data = json.loads(file.read().decode("utf-8"))
        return Note(note_id=path.stem, title=data["title"], owner=data["owner"], content=data["content"])

    def owner_of(self, note_id: object) -> str | None:
        """Who owns ``note_id``, or None if there is no such note."""
        with contextlib.suppress(NoteNotFound):
            return self.read(note_id).owner
        return None

    def list(self, owner: str | None = None) -> list[Note]:
        """Every note (only ``owner``'s if given), sorted by id; temporary files, links and strays are skipped."""
        notes = []
        for path in sorted(self._root().glob("*" + SUFFIX)):
            try:
                note = self.read(path.stem)
            except (NoteNameError, NoteNotFound, ValueError, KeyError, OSError):
                continue
            if owner is None or note.owner == owner:
                notes.append(note)
        return notes

    def save(self, title: str, content: str, owner: str) -> Note:
        """Write the note ``title`` atomically; an existing note keeps its owner. Returns the note as stored."""
        path = self.path_for(title)
        if not isinstance(content, str) or len(content) > MAX_CONTENT_LENGTH:
            raise NoteError(f"A note's content must be text of at most {MAX_CONTENT_LENGTH} characters.")
        note = Note(note_id=path.stem, title=title, owner=self.owner_of(title) or owner, content=content)
        record = {key: value for key, value in asdict(note).items() if key != "note_id"}
        write_atomically(path, json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))
        return note

    def delete(self, note_id: object) -> Note:
        """Remove ``note_id`` and return what it held; :class:`NoteNotFound` if there is none."""
        note = self.read(note_id)
        self.path_for(note_id).unlink()
        return note


def write_atomically(path: Path, data: bytes) -> None:
    """Put ``data`` in ``path`` all at once: a temporary file beside it, flushed to disk, renamed over it.

    If anything fails before the rename, ``path`` is as it was and the temporary file is removed.
    """
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
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
