"""Attacks around the class server rather than on it: a hub user who picks another's name, a course folder with
planted links, the offline model served off loopback, the conformance suite's dependencies, and another local
user squatting the class port while the service is down.

Each runs the real thing: the hub's token file on a real notes server, ``mcp-teach lessons`` and ``mcp-teach
model serve`` as processes, ``npm ci`` of the suite, a bind by another user.
"""

from __future__ import annotations

import asyncio
import configparser
import contextlib
import hashlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from support import HANG_TIMEOUT
from test_jupyterhub import HUB, NOTES, SECRET, call, load_drop_in, token_for

from mcp_teach.cli import build_parser
from mcp_teach.course import conformance, course_folder
from mcp_teach.course.course_folder import MANIFEST, CourseFolderError, copy_course

MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
#: How long a command that must refuse at once may run before the test calls it a server that started.
REFUSED_WITHIN = 30


# --- two JupyterHub users, one name -----------------------------------------------------------------------------


def test_a_hub_user_named_as_anothers_derived_name_gets_a_token_of_their_own(cli_server, tmp_path):
    """Mallory signs up with exactly the student name derived for ana.lopez@uni.edu: not ana's token, not her note."""
    environment = {"MCP_TEACH_NOTES_DIR": str(tmp_path), "MCP_TEACH_WRITE_HOURS": "00:00-24:00"}
    server = cli_server(NOTES, MCP_AUTH_TOKEN=SECRET, **environment)
    config, namespace = load_drop_in(MCP_TEACH_CLASS_SECRET=SECRET)
    ana = "ana.lopez@uni.edu"
    impostor = namespace["student_name"](ana)

    async def scenario() -> list[tuple[bool, str]]:
        return [
            await call(server.url, token_for(config, ana), "save_note", title="ana", content="VICTIM-SECRET"),
            await call(server.url, token_for(config, impostor), "read_note", note_id="ana"),
        ]

    (saved_error, _), (refused_error, refused) = asyncio.run(scenario())
    assert not saved_error
    assert refused_error and "VICTIM-SECRET" not in refused and "belongs to" in refused
    assert token_for(config, impostor) != token_for(config, ana)


def test_no_hub_name_is_kept_that_has_the_derived_shape():
    """A derived name chosen as a hub name is derived again, never kept; a plain name is kept as it is."""
    _, namespace = load_drop_in(MCP_TEACH_CLASS_SECRET=SECRET)
    student_name = namespace["student_name"]
    for hub_name in ("ana.lopez@uni.edu", "Ben", "x" * 40, "instructor", "-"):
        derived = student_name(hub_name)
        assert derived != hub_name and student_name(derived) != derived, hub_name
    assert student_name("ana") == "ana" and student_name("ben-2") == "ben-2"


# --- mcp-teach lessons and planted links ------------------------------------------------------------------------


def lessons(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MCP_TEACH, "lessons", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_lessons_update_never_writes_through_a_lesson_link(tmp_path: Path):
    """A lesson replaced by a link to another file, and the manifest recording that file's hash: refused, untouched."""
    folder, victim = tmp_path / "course", tmp_path / "victim.txt"
    copy_course(folder, say=lambda line: None)
    victim.write_text("the student's own file\n")
    lesson = folder / "00_setup.ipynb"
    lesson.unlink()
    lesson.symlink_to(victim)
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["files"]["00_setup.ipynb"] = hashlib.sha256(victim.read_bytes()).hexdigest()
    (folder / MANIFEST).write_text(json.dumps(manifest))

    done = lessons("course", "--update", cwd=tmp_path)
    assert victim.read_text() == "the student's own file\n" and lesson.is_symlink()
    assert done.returncode != 0 and "is a symbolic link" in done.stderr and "00_setup.ipynb" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_manifest_that_is_a_dangling_link_creates_nothing_at_its_target(tmp_path: Path):
    folder, target = tmp_path / "course", tmp_path / "elsewhere" / "planted.json"
    folder.mkdir()
    target.parent.mkdir()
    (folder / MANIFEST).symlink_to(target)

    done = lessons("course", cwd=tmp_path)
    assert not target.exists() and [path.name for path in folder.iterdir()] == [MANIFEST]
    assert done.returncode != 0 and "is a symbolic link" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="the system cannot open a file without following a link")
def test_a_lesson_link_planted_after_the_check_is_not_written_through(tmp_path: Path, monkeypatch):
    """The race made certain: the link appears between the folder's check and the write."""
    folder, victim = tmp_path / "course", tmp_path / "victim.txt"
    copy_course(folder, say=lambda line: None)
    victim.write_text("the student's own file\n")
    lesson = folder / "00_setup.ipynb"
    lesson.unlink()
    planned = course_folder.plan_copy

    def plan_then_plant(*args: Path) -> course_folder.Plan:
        plan = planned(*args)
        lesson.symlink_to(victim)
        return plan

    monkeypatch.setattr(course_folder, "plan_copy", plan_then_plant)
    with pytest.raises(CourseFolderError, match="cannot write into"):
        copy_course(folder, update=True, say=lambda line: None)
    assert victim.read_text() == "the student's own file\n"


# --- mcp-teach model serve off loopback ------------------------------------------------------------------------


def outward_address() -> str | None:
    """An address of this machine that is not loopback (the one its default route leaves from), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe, contextlib.suppress(OSError):
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent, the kernel only picks a route
        address = probe.getsockname()[0]
        return None if address.startswith("127.") or address == "0.0.0.0" else address
    return None


def test_model_serve_on_every_interface_needs_a_key_and_the_key_stops_a_rebinding_page(
    tmp_path: Path, clean_env, cli_server
):
    """On every interface any Host passes the guard: without a key a page that points its name at this machine's
    address would use the model, so the server refuses to start; with one, the page gets 401."""
    done = subprocess.run(
        [MCP_TEACH, "model", "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env(),
        timeout=REFUSED_WITHIN,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "reachable from other machines" in done.stderr and "--api-key" in done.stderr
    address = outward_address()
    if address is None:
        return  # this machine has no address but loopback: the refusal is what can be shown here
    key = "sk-model-key-0123456789"
    server = cli_server([MCP_TEACH, "model", "serve", "--host", "0.0.0.0", "--port", "0", "--api-key", key])
    port = server.url.rsplit(":", 1)[1].split("/")[0]
    page = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    body = {"model": "mcp-teach-offline", "messages": [{"role": "user", "content": "What is 1 + 2?"}]}
    answer = httpx2.post(f"http://{address}:{port}/v1/chat/completions", json=body, headers=page, timeout=30)
    assert answer.status_code == 401 and key not in answer.text


# --- the conformance suite's dependencies -----------------------------------------------------------------------


def test_the_conformance_suite_is_installed_at_exactly_the_locked_versions(node_folder: Path, run):
    """Every package the suite runs with is the version (and, npm ci checks, the hash) the lockfile names."""
    lock = json.loads(conformance.LOCKFILE.read_text())["packages"]
    entry = run(conformance.suite_entry, node_folder, HANG_TIMEOUT)
    folder = entry.parents[4]  # <folder>/node_modules/@modelcontextprotocol/conformance/dist/index.js
    for place, package in lock.items():
        if place:
            installed = json.loads((folder / place / "package.json").read_text())
            assert installed["version"] == package["version"], place
    assert lock[""]["dependencies"] == {"@modelcontextprotocol/conformance": conformance.SUITE.rsplit("@", 1)[1]}


# --- another local user on the class port ----------------------------------------------------------------------


def class_port() -> int:
    """The port the TLJH unit serves the class on."""
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read(HUB / "mcp-teach-class.service")
    return build_parser().parse_args(shlex.split(unit["Service"]["ExecStart"])[1:]).port


#: The user id of ``nobody``, the other local user here.
NOBODY = 65534
#: The lowest port any user may bind (Linux; 1024 unless lowered).
UNPRIVILEGED_PORTS = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")
BIND = "import socket, sys; socket.socket().bind(('127.0.0.1', int(sys.argv[1])))"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as another user")
def test_another_local_user_cannot_take_the_class_port_while_the_service_is_down():
    """Any user may bind a port from 1024 up while the class server is down and collect the tokens students send."""
    port, python = class_port(), shutil.which("python3", path=os.defpath)  # one user nobody may run
    if python is None:
        pytest.skip("no python3 in the system's own folders")
    lowest = UNPRIVILEGED_PORTS.read_text().strip() if UNPRIVILEGED_PORTS.is_file() else "1024"
    if int(lowest) < 1024:
        pytest.skip(f"this system lets any user bind from port {lowest} up (docs/INSTRUCTORS.md says to check this)")
    squatter = subprocess.run(
        [python, "-c", BIND, str(port)], user=NOBODY, capture_output=True, text=True, timeout=REFUSED_WITHIN
    )
    assert squatter.returncode != 0 and "PermissionError" in squatter.stderr, f"user nobody bound port {port}"
