"""The stdio tap relays every line unchanged and records the exact bytes of all three pipes."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest

from mcp_teach.client import teaching_client
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.stdio_bytes import TappedLine, main, read_tap, tapped_stdio_transport

#: A stand-in server: echoes each stdin line upper-cased on stdout and logs its length on stderr.
ECHO = (
    "import sys\n"
    "for line in sys.stdin:\n"
    "    sys.stdout.write(line.upper()); sys.stdout.flush()\n"
    "    sys.stderr.write(f'got {len(line)} chars\\n'); sys.stderr.flush()\n"
)


def _run_tap(tmp_path, stdin: bytes, command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcp_teach.wire.stdio_bytes", str(tmp_path / "tap.jsonl"), "--", *command],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_relays_lines_unchanged_and_records_each_pipe(tmp_path):
    done = _run_tap(tmp_path, b'hello\n{"x": 1}\n', [sys.executable, "-c", ECHO])
    assert done.returncode == 0
    assert done.stdout == b'HELLO\n{"X": 1}\n'
    assert done.stderr == b"got 6 chars\ngot 9 chars\n"  # passed on to the tap's own stderr
    lines = read_tap(tmp_path / "tap.jsonl")
    by_stream = {s: [line.data for line in lines if line.stream == s] for s in ("stdin", "stdout", "stderr")}
    assert by_stream == {
        "stdin": [b"hello\n", b'{"x": 1}\n'],
        "stdout": [b"HELLO\n", b'{"X": 1}\n'],
        "stderr": [b"got 6 chars\n", b"got 9 chars\n"],
    }


def test_bytes_are_kept_exactly_including_crlf_and_non_ascii(tmp_path):
    payload = "grüße\r\n".encode() + b"\xff\xfe raw\n"
    _run_tap(tmp_path, payload, [sys.executable, "-c", ECHO])
    stdin = [line.data for line in read_tap(tmp_path / "tap.jsonl") if line.stream == "stdin"]
    assert b"".join(stdin) == payload


def test_a_last_line_without_newline_is_still_recorded(tmp_path):
    _run_tap(tmp_path, b"no newline", [sys.executable, "-c", ECHO])
    assert TappedLine("stdin", b"no newline") in read_tap(tmp_path / "tap.jsonl")


def test_exit_code_of_the_server_is_passed_on(tmp_path):
    done = _run_tap(tmp_path, b"", [sys.executable, "-c", "raise SystemExit(3)"])
    assert done.returncode == 3


def test_usage_error_without_separator(capsys):
    assert main(["only-a-file"]) == 2
    assert "usage:" in capsys.readouterr().err


def test_tap_file_format_is_json_lines_with_base64(tmp_path):
    _run_tap(tmp_path, b"a\n", [sys.executable, "-c", ECHO])
    rows = [json.loads(row) for row in (tmp_path / "tap.jsonl").read_text().splitlines()]
    assert {"stream": "stdin", "data": base64.b64encode(b"a\n").decode()} in rows


@pytest.mark.parametrize(
    ("line", "text"),
    [
        (TappedLine("stderr", b"[11/30/26 12:03:04] Error calling tool 'x'     \n"), "[time] Error calling tool 'x'"),
        (TappedLine("stdout", b'{"a":"[11/30/26 12:03:04]"}\n'), '{"a":"[11/30/26 12:03:04]"}'),
    ],
)
def test_text_hides_log_timestamps_on_stderr_only(line, text):
    assert line.text == text


def test_directions():
    assert [TappedLine(s, b"").direction for s in ("stdin", "stdout", "stderr")] == [
        "client → server",
        "server → client",
        "server → log",
    ]


def test_a_real_session_through_the_tap_matches_the_capture(tmp_path, run):
    tap_file = tmp_path / "pipes.jsonl"

    async def session() -> CaptureTransport:
        capture = CaptureTransport(tapped_stdio_transport(tap_file, log_file=tmp_path / "server.log"))
        async with teaching_client(capture, mode="legacy") as client:
            await client.list_tools()
            await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
        return capture

    capture = run(session)
    lines = read_tap(tap_file)
    json_lines = [line for line in lines if line.stream != "stderr"]
    assert [line.json() for line in json_lines] == [m.message for m in capture.capture]
    assert [line.stream for line in json_lines] == [
        "stdin" if m.direction == "client->server" else "stdout" for m in capture.capture
    ]
    assert all(line.data.endswith(b"\n") and line.data.count(b"\n") == 1 for line in json_lines)
    assert b" " not in json_lines[0].data  # compact JSON: no spaces after separators
    assert [line.text for line in lines if line.stream == "stderr"] == ["[time] Error calling tool 'calculator_divide'"]
    assert "Error calling tool" in (tmp_path / "server.log").read_text()  # stderr still reaches the log file
