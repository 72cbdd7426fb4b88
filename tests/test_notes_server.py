"""The notes server and its four gates over real streamable HTTP on 127.0.0.1, and a store that keeps to its folder.

Gate 1 answers 401 before any JSON-RPC; gate 2 lists each role its tools; gate 3 refuses by role, rate (a fake
clock) and write hours; gate 4 by owner. Both denial styles are checked on the wire. Titles and ids never make a
path outside the folder (hypothesis), symlinks are not followed, a failed write leaves the old note whole.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sys

import pytest
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import recorded_text

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l12_gates import TOKENS, UNKNOWN_TOKEN, NotesLab
from mcp_teach.servers import notes_store
from mcp_teach.servers.by_name import SERVER_NAMES
from mcp_teach.servers.gates import ManualClock, SlidingWindow, User
from mcp_teach.servers.notes import DEMO_USERS, build_notes_server
from mcp_teach.servers.notes_store import NoteNameError, NoteStore, check_note_id, default_notes_dir
from mcp_teach.servers.student_tokens import student_token
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport

ALL_FOUR = ["save_note", "list_notes", "read_note", "delete_note"]
PYTHON_M = [sys.executable, "-m", "mcp_teach.serve"]
#: Write tools at any hour for servers started from the CLI (their clock is the real one).
ANY_TIME = {"MCP_TEACH_WRITE_HOURS": "00:00-24:00"}
ESCAPES = [
    "../../etc/passwd",
    "..",
    "/etc/passwd",
    "C:\\Windows\\win.ini",
    "notes\\..\\..\\x",
    "a/b",
    "evil\x00.txt",
    "x" * 65,
    "CON",
    "nul.txt",
    ".hidden",
    "trailing.",
    "trailing ",
    "",
    "%2e%2e%2fetc",
    "caf\u00e9",
    "\u2025/etc",
]


def note_files(folder) -> list[str]:
    """The names in ``folder`` but the server's own file (its rate-limit counts), which starts with '.'."""
    return sorted(name for name in os.listdir(folder) if not name.startswith("."))


def call(run, lab: NotesLab, user: str, tool: str, **arguments):
    """``lab.call(...)`` in a fresh event loop (``run`` takes no keyword arguments)."""
    return run(functools.partial(lab.call, user, tool, **arguments))


def _wire_result(capture, method: str = "tools/call") -> dict:
    request = capture.requests(method)[-1]
    return capture.response_to(request).message["result"]


# Gate 1 ---------------------------------------------------------------------------------------------------------


def test_gate_1_refuses_missing_and_unknown_tokens_before_any_json_rpc(run, tmp_path):
    lab = NotesLab(folder=tmp_path)
    missing = run(lab.without_token)
    assert (missing.status, missing.www_authenticate, missing.body) == (401, "Bearer", "")
    unknown = run(lab.without_token, UNKNOWN_TOKEN)
    assert unknown.status == 401 and unknown.www_authenticate.startswith('Bearer error="invalid_token"')
    assert UNKNOWN_TOKEN not in unknown.body + unknown.www_authenticate


def test_gate_1_a_known_token_gets_its_user_and_role(run, tmp_path):
    lab = NotesLab(folder=tmp_path)
    step = call(run, lab, "bob", "save_note", title="Bob plan", content="meet at 9")
    assert (step.is_error, step.text) == (False, "Saved note 'bob plan' (owner bob, 9 characters).")
    assert json.loads((tmp_path / "bob plan.json").read_text()) == {
        "title": "Bob plan",
        "owner": "bob",
        "content": "meet at 9",
    }


def test_gate_1_a_token_that_names_no_role_runs_no_tool(run, tmp_path):
    verifier = StaticTokenVerifier({"oauth-like-token-without-role": {"client_id": "eve", "scopes": ["notes"]}})
    server = build_notes_server(auth=verifier, notes_dir=tmp_path)

    async def scenario():
        async with serve_http(server=server) as url, teaching_client(url, auth="oauth-like-token-without-role") as c:
            return [tool.name for tool in await c.list_tools()], await c.call_tool_mcp("list_notes", {})

    tools, result = run(scenario)
    assert tools == [] and result.is_error
    assert result.content[0].text.startswith("Denied by gate 1 (authentication): this request names no user")
    with pytest.raises(ValueError, match="known roles: admin, student, readonly"):
        build_notes_server(users={"some-token-0000": User("eve", "root")}, notes_dir=tmp_path)


# Gate 2 ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("user", "tools"), [("alice", ALL_FOUR), ("carol", ALL_FOUR), ("dave", ALL_FOUR[1:3])])
def test_gate_2_tools_list_shows_each_role_its_tools(run, tmp_path, user, tools):
    assert run(NotesLab(folder=tmp_path).tools, user) == tools


# Gate 3 ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("denials", "is_error"), [("tool-error", True), ("text", False)])
def test_gate_3_role_denial_in_both_styles_on_the_wire(run, tmp_path, denials, is_error):
    lab = NotesLab(folder=tmp_path, denials=denials)
    step = call(run, lab, "dave", "save_note", title="x", content="y")
    wire = _wire_result(step.capture)
    assert wire["isError"] is is_error
    assert wire["content"] == [
        {
            "type": "text",
            "text": "Denied by gate 3 (role): readonly dave may call list_notes, read_note; "
            "save_note needs the role admin or student.",
        }
    ]
    assert lab.files() == []


def test_gate_3_rate_limit_is_a_sliding_window_on_the_injected_clock(run, tmp_path):
    lab = NotesLab(folder=tmp_path, calls_per_minute=2)
    assert not call(run, lab, "alice", "list_notes").is_error
    lab.clock.advance(seconds=30)
    assert not call(run, lab, "alice", "list_notes").is_error
    refused = call(run, lab, "alice", "list_notes")
    assert refused.is_error and refused.text == (
        "Denied by gate 3 (rate limit): student alice made 2 tool calls in the last 60 seconds, "
        "the most allowed per minute. Try again in 30 seconds."
    )
    assert not call(run, lab, "bob", "list_notes").is_error  # per user
    lab.clock.advance(seconds=30)  # the first call has left the window, the second has not
    assert not call(run, lab, "alice", "list_notes").is_error
    assert call(run, lab, "alice", "list_notes").is_error


def test_sliding_window_counts_only_admitted_calls():
    clock = ManualClock()
    window = SlidingWindow(1, clock)
    assert window.admit("a") is None and window.admit("a") == 60
    clock.advance(seconds=59.5)
    assert window.admit("a") == pytest.approx(0.5)
    clock.advance(seconds=0.5)
    assert window.admit("a") is None


def test_gate_3_write_tools_only_within_the_write_hours(run, tmp_path):
    lab = NotesLab(folder=tmp_path, calls_per_minute=100)
    lab.clock.set("21:59")
    assert not call(run, lab, "bob", "save_note", title="late", content="ok").is_error
    lab.clock.set("22:00")
    refused = call(run, lab, "bob", "delete_note", note_id="late")
    assert refused.is_error and "allowed from 08:00 to 22:00 (server time); it is 22:00" in refused.text
    assert "list_notes, read_note" in refused.text and lab.files() == ["late.json"]
    assert not call(run, lab, "bob", "read_note", note_id="late").is_error  # reads at any hour
    lab.clock.set("07:59")
    assert call(run, lab, "carol", "save_note", title="early", content="no").is_error
    lab.clock.set("08:00")
    assert not call(run, lab, "bob", "delete_note", note_id="late").is_error


# Gate 4 ---------------------------------------------------------------------------------------------------------


def test_gate_4_students_touch_only_their_own_notes_admin_all_readonly_reads(run, tmp_path):
    lab = NotesLab(folder=tmp_path, calls_per_minute=100)
    call(run, lab, "bob", "save_note", title="bob-plan", content="bob's secret")
    call(run, lab, "alice", "save_note", title="alice-plan", content="alice's")
    read = call(run, lab, "alice", "read_note", note_id="BOB-PLAN")
    assert read.is_error and read.text.startswith(
        "Denied by gate 4 (ownership): student alice may only read their own notes; the note 'BOB-PLAN' belongs to bob."
    )
    assert "bob's secret" not in read.text
    overwrite = call(run, lab, "alice", "save_note", title="Bob-Plan", content="hijacked")
    assert overwrite.is_error and "may only change their own notes" in overwrite.text
    assert call(run, lab, "alice", "delete_note", note_id="bob-plan").is_error
    assert (
        call(run, lab, "alice", "list_notes").text
        == "Notes alice may read (1):\n- alice-plan: alice-plan (owner alice)"
    )
    assert "bob's secret" in call(run, lab, "dave", "read_note", note_id="bob-plan").text
    assert "(2)" in call(run, lab, "dave", "list_notes").text
    assert "bob's secret" in call(run, lab, "carol", "read_note", note_id="bob-plan").text
    edited = call(run, lab, "carol", "save_note", title="bob-plan", content="edited by admin")
    assert edited.text == "Saved note 'bob-plan' (owner bob, 15 characters)."  # the owner stays bob
    assert not call(run, lab, "carol", "delete_note", note_id="bob-plan").is_error
    assert lab.files() == ["alice-plan.json"]


def test_the_capture_shows_the_gates_but_never_a_token(run, tmp_path):
    lab = NotesLab(folder=tmp_path)
    step = call(run, lab, "alice", "read_note", note_id="nothing-here")
    assert step.capture.methods() == [
        "server/discover",
        "server/discover (result)",
        "tools/list",
        "tools/list (result)",
        "tools/call",
        "tools/call (result)",
    ]
    recorded = recorded_text(step.capture) + str(step)
    assert all(token not in recorded for token in TOKENS.values())
    assert {exchange.request_headers["authorization"] for exchange in step.capture.http} == {"Bearer [REDACTED]"}


# The folder -----------------------------------------------------------------------------------------------------


def test_escaping_titles_and_ids_are_refused_over_http_and_nothing_is_written(run, tmp_path):
    folder, outside = tmp_path / "notes", tmp_path / "outside.txt"
    outside.write_text("untouched")
    server = build_notes_server(users=DEMO_USERS, notes_dir=folder, calls_per_minute=1000, clock=ManualClock())

    async def scenario():
        async with serve_http(server=server) as url, teaching_client(url, auth=TOKENS["carol"]) as client:
            for bad in ESCAPES:
                for tool, arguments in (
                    ("save_note", {"title": bad, "content": "pwned"}),
                    ("read_note", {"note_id": bad}),
                ):
                    result = await client.call_tool_mcp(tool, arguments)
                    assert result.is_error and "a note id is 1 to 64 characters" in result.content[0].text, bad

    run(scenario)
    assert note_files(folder) == [] and outside.read_text() == "untouched"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes", "outside.txt"]


def test_symlinks_in_the_folder_are_never_followed(tmp_path):
    store = NoteStore(tmp_path / "notes")
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"title": "s", "owner": "bob", "content": "outside the folder"}))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "evil.json").symlink_to(secret)
    for action in (
        lambda: store.read("evil"),
        lambda: store.save("evil", "x", "alice"),
        lambda: store.delete("evil", may_change=lambda owner: True),
    ):
        with pytest.raises(NoteNameError, match="symbolic link"):
            action()
    assert store.scan().notes == [] and "outside the folder" in secret.read_text()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(st.text(), st.from_regex(r"(\.\.|/|\\|\x00|[A-Za-z]:|~)+.{0,20}", fullmatch=True)))
def test_no_title_or_id_ever_names_a_path_outside_the_folder(tmp_path, name):
    store = NoteStore(tmp_path / "notes")
    root = (tmp_path / "notes").resolve()
    try:
        path = store.path_for(name)
    except NoteNameError:
        return
    assert path.parent == root and path.name == check_note_id(name) + ".json"
    note = store.save(name, "content", "alice")
    assert store.read(note.note_id).content == "content"
    assert sorted(tmp_path.iterdir()) == [tmp_path / "notes"]
    store.delete(note.note_id, may_change=lambda owner: owner == "alice")


def test_a_failed_write_keeps_the_old_note_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    store = NoteStore(tmp_path)
    store.save("plan", "version 1", "alice")

    def crash(*args):
        raise OSError("disk pulled out mid-write")

    for step in ("replace", "fsync"):
        with monkeypatch.context() as patch:
            patch.setattr(notes_store.os, step, crash)
            with pytest.raises(OSError, match="mid-write"):
                store.save("plan", "version 2", "alice")
        assert store.read("plan").content == "version 1"
        assert sorted(path.name for path in tmp_path.iterdir()) == ["plan.json"]


def test_the_folder_comes_from_the_variable_or_a_per_user_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.delenv("MCP_TEACH_NOTES_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    if sys.platform != "win32":
        assert default_notes_dir() == tmp_path / "data" / "mcp-teach" / "notes"
    monkeypatch.setenv("MCP_TEACH_NOTES_DIR", str(tmp_path / "mine"))
    assert default_notes_dir() == tmp_path / "mine"
    NoteStore().save("first", "created on first use", "alice")
    assert (tmp_path / "mine" / "first.json").is_file()


# From a terminal ------------------------------------------------------------------------------------------------


def test_notes_is_in_the_catalogue():
    assert "notes" in SERVER_NAMES


async def _as(url: str, token: str) -> tuple[list[str], str]:
    async with teaching_client(CaptureTransport(url), auth=token) as client:
        tools = [tool.name for tool in await client.list_tools()]
        result = await client.call_tool_mcp("save_note", {"title": "from the cli", "content": "hello"})
    return tools, result.content[0].text


def test_served_from_the_cli_with_the_demo_users(run, cli_server, tmp_path):
    server = cli_server(
        [*PYTHON_M, "--server", "notes", "--transport", "streamable-http", "--port", "0"],
        MCP_TEACH_NOTES_DIR=str(tmp_path),
        **ANY_TIME,
    )
    tools, text = run(_as, server.url, TOKENS["dave"])
    assert tools == ["list_notes", "read_note"] and text.startswith("Denied by gate 3 (role)")
    tools, text = run(_as, server.url, TOKENS["alice"])
    assert tools == ALL_FOUR and text == "Saved note 'from the cli' (owner alice, 5 characters)."
    code, stdout, stderr = server.stop(signal.SIGTERM)
    assert code == 0 and stdout == "" and all(token not in stderr for token in DEMO_USERS)
    assert note_files(tmp_path) == ["from the cli.json"]


@pytest.mark.parametrize("given_as", ["variable", "--token"])
def test_served_from_the_cli_each_student_is_their_own_user(run, cli_server, tmp_path, given_as):
    secret = "class-token-n0tes-Zq81Kd7Y"  # made up for this test
    argv = [*PYTHON_M, "--server", "notes", "--transport", "streamable-http", "--port", "0"]
    if given_as == "variable":
        server = cli_server(argv, MCP_TEACH_NOTES_DIR=str(tmp_path), MCP_AUTH_TOKEN=secret, **ANY_TIME)
    else:
        server = cli_server([*argv, "--token", secret], MCP_TEACH_NOTES_DIR=str(tmp_path), **ANY_TIME)
    tools, text = run(_as, server.url, student_token(secret, "ana"))
    assert tools == ALL_FOUR and text == "Saved note 'from the cli' (owner ana, 5 characters)."
    tools, text = run(_as, server.url, student_token(secret, "ben"))
    assert text.startswith("Denied by gate 4 (ownership): student ben may only change their own notes")
    tools, text = run(_as, server.url, secret)  # the class secret is the instructor, an admin
    assert text == "Saved note 'from the cli' (owner ana, 5 characters)."
    with pytest.raises(Exception, match=r"401|class secret"):
        run(_as, server.url, TOKENS["carol"])  # the demo table is off when a class secret is set
    code, _, stderr = server.stop(signal.SIGTERM)
    assert code == 0 and secret not in stderr
