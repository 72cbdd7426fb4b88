"""``mcp-teach lessons``: the course copied from the installed package into a folder the student owns.

A wheel carries the lessons in ``mcp_teach/notebooks/`` (pyproject maps the repository's ``notebooks/`` there); a
clone has them in ``notebooks/`` beside the package. The copy leaves a manifest in the folder with the SHA-256 of
every file it wrote, so a later ``--update`` tells a lesson the student edited (its hash is not the recorded one)
from one it may replace, and never overwrites the first kind.

Nothing in the folder that is a symbolic link is followed: a lesson, ``solutions/`` or the manifest that is one is
refused with a message, and files are written with ``O_NOFOLLOW`` where the system has it. A link would let the
copy read or overwrite a file outside the folder (a lesson linked to another file whose hash the manifest records
would be "replaced"; a dangling manifest link would create a file at its target).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import mcp_teach

PACKAGE = Path(mcp_teach.__file__).parent
#: Where the lessons are: in an installed wheel, then in a clone (the repository's own folder).
SOURCES = (PACKAGE / "notebooks", PACKAGE.parent / "notebooks")
LESSONS = "[0-9][0-9]_*.ipynb"
#: The short tour that comes before the lessons (beside them, and its solved copy in ``solutions/``).
TOUR = "tour.ipynb"
SOLUTIONS = "solutions"
#: Beside the lessons, so that ``pytest`` in the folder runs them under nbval as the course's own tests do.
TEST_FILES = ("conftest.py", "nbval_sanitize.cfg")
MANIFEST = ".mcp-teach-course.json"
DEFAULT_FOLDER = Path("mcp-teach-course")
#: Creates or empties a plain file, bytes as they are (Windows); a link at the name fails the open (ELOOP) instead of
#: being followed, and a FIFO fails at once instead of blocking.
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
_WRITE_FLAGS |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class CourseFolderError(Exception):
    """The course cannot be copied: the message says why and what to do instead."""


def course_source(sources: tuple[Path, ...] = SOURCES) -> Path:
    """The folder the lessons are copied from: its ``NN_*.ipynb`` and ``solutions/NN_*.ipynb``."""
    for folder in sources:
        if any(folder.glob(LESSONS)) and any((folder / SOLUTIONS).glob(LESSONS)):
            return folder
    raise CourseFolderError(
        f"this installation of mcp-teach {mcp_teach.__version__} carries no lessons (looked in "
        f"{', '.join(map(str, sources))}): reinstall it from a wheel or from the repository, e.g. "
        '`pip install "mcp-teach @ git+https://github.com/mcp-teach/mcp-teach"`'
    )


def edition(sources: tuple[Path, ...], language: str) -> tuple[Path, ...]:
    """Where one language's lessons are: the English ones, or a translation's folder beside them (``zh/``)."""
    return sources if language == "en" else tuple(folder / language for folder in sources)


def course_files(source: Path) -> dict[str, Path]:
    """Every file of the course by its name in the folder (``tour.ipynb``, ``00_setup.ipynb``, ``solutions/…``,
    then the two files nbval runs them with)."""
    tours = [path for path in (source / TOUR, source / SOLUTIONS / TOUR) if path.is_file()]
    found = [*tours[:1], *sorted(source.glob(LESSONS)), *tours[1:], *sorted((source / SOLUTIONS).glob(LESSONS))]
    files = {path.relative_to(source).as_posix(): path for path in found}
    for name in TEST_FILES:  # a translation's folder shares the English one's (``notebooks/zh`` → ``notebooks``)
        if shared := next((path for path in (source / name, source.parent / name) if path.is_file()), None):
            files[name] = shared
    return files


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refuse_links(folder: Path, names: Iterable[str]) -> None:
    """:class:`CourseFolderError` if ``solutions/``, the manifest or a lesson in ``folder`` is a symbolic link or
    not what mcp-teach writes there (a folder, a plain file)."""
    for name in (SOLUTIONS, MANIFEST, *names):
        path = folder / name
        if path.is_symlink() or (path.exists() and not (path.is_dir() if name == SOLUTIONS else path.is_file())):
            kind = "a symbolic link" if path.is_symlink() else "not a folder" if name == SOLUTIONS else "not a file"
            raise CourseFolderError(
                f"{path} is {kind}: mcp-teach never follows a link or writes over anything but its own copies in "
                f"{folder}. Move it out of the folder and run again, or choose another folder"
            )


def write_file(path: Path, data: bytes) -> None:
    with open(os.open(path, _WRITE_FLAGS, 0o666), "wb") as file:
        file.write(data)


@dataclass
class Plan:
    """What copying the course into ``folder`` does; each list holds names as in :func:`course_files`."""

    folder: Path
    first_copy: bool
    new: list[str] = field(default_factory=list)  # not in the folder (or deleted there): copied
    changed: list[str] = field(default_factory=list)  # as copied, and this version differs: replaced on update
    edited: list[str] = field(default_factory=list)  # changed by the student: never overwritten
    current: list[str] = field(default_factory=list)  # the same as this version's


def read_manifest(folder: Path) -> dict[str, str] | None:
    """The hashes recorded by the last copy into ``folder``, or None if mcp-teach never copied there."""
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
        if not all(isinstance(name, str) and isinstance(sha, str) for name, sha in files.items()):
            raise TypeError("not every entry is a name and a hash")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise CourseFolderError(
            f"{path} is not a manifest mcp-teach can read ({error}): delete it to keep every lesson in "
            f"{folder} as yours and copy only missing ones, or choose another folder"
        ) from error
    return files


def plan_copy(source: Path, folder: Path) -> Plan:
    """Compare ``folder`` with the course in ``source``; refuses a folder it cannot or must not write into."""
    if folder.exists() and not folder.is_dir():
        raise CourseFolderError(f"{folder} is a file, not a folder: name a folder (it is created if missing)")
    parent = next((parent for parent in folder.parents if parent.exists()), None)
    if parent is not None and not parent.is_dir():
        raise CourseFolderError(f"{parent} is a file, so {folder} cannot be made: name another folder")
    files = course_files(source)
    refuse_links(folder, files)
    manifest = read_manifest(folder) if folder.is_dir() else None
    if manifest is None:
        if present := [name for name in files if (folder / name).exists()]:
            raise CourseFolderError(
                f"{folder} already holds {', '.join(present[:3])}{' …' if len(present) > 3 else ''} but no "
                f"{MANIFEST}, so mcp-teach cannot tell your edits from its copies: choose a new folder, or move "
                "those files away"
            )
        return Plan(folder, first_copy=True, new=list(files))
    plan = Plan(folder, first_copy=False)
    for name, path in files.items():
        found = digest(folder / name) if (folder / name).is_file() else None
        if found is None:
            plan.new.append(name)
        elif found == digest(path):
            plan.current.append(name)
        elif found != manifest.get(name):
            plan.edited.append(name)
        else:
            plan.changed.append(name)
    return plan


def carry_out(plan: Plan, source: Path, update: bool) -> list[str]:
    """Copy what ``plan`` allows (into a course folder only with ``update``); returns the names written."""
    written = plan.new + plan.changed if plan.first_copy or update else []
    if not written:
        return []
    manifest, files = read_manifest(plan.folder) or {}, course_files(source)
    try:
        (plan.folder / SOLUTIONS).mkdir(parents=True, exist_ok=True)
        try:
            for name in written:
                write_file(plan.folder / name, files[name].read_bytes())
                manifest[name] = digest(files[name])
        finally:  # what was copied is recorded even when a later file fails
            manifest.update({name: digest(files[name]) for name in plan.current})
            text = json.dumps({"mcp-teach": mcp_teach.__version__, "files": dict(sorted(manifest.items()))}, indent=1)
            write_file(plan.folder / MANIFEST, f"{text}\n".encode())
    except OSError as error:
        raise CourseFolderError(
            f"cannot write into {plan.folder}: {error.strerror or error} ({error.filename or plan.folder}): "
            "choose a folder you can write to, e.g. one in your home folder"
        ) from error
    return written


def describe(plan: Plan, written: list[str], update: bool) -> list[str]:
    """What happened, one line per kind of file, for the student."""
    version, folder = mcp_teach.__version__, plan.folder
    if plan.first_copy:
        lessons = sum(1 for name in written if "/" not in name and name.endswith(".ipynb"))
        return [
            f"copied the course of mcp-teach {version} into {folder}: {lessons} lessons and their solved copies "
            f"in {folder / SOLUTIONS}; `pytest` there runs them as the course's tests do (pip install nbval)"
        ]
    lines, new, changed = [], ", ".join(plan.new), ", ".join(plan.changed)
    if plan.new:
        lines.append(f"new: {new}" if update else f"new, not copied yet: {new}")
    if plan.changed:
        lines.append(f"updated: {changed}" if update else f"changed, not copied yet: {changed}")
    if plan.edited:
        lines.append(
            f"kept, edited by you: {', '.join(plan.edited)} (to get mcp-teach {version}'s version of one, rename "
            f"yours and run `mcp-teach lessons {folder} --update` again)"
        )
    if (plan.new or plan.changed) and not update:
        lines.append(
            f"mcp-teach {version} has them: `mcp-teach lessons {folder} --update` brings them and keeps your edits"
        )
    if not plan.new and not plan.changed:
        lines.append(
            f"nothing else to copy into {folder}"
            if plan.edited
            else f"{folder} is up to date with mcp-teach {version}: nothing to copy"
        )
    return lines


def copy_course(
    folder: Path,
    *,
    update: bool = False,
    say: Callable[[str], None] = print,
    sources: tuple[Path, ...] = SOURCES,
    language: str = "en",
) -> Plan:
    """Copy the course into a new ``folder``, or bring an earlier copy up to date with ``update``; say what it did.

    ``language``: ``"en"``, or a translation's folder beside the English lessons (``"zh"``: ``notebooks/zh``)."""
    source = course_source(edition(sources, language))
    plan = plan_copy(source, folder)
    for line in describe(plan, carry_out(plan, source, update), update):
        say(line)
    return plan


def default_folder(language: str) -> Path:
    """``./mcp-teach-course``, or ``./mcp-teach-course-zh`` for the Chinese edition: both can live side by side."""
    return DEFAULT_FOLDER if language == "en" else DEFAULT_FOLDER.with_name(f"{DEFAULT_FOLDER.name}-{language}")


def first_lesson(folder: Path) -> Path | None:
    """The lesson to open first: the lowest-numbered ``NN_*.ipynb`` in ``folder``."""
    return next(iter(sorted(folder.glob(LESSONS))), None)
