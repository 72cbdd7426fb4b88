"""mcp_teach.transports.stdio_loop: every line read gets its answer, even when stdin closes right after it."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import anyio
from support import HANG_TIMEOUT

from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports import stdio_loop
from mcp_teach.transports.stdio_loop import OversizedLine, read_lines, serve_stdio
from mcp_teach.wire.raw_requests import raw_request

SERVER = [sys.executable, "-m", "mcp_teach.serve", "--transport", "stdio"]


def add(id: int, a: int, b: int) -> bytes:
    request = raw_request(id, "tools/call", {"name": "calculator_add", "arguments": {"a": a, "b": b}})
    return json.dumps(request).encode() + b"\n"


def replies(stdout: bytes) -> dict[object, dict]:
    by_id = {}
    for line in stdout.splitlines():
        message = json.loads(line)
        by_id[message["id"]] = message
    return by_id


def test_read_lines_splits_strips_and_skips_oversized_lines():
    stream = io.BytesIO(b'{"a": 1}\r\n\n' + b"x" * 100 + b"\nlast line without newline")
    assert list(read_lines(stream.read, limit=50)) == [
        b'{"a": 1}',
        b"",
        OversizedLine(100),
        b"last line without newline",
    ]


def test_lines_split_across_reads_and_oversized_lines_longer_than_a_read():
    data = b"a" * 10 + b"\n" + b"b" * 300_000 + b"\n" + b"c" * 70_000 + b"\n" + b"d" * 200_000
    assert list(read_lines(io.BytesIO(data).read, limit=100_000)) == [
        b"a" * 10,
        OversizedLine(300_000),
        b"c" * 70_000,
        OversizedLine(200_000),
    ]


def test_a_line_of_exactly_the_limit_is_read():
    assert list(read_lines(io.BytesIO(b"x" * 50 + b"\n").read, limit=50)) == [b"x" * 50]


def test_every_request_is_answered_when_stdin_ends_right_after_it(run):
    stdin = io.BytesIO(b"".join(add(id, id, 1) for id in range(1, 31)))
    stdout = io.BytesIO()
    run(lambda: serve_stdio(build_calculator_server(), stdin=stdin, stdout=stdout))
    answers = replies(stdout.getvalue())
    assert sorted(answers) == list(range(1, 31))
    assert all(answers[id]["result"]["structuredContent"] == {"result": id + 1.0} for id in answers)


def test_piped_requests_file_is_answered_in_full(tmp_path):
    """``python -m mcp_teach.serve < requests.jsonl``: a regular file as stdin, every line answered."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(add(id, id, id) for id in range(1, 21)) + b"{oops\n\n" + add(99, 1, 1))
    with requests.open("rb") as stdin:
        done = subprocess.run(SERVER, stdin=stdin, capture_output=True, timeout=HANG_TIMEOUT)
    answers = replies(done.stdout)
    assert done.returncode == 0
    assert set(answers) == {*range(1, 21), 99, None}
    assert answers[None]["error"]["code"] == -32700
    assert answers[20]["result"]["structuredContent"] == {"result": 40.0}


def test_non_utf8_bytes_and_an_oversized_line_are_answered_and_the_server_goes_on():
    oversized = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * (5 << 20) + b'"}\n'
    stdin = b"\xff\xfe\xfd\n" + oversized + add(2, 2, 2)
    done = subprocess.run(SERVER, input=stdin, capture_output=True, timeout=HANG_TIMEOUT)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0
    assert [(line["id"], line.get("error", {}).get("code")) for line in lines] == [
        (None, -32700),
        (None, -32600),
        (2, None),
    ]
    assert "not UTF-8" in lines[0]["error"]["message"]
    assert "accepts at most 4,194,304 bytes" in lines[1]["error"]["message"]
    assert lines[2]["result"]["structuredContent"] == {"result": 4.0}


def test_a_misplaced_notification_is_logged_not_answered():
    call = raw_request(None, "tools/call", {"name": "calculator_add", "arguments": {"a": 1, "b": 2}})
    stdin = json.dumps(call).encode() + b"\n" + add(1, 1, 1)
    done = subprocess.run(SERVER, input=stdin, capture_output=True, timeout=HANG_TIMEOUT)
    assert list(replies(done.stdout)) == [1]
    assert b"ignored notification 'tools/call': a request needs an \"id\"" in done.stderr


def test_a_cancelled_request_is_not_waited_for_at_the_end(run, caplog):
    """The client gave up on request 1 (``notifications/cancelled``): stdin closing ends the server at once."""
    slow = build_calculator_server()

    @slow.tool
    async def wait_forever() -> None:
        await anyio.sleep_forever()

    call = raw_request(1, "tools/call", {"name": "wait_forever", "arguments": {}})
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    stdin = io.BytesIO(json.dumps(call).encode() + b"\n" + json.dumps(cancel).encode() + b"\n" + add(2, 1, 1))
    stdout = io.BytesIO()
    run(lambda: serve_stdio(slow, stdin=stdin, stdout=stdout))
    assert list(replies(stdout.getvalue())) == [2]
    assert "gave up waiting" not in caplog.text  # it would, after DRAIN_SECONDS, if request 1 were still pending


def test_a_request_unanswered_when_stdin_closes_is_given_up_after_the_drain_time(run, caplog, monkeypatch):
    """The server stops waiting after ``DRAIN_SECONDS``; the request still gets an answer, an error."""
    monkeypatch.setattr(stdio_loop, "DRAIN_SECONDS", 0.2)
    slow = build_calculator_server()

    @slow.tool
    async def wait_forever() -> None:
        await anyio.sleep_forever()

    call = raw_request(1, "tools/call", {"name": "wait_forever", "arguments": {}})
    stdin = io.BytesIO(json.dumps(call).encode() + b"\n" + add(2, 1, 1))
    stdout = io.BytesIO()
    run(lambda: serve_stdio(slow, stdin=stdin, stdout=stdout))
    answers = replies(stdout.getvalue())
    assert answers[2]["result"]["structuredContent"] == {"result": 2.0}
    assert answers[1]["error"]["message"] == "Connection closed"
    assert "gave up waiting for 1 unanswered request(s)" in caplog.text


#: Modules only an HTTP server uses; a stdio server is started for every connection and must not load them.
HTTP_ONLY_MODULES = {
    "mcp_teach.transports.class_mode",
    "mcp_teach.transports.class_token",
    "mcp_teach.transports.http_app",
    "mcp_teach.transports.http_guard",
    "mcp_teach.transports.sockets",
}
#: ``python -m mcp_teach.serve --transport stdio`` that lists, on exit, the mcp_teach modules it loaded.
LOADED_PROBE = """\
import atexit, runpy, sys
ours = lambda: sorted(name for name in sys.modules if name.partition(".")[0] == "mcp_teach")
atexit.register(lambda: print("loaded:", *ours(), file=sys.stderr))
sys.argv = ["mcp_teach.serve", "--transport", "stdio"]
runpy.run_module("mcp_teach.serve", run_name="__main__")
"""


def test_a_stdio_server_answers_without_loading_the_http_transports():
    probe = [sys.executable, "-c", LOADED_PROBE]
    done = subprocess.run(probe, input=add(1, 1, 2), capture_output=True, timeout=HANG_TIMEOUT)
    loaded = set(done.stderr.decode().rpartition("loaded:")[2].split())
    assert replies(done.stdout)[1]["result"]["structuredContent"] == {"result": 3.0}
    assert "mcp_teach.transports.stdio_loop" in loaded
    assert loaded.isdisjoint(HTTP_ONLY_MODULES)
