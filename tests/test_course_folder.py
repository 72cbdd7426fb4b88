"""mcp-teach lessons: the course copied into a student's folder, re-copied, updated without losing an edit."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_teach.course.course_folder import (
    MANIFEST,
    SOLUTIONS,
    CourseFolderError,
    copy_course,
    course_files,
    course_source,
)

REPOSITORY_LESSONS = Path(__file__).resolve().parent.parent / "notebooks"
MCP_TEACH = [sys.executable, "-c", "import sys; from mcp_teach.cli import main; sys.exit(main())"]


def mcp_teach(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCP_TEACH, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.fixture
def release(tmp_path) -> Path:
    """A course to copy from: two real lessons and their solved copies, which a test may change like a release."""
    source = tmp_path / "release"
    (source / "solutions").mkdir(parents=True)
    for name in ("00_setup.ipynb", "01_handshake.ipynb"):
        shutil.copyfile(REPOSITORY_LESSONS / name, source / name)
        shutil.copyfile(REPOSITORY_LESSONS / "solutions" / name, source / "solutions" / name)
    return source


def copy(folder: Path, release: Path, update: bool = False) -> list[str]:
    said: list[str] = []
    copy_course(folder, update=update, say=said.append, sources=(release,))
    return said


def test_the_course_is_every_numbered_lesson_and_its_solved_copy():
    files = course_files(course_source())
    lessons = sorted(path.name for path in REPOSITORY_LESSONS.glob("[0-9][0-9]_*.ipynb"))
    assert [name for name in files if "/" not in name] == ["tour.ipynb", *lessons, "conftest.py", "nbval_sanitize.cfg"]
    assert [name for name in files if "/" in name] == [f"solutions/{name}" for name in ["tour.ipynb", *lessons]]


def test_lessons_copies_the_course_and_a_second_run_has_nothing_to_do(tmp_path):
    first = mcp_teach("lessons", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    folder = tmp_path / "mcp-teach-course"
    copied = sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.name != MANIFEST)
    copied.remove(SOLUTIONS)
    assert copied == sorted(course_files(course_source()))
    assert (folder / "03_tools_call.ipynb").read_bytes() == (REPOSITORY_LESSONS / "03_tools_call.ipynb").read_bytes()
    assert "open them with: mcp-teach lab mcp-teach-course" in first.stdout
    manifest = json.loads((folder / MANIFEST).read_text())
    assert set(manifest["files"]) == set(copied)

    again = mcp_teach("lessons", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "mcp-teach-course is up to date with mcp-teach 0.1.0: nothing to copy\n"


def test_lessons_lang_zh_copies_the_chinese_edition_with_the_nbval_settings(tmp_path):
    result = mcp_teach("lessons", "--lang", "zh", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    folder, chinese = tmp_path / "mcp-teach-course-zh", REPOSITORY_LESSONS / "zh"
    assert (folder / "03_tools_call.ipynb").read_bytes() == (chinese / "03_tools_call.ipynb").read_bytes()
    assert (folder / "solutions" / "tour.ipynb").read_bytes() == (chinese / "solutions" / "tour.ipynb").read_bytes()
    assert (folder / "conftest.py").read_bytes() == (REPOSITORY_LESSONS / "conftest.py").read_bytes()
    assert "open them with: mcp-teach lab mcp-teach-course-zh" in result.stdout


def test_without_update_a_changed_lesson_is_named_not_copied(tmp_path, release):
    folder = tmp_path / "course"
    copy(folder, release)
    (release / "01_handshake.ipynb").write_text('{"cells": []}')
    said = copy(folder, release)
    assert said[0] == "changed, not copied yet: 01_handshake.ipynb"
    assert "--update` brings them" in said[1]
    assert (folder / "01_handshake.ipynb").read_bytes() == (REPOSITORY_LESSONS / "01_handshake.ipynb").read_bytes()


def test_update_keeps_and_names_an_edited_lesson_and_brings_new_and_changed_ones(tmp_path, release):
    folder = tmp_path / "course"
    copy(folder, release)
    edited = folder / "00_setup.ipynb"
    edited.write_text(edited.read_text().replace("Setup", "My setup"))
    mine = edited.read_bytes()
    for name in ("00_setup.ipynb", "01_handshake.ipynb"):  # the release changes both lessons
        (release / name).write_text('{"cells": [], "changed": true}')
    (release / "02_tools_list.ipynb").write_bytes((REPOSITORY_LESSONS / "02_tools_list.ipynb").read_bytes())
    shutil.copyfile(
        REPOSITORY_LESSONS / "solutions" / "02_tools_list.ipynb", release / "solutions" / "02_tools_list.ipynb"
    )

    said = copy(folder, release, update=True)
    assert said[0] == "new: 02_tools_list.ipynb, solutions/02_tools_list.ipynb"
    assert said[1] == "updated: 01_handshake.ipynb"
    assert said[2].startswith("kept, edited by you: 00_setup.ipynb (")
    assert edited.read_bytes() == mine
    assert (folder / "01_handshake.ipynb").read_bytes() == (release / "01_handshake.ipynb").read_bytes()
    assert (folder / "02_tools_list.ipynb").is_file() and (folder / "solutions" / "02_tools_list.ipynb").is_file()

    assert copy(folder, release, update=True) == [said[2], f"nothing else to copy into {folder}"]  # still kept
    edited.rename(folder / "00_setup (mine).ipynb")  # what the message says to do to get the new version
    assert copy(folder, release, update=True) == ["new: 00_setup.ipynb"]
    assert (folder / "00_setup.ipynb").read_bytes() == (release / "00_setup.ipynb").read_bytes()


def test_a_deleted_lesson_comes_back_with_update(tmp_path, release):
    folder = tmp_path / "course"
    copy(folder, release)
    (folder / "solutions" / "01_handshake.ipynb").unlink()
    assert copy(folder, release)[0] == "new, not copied yet: solutions/01_handshake.ipynb"
    assert copy(folder, release, update=True) == ["new: solutions/01_handshake.ipynb"]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda path: path.write_text("x"), "is a file, not a folder"),
        (lambda path: path.parent.joinpath("blocker").write_text("x"), "is a file, so"),
        (lambda path: (path.mkdir(), path.joinpath("00_setup.ipynb").write_text("{}")), "but no .mcp-teach-course"),
        (lambda path: (path.mkdir(), path.joinpath(MANIFEST).write_text("[1]")), "is not a manifest mcp-teach"),
        (lambda path: (path.mkdir(), path.joinpath("solutions").write_text("x")), "solutions is not a folder: mcp"),
        (lambda path: (path.mkdir(), path.joinpath("00_setup.ipynb").mkdir()), "00_setup.ipynb is not a file: mcp"),
    ],
    ids=[
        "folder-is-a-file",
        "parent-is-a-file",
        "lessons-without-manifest",
        "broken-manifest",
        "not-a-folder",
        "not-a-file",
    ],
)
def test_a_folder_it_cannot_use_is_refused_with_the_fix(tmp_path, release, make, expected):
    folder = tmp_path / "course"
    make(folder)
    target = tmp_path / "blocker" / "course" if expected == "is a file, so" else folder
    with pytest.raises(CourseFolderError, match=expected):
        copy(target, release)


def test_the_command_reports_a_refusal_in_one_line(tmp_path):
    (tmp_path / "taken").write_text("notes")
    result = mcp_teach("lessons", "taken", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr == "mcp-teach lessons: taken is a file, not a folder: name a folder (it is created if missing)\n"
    )


def test_an_install_without_lessons_says_how_to_get_them(tmp_path):
    with pytest.raises(CourseFolderError, match=r"carries no lessons .* reinstall it"):
        copy_course(tmp_path / "course", sources=(tmp_path / "nothing",))
    assert not (tmp_path / "course").exists()
