"""mcp_teach.private_files: logs and recordings are the owner's alone, and never written through a planted path."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcp_teach.private_files import make_private, open_private, rotate_if_over


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_created_for_its_owner_only(tmp_path: Path) -> None:
    with open_private(tmp_path / "tap.jsonl", "a", encoding="utf-8") as out:
        out.write("one\n")
    assert mode(tmp_path / "tap.jsonl") == 0o600


def test_append_keeps_and_rewrite_replaces_what_is_there(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_text("old\n")
    path.chmod(0o644)
    with open_private(path) as out:
        out.write(b"new\n")
    assert path.read_text() == "old\nnew\n" and mode(path) == 0o600  # an existing file is made private too
    with open_private(path, "w", encoding="utf-8") as out:
        out.write("only\n")
    assert path.read_text() == "only\n"


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="no O_NOFOLLOW on this system")
def test_a_planted_symbolic_link_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    target.chmod(0o644)
    (tmp_path / "log").symlink_to(target)
    with pytest.raises(OSError):
        make_private(tmp_path / "log")
    assert target.read_text() == "keep\n" and mode(target) == 0o644


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_at_once_instead_of_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "log")
    with pytest.raises(OSError):
        make_private(tmp_path / "log")


def test_a_file_every_run_appends_to_is_moved_aside_once_past_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "recording.jsonl"
    assert rotate_if_over(path, 10) == path and not path.exists()  # nothing there yet: nothing to move
    path.write_bytes(b"x" * 10)
    assert rotate_if_over(path, 10) == path and path.stat().st_size == 10  # at the limit: kept
    path.write_bytes(b"y" * 11)
    (tmp_path / "recording.jsonl.1").write_bytes(b"older")
    rotate_if_over(path, 10)
    assert not path.exists() and (tmp_path / "recording.jsonl.1").read_bytes() == b"y" * 11  # the older one replaced
