"""``mcp-teach tap``: clients through it lose and change nothing; recordings open as Captures and export to HAR 1.2."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import jsonschema
import psutil
import pytest
import uvicorn
from fastmcp.client.transports import StdioTransport
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from support import HANG_TIMEOUT

from mcp_teach import cli
from mcp_teach.client import teaching_client
from mcp_teach.transports.in_process import _InProcessServer, serve_http, stop_in_process_server
from mcp_teach.transports.sockets import bind_socket
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.har import to_har, write_har
from mcp_teach.wire.host_tap_http import parse_listen
from mcp_teach.wire.host_tap_recording import load_tap
from mcp_teach.wire.host_tap_writer import RECORDING_LIMIT
from mcp_teach.wire.redact import redact_url

PYTHON = sys.executable
MCP_TEACH = str(Path(PYTHON).with_name("mcp-teach"))
TOKEN = "class-token-for-the-tap-test-7f3a"  # a test token
#: A stand-in server: echoes each stdin line unchanged on stdout, logs its length on stderr, and keeps what it
#: received in the file named by its first argument.
ECHO = (
    "import sys\n"
    "received = open(sys.argv[1], 'wb')\n"
    "for line in sys.stdin.buffer:\n"
    "    received.write(line); received.flush()\n"
    "    sys.stdout.buffer.write(line); sys.stdout.flush()\n"
    "    sys.stderr.write(f'got {len(line)} bytes\\n'); sys.stderr.flush()\n"
)


def tap(out: Path, *command: str) -> list[str]:
    return [MCP_TEACH, "tap", "--out", str(out), "--", *command]


# --- stdio -------------------------------------------------------------------------------------------------------


def test_every_byte_arrives_unchanged_and_every_line_is_recorded(tmp_path):
    not_json = "grüße\r\n".encode() + b"\xff\xfe raw\n"  # text with CRLF, then bytes that are not UTF-8
    sent = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n' + not_json + b'[{"a": 1}]\n'
    received, out = tmp_path / "received", tmp_path / "tap.jsonl"
    done = subprocess.run(
        tap(out, PYTHON, "-c", ECHO, str(received)), input=sent, capture_output=True, timeout=HANG_TIMEOUT
    )
    assert done.returncode == 0
    assert received.read_bytes() == sent  # the server received exactly what the client sent
    assert done.stdout == sent  # and the client exactly what the server wrote (its echo)
    assert done.stderr == b"got 41 bytes\ngot 9 bytes\ngot 7 bytes\ngot 11 bytes\n"  # stderr passed through
    records = [json.loads(row) for row in out.read_text().splitlines()]
    assert records[0]["type"] == "tap" and records[0]["transport"] == "stdio" and records[-1]["type"] == "exit"
    for direction in ("client->server", "server->client"):
        lines = [r for r in records if r.get("direction") == direction]
        assert [r["type"] for r in lines] == ["jsonrpc", "raw", "raw", "jsonrpc"]
        assert lines[0]["message"] == {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert lines[3]["message"] == [{"a": 1}]
        assert "".join(r["text"] for r in lines[1:3]).encode("utf-8", "surrogateescape") == not_json
    assert all(r["time"].endswith("+00:00") and isinstance(r["at"], float) for r in records)
    capture = load_tap(out)
    assert [m.direction for m in capture] == ["client->server", "client->server", "server->client", "server->client"]
    assert capture.exit_code == 0 and capture.log == [
        "got 41 bytes\n",
        "got 9 bytes\n",
        "got 7 bytes\n",
        "got 11 bytes\n",
    ]
    assert len(capture.raw) == 4


def test_a_recording_every_run_appends_to_is_moved_aside_past_its_limit(tmp_path):
    out = tmp_path / "tap.jsonl"
    with out.open("wb") as grown:  # what many earlier sessions appended (sparse: no 16 MiB written)
        grown.truncate(RECORDING_LIMIT + 1)
    done = subprocess.run(tap(out, PYTHON, "-c", ECHO, str(tmp_path / "received")), input=b"{}\n", capture_output=True)
    assert done.returncode == 0
    assert (tmp_path / "tap.jsonl.1").stat().st_size == RECORDING_LIMIT + 1
    assert load_tap(out).exit_code == 0 and out.stat().st_size < 4096  # this session only


def test_a_last_line_without_newline_is_relayed_and_recorded(tmp_path):
    received, out = tmp_path / "received", tmp_path / "tap.jsonl"
    done = subprocess.run(tap(out, PYTHON, "-c", ECHO, str(received)), input=b"no newline", capture_output=True)
    assert received.read_bytes() == done.stdout == b"no newline"
    assert [record["text"] for record in load_tap(out).raw] == ["no newline", "no newline"]


def test_the_mcp_sdk_client_through_the_tap_sees_what_the_server_sent(tmp_path, run):
    inner, out = tmp_path / "inner.jsonl", tmp_path / "tap.jsonl"
    argv = tap(out, *tap(inner, PYTHON, "-m", "mcp_teach.serve"))  # the inner tap records what the server saw

    async def session() -> str:
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                result = await client.call_tool("calculator_multiply", {"a": 6, "b": 7})
        return result.content[0].text

    assert run(session) == "42.0"
    recorded, at_server = load_tap(out), load_tap(inner)
    assert [(m.direction, m.message) for m in recorded] == [(m.direction, m.message) for m in at_server]
    assert [m.method for m in recorded][:3] == ["initialize", None, "notifications/initialized"]


def test_load_tap_equals_what_a_capture_transport_saw_on_the_client_side(tmp_path, run):
    out = tmp_path / "tap.jsonl"
    argv = tap(out, PYTHON, "-m", "mcp_teach.serve")
    transport = StdioTransport(argv[0], argv[1:], log_file=tmp_path / "server.log", keep_alive=False)

    async def session() -> CaptureTransport:
        capture = CaptureTransport(transport)
        async with teaching_client(capture, mode="legacy") as client:
            await client.list_tools()
            await client.call_tool("calculator_divide", {"a": 1, "b": 0}, raise_on_error=False)
        return capture

    seen = run(session).capture
    recorded = load_tap(out)
    assert [(m.direction, m.message) for m in recorded] == [(m.direction, m.message) for m in seen]
    assert recorded.exit_code == 0 and recorded.header["command"] == argv[5:]


def test_the_tap_exits_with_the_servers_exit_code(tmp_path):
    done = subprocess.run(tap(tmp_path / "t.jsonl", PYTHON, "-c", "raise SystemExit(3)"), timeout=HANG_TIMEOUT)
    assert done.returncode == 3
    assert load_tap(tmp_path / "t.jsonl").exit_code == 3


def test_a_command_that_cannot_start_is_reported(tmp_path):
    done = subprocess.run(tap(tmp_path / "t.jsonl", "/no/such/server"), capture_output=True, timeout=HANG_TIMEOUT)
    assert done.returncode == 127 and b"cannot start '/no/such/server'" in done.stderr


#: A server that says it is ready (on stderr, which the tap passes through), then neither reads nor ends.
SLEEPER = "import sys, time; sys.stderr.write('ready\\n'); sys.stderr.flush(); time.sleep(60)"


def _start_tap(tmp_path: Path) -> tuple[subprocess.Popen, psutil.Process]:
    tapping = subprocess.Popen(
        tap(tmp_path / "t.jsonl", PYTHON, "-c", SLEEPER), stdin=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert tapping.stderr.readline() == b"ready\n"
    (server,) = psutil.Process(tapping.pid).children()
    return tapping, server


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_reaches_the_server_and_nothing_is_left_behind(tmp_path, signum):
    tapping, server = _start_tap(tmp_path)
    tapping.send_signal(signum)
    assert tapping.wait(HANG_TIMEOUT) == 128 + signum  # the server died of it, as a shell reports
    assert not server.is_running()
    tapping.stdin.close()
    tapping.stderr.close()


def test_a_server_that_ignores_the_end_of_its_input_is_stopped(tmp_path):
    tapping, server = _start_tap(tmp_path)
    tapping.stdin.close()  # the client is gone
    assert tapping.wait(HANG_TIMEOUT) == 128 + signal.SIGTERM
    assert not server.is_running()
    tapping.stderr.close()


def test_the_stdio_tap_imports_no_mcp_or_http_library(tmp_path):
    code = (
        "import sys\nfrom mcp_teach.cli import main\n"
        f"code = main(['tap', '--out', {str(tmp_path / 't.jsonl')!r}, '--', {PYTHON!r}, '-c', 'pass'])\n"
        "libraries = ('mcp', 'fastmcp', 'httpx2', 'uvicorn', 'starlette', 'pydantic')\n"
        "heavy = sorted(m for m in libraries if m in sys.modules)\n"
        "print(code, heavy)\n"
    )
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=HANG_TIMEOUT, check=True)
    assert done.stdout.strip() == "0 []"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tap", "--out", "f"], "give the server command after '--'"),
        (["tap", "--out", "f", "--listen", "127.0.0.1:0"], "needs both --listen and --upstream"),
        (["tap", "--out", "f", "--upstream", "http://x/mcp", "--", "cmd"], "needs both --listen and --upstream"),
        (["tap", "--out", "f", "--listen", "nowhere", "--upstream", "http://x/mcp"], "--listen wants HOST:PORT"),
        (["tap", "--out", "f", "--listen", "127.0.0.1:0", "--upstream", "ftp://x"], "--upstream wants an http"),
        (["tap", "--", "cmd"], "--out"),
    ],
)
def test_usage_errors(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_tap_is_listed_in_the_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "tap" in capsys.readouterr().out


# --- HTTP --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("transport", "mode"), [("streamable-http", "auto"), ("streamable-http", "legacy"), ("sse", "legacy")]
)
def test_a_client_through_the_http_tap(tmp_path, run, cli_server, transport, mode):
    out = tmp_path / "http.jsonl"

    async def session() -> tuple[CaptureTransport, int]:
        async with serve_http(transport, token=TOKEN) as upstream:
            proxy = cli_server([MCP_TEACH, "tap", "--out", str(out), "--listen", "127.0.0.1:0", "--upstream", upstream])
            url = await anyio.to_thread.run_sync(lambda: proxy.url)
            capture = CaptureTransport(url)
            async with teaching_client(capture, mode=mode, auth=TOKEN) as client:
                await client.list_tools()
                assert (await client.call_tool("calculator_add", {"a": 2, "b": 3})).data == 5
            code, _, _ = await anyio.to_thread.run_sync(proxy.stop)
        return capture, code

    client_side, code = run(session)
    assert code == 0
    text = out.read_text()
    assert TOKEN not in text and "Bearer [REDACTED]" in text  # forwarded (the server accepted it), not recorded
    recorded = load_tap(out)
    assert recorded.transport == "http"
    assert [(m.direction, m.message) for m in recorded] == [(m.direction, m.message) for m in client_side.capture]
    assert [(e.method, e.target, e.status) for e in recorded.http] == [
        (e.method, e.target, e.status) for e in client_side.capture.http
    ]
    assert all(e.request_headers["authorization"] == "Bearer [REDACTED]" for e in recorded.http)
    streams = [e for e in recorded.http if (e.content_type or "").startswith("text/event-stream")]
    if mode == "legacy":  # the 2025-11-25 era answers a POST with an event stream; SSE has its GET stream
        assert any(e.events for e in streams)  # SSE responses recorded as events, as they arrived
    har = to_har(recorded)
    jsonschema.validate(har, HAR_SCHEMA)
    assert [entry["request"]["url"] for entry in har["log"]["entries"]] == [e.url for e in recorded.http]
    assert TOKEN not in json.dumps(har)


def _slow_events_app(release: anyio.Event):
    """An upstream whose event stream sends one event, then waits for ``release`` before the second."""

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/event-stream"), (b"set-cookie", b"session=secret-cookie")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b'event: message\ndata: {"n": 1}\n\n', "more_body": True})
        await release.wait()
        await send({"type": "http.response.body", "body": b'data: {"n": 2}\r\n\r\n', "more_body": False})

    return app


def test_sse_events_are_streamed_through_as_they_arrive(tmp_path, run, cli_server):
    out = tmp_path / "sse.jsonl"

    async def session() -> list[str]:
        release = anyio.Event()
        sock = bind_socket()
        upstream = _InProcessServer(uvicorn.Config(_slow_events_app(release), log_level="warning", lifespan="off"))
        task = asyncio.create_task(upstream.serve(sockets=[sock]))
        try:
            while not upstream.started:
                await asyncio.sleep(0.01)
            target = f"http://127.0.0.1:{sock.getsockname()[1]}/events?token=abc123&x=1"
            proxy = cli_server([MCP_TEACH, "tap", "--out", str(out), "--listen", "127.0.0.1:0", "--upstream", target])
            url = await anyio.to_thread.run_sync(lambda: proxy.url)
            received = []
            async with (
                httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http,
                http.stream("GET", url + "?token=abc123&x=1", headers={"cookie": "a=b"}) as response,
            ):
                async for chunk in response.aiter_text():
                    received.append(chunk)
                    release.set()  # the first event came through while the upstream was still holding the second
            await anyio.to_thread.run_sync(proxy.stop)
            return received
        finally:
            await stop_in_process_server(upstream, task, sock)

    received = run(session)
    assert received[0] == 'event: message\ndata: {"n": 1}\n\n' and "".join(received).endswith('data: {"n": 2}\r\n\r\n')
    recorded = load_tap(out)
    (exchange,) = recorded.http
    assert [m.message for m in recorded] == [{"n": 1}, {"n": 2}]
    assert [(e.event, e.data) for e in exchange.events] == [("message", '{"n": 1}'), ("message", '{"n": 2}')]
    assert exchange.target == "/events?token=[REDACTED]&x=1"
    assert (
        exchange.request_headers["cookie"] == "[REDACTED]" and exchange.response_headers["set-cookie"] == "[REDACTED]"
    )
    text = out.read_text()
    assert "abc123" not in text and "secret-cookie" not in text
    har_path = write_har(recorded, tmp_path / "sse.har")
    har = json.loads(har_path.read_text())
    jsonschema.validate(har, HAR_SCHEMA)
    (entry,) = har["log"]["entries"]
    assert entry["request"]["queryString"] == [{"name": "token", "value": "[REDACTED]"}, {"name": "x", "value": "1"}]
    assert entry["response"]["content"]["mimeType"] == "text/event-stream"
    assert entry["time"] == pytest.approx(sum(entry["timings"][k] for k in ("send", "wait", "receive")))


def test_an_unreachable_upstream_is_a_502(tmp_path, run, cli_server):
    out = tmp_path / "down.jsonl"
    sock = bind_socket()  # bound, never listening: connections are refused
    port = sock.getsockname()[1]

    async def attempt() -> httpx2.Response:
        proxy = cli_server(
            [
                MCP_TEACH,
                "tap",
                "--out",
                str(out),
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                f"http://127.0.0.1:{port}/mcp",
            ]
        )
        url = await anyio.to_thread.run_sync(lambda: proxy.url)
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        await anyio.to_thread.run_sync(proxy.stop)
        return response

    try:
        response = run(attempt)
    finally:
        sock.close()
    assert response.status_code == 502 and "could not be reached" in response.text
    recorded = load_tap(out)
    assert recorded.http[0].status is None and recorded.http[0].error.startswith("upstream:")
    jsonschema.validate(to_har(recorded), HAR_SCHEMA)


def test_har_of_a_client_side_capture(run):
    async def session() -> CaptureTransport:
        async with serve_http("streamable-http") as url:
            capture = CaptureTransport(url)
            async with teaching_client(capture) as client:
                await client.list_tools()
        return capture

    har = to_har(run(session).capture, base_url="http://127.0.0.1:8000")
    jsonschema.validate(har, HAR_SCHEMA)
    assert har["log"]["entries"][0]["request"]["url"] == "http://127.0.0.1:8000/mcp"


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        (
            "http://u:pw@host:1/mcp?api_key=sk-x&session_id=a%20b",
            "http://[REDACTED]@host:1/mcp?api_key=[REDACTED]&session_id=a%20b",
        ),
        ("/messages/?session_id=abc", "/messages/?session_id=abc"),
        ("/mcp?access_token=t0k&Token=x", "/mcp?access_token=[REDACTED]&Token=[REDACTED]"),
        ("/mcp", "/mcp"),
    ],
)
def test_redact_url(url, redacted):
    assert redact_url(url) == redacted


def test_parse_listen():
    assert parse_listen("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_listen("[::1]:8010") == ("::1", 8010)
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_listen("127.0.0.1:99999")


# --- HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/): the required fields and their types ---------------

_PAIRS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["name", "value"],
        "properties": {"name": {"type": "string"}, "value": {"type": "string"}, "comment": {"type": "string"}},
    },
}
_COOKIES = {"type": "array", "items": {"type": "object", "required": ["name", "value"]}}
_TIMING = {"type": "number", "minimum": -1}
HAR_SCHEMA = {
    "type": "object",
    "required": ["log"],
    "properties": {
        "log": {
            "type": "object",
            "required": ["version", "creator", "entries"],
            "properties": {
                "version": {"type": "string", "const": "1.2"},
                "creator": {
                    "type": "object",
                    "required": ["name", "version"],
                    "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
                },
                "pages": {"type": "array"},
                "comment": {"type": "string"},
                "entries": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["startedDateTime", "time", "request", "response", "cache", "timings"],
                        "properties": {
                            "pageref": {"type": "string"},
                            "startedDateTime": {
                                "type": "string",
                                "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$",
                            },
                            "time": {"type": "number", "minimum": 0},
                            "request": {
                                "type": "object",
                                "required": [
                                    "method",
                                    "url",
                                    "httpVersion",
                                    "cookies",
                                    "headers",
                                    "queryString",
                                    "headersSize",
                                    "bodySize",
                                ],
                                "properties": {
                                    "method": {"type": "string"},
                                    "url": {"type": "string", "pattern": "^https?://"},
                                    "httpVersion": {"type": "string"},
                                    "cookies": _COOKIES,
                                    "headers": _PAIRS,
                                    "queryString": _PAIRS,
                                    "postData": {
                                        "type": "object",
                                        "required": ["mimeType"],
                                        "properties": {
                                            "mimeType": {"type": "string"},
                                            "text": {"type": "string"},
                                            "params": {"type": "array"},
                                        },
                                    },
                                    "headersSize": {"type": "integer", "minimum": -1},
                                    "bodySize": {"type": "integer", "minimum": -1},
                                },
                            },
                            "response": {
                                "type": "object",
                                "required": [
                                    "status",
                                    "statusText",
                                    "httpVersion",
                                    "cookies",
                                    "headers",
                                    "content",
                                    "redirectURL",
                                    "headersSize",
                                    "bodySize",
                                ],
                                "properties": {
                                    "status": {"type": "integer"},
                                    "statusText": {"type": "string"},
                                    "httpVersion": {"type": "string"},
                                    "cookies": _COOKIES,
                                    "headers": _PAIRS,
                                    "content": {
                                        "type": "object",
                                        "required": ["size", "mimeType"],
                                        "properties": {
                                            "size": {"type": "integer"},
                                            "compression": {"type": "integer"},
                                            "mimeType": {"type": "string"},
                                            "text": {"type": "string"},
                                            "encoding": {"type": "string"},
                                        },
                                    },
                                    "redirectURL": {"type": "string"},
                                    "headersSize": {"type": "integer", "minimum": -1},
                                    "bodySize": {"type": "integer", "minimum": -1},
                                },
                            },
                            "cache": {"type": "object"},
                            "timings": {
                                "type": "object",
                                "required": ["send", "wait", "receive"],
                                "properties": {
                                    "blocked": _TIMING,
                                    "dns": _TIMING,
                                    "connect": _TIMING,
                                    "send": {"type": "number", "minimum": 0},
                                    "wait": {"type": "number", "minimum": 0},
                                    "receive": {"type": "number", "minimum": 0},
                                    "ssl": _TIMING,
                                },
                            },
                            "serverIPAddress": {"type": "string"},
                            "connection": {"type": "string"},
                            "comment": {"type": "string"},
                        },
                    },
                },
            },
        }
    },
}


def test_the_har_schema_rejects_what_har_forbids():
    good = {"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": []}}
    jsonschema.validate(good, HAR_SCHEMA)
    for broken in ({"log": {**good["log"], "version": "1.1"}}, {"log": {"version": "1.2", "entries": []}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, HAR_SCHEMA)
