"""Credentials hidden in a body's structure are found by parsing it: the HTTP tap, its HAR and a capture alike.

Each attack is a request body sent through a real ``mcp-teach tap`` to a real upstream that echoes it back (same
content type), so the same credential crosses the tap twice: in the request and in the response (an event stream
for ``text/event-stream``). The client records the exchange itself (a capture, redacted as lessons record), and the
tap's recording, the HAR made from it and the capture's HAR are all searched for every fragment of the credential.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest
from support import HANG_TIMEOUT

from mcp_teach.wire.har import to_har
from mcp_teach.wire.host_tap_recording import TappedExchange, load_tap
from mcp_teach.wire.http_recording import HttpExchange, RecordingHTTPTransport
from mcp_teach.wire.messages import Capture

MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
#: Where the tap cuts a body (a mebibyte): bigger ones grew a recording far past its 16 MiB rotation.
CUT_AT = 1024 * 1024
MULTIPART = (
    '--XyZ\r\nContent-Disposition: form-data; name="client_id"\r\n\r\nmy-app\r\n'
    '--XyZ\r\nContent-Disposition: form-data; name="client_secret"\r\n\r\nmp-secret-Lr52\r\n'
    '--XyZ\r\nContent-Disposition: form-data; name="note"; filename="n.json"\r\nContent-Type: application/json\r\n\r\n'
    '{"refresh_token": "mp-json-Qe6"}\r\n--XyZ--\r\n'
)
SESSION_KEYS = {"secret": "k-sec-1a", "auth_token": "k-aut-2b", "private_key": "k-prv-3c", "sessionToken": "k-ses-4d"}
#: name: (content type, body, fragments of credentials that must not be recorded, what teaches and must stay)
ATTACKS = {
    "json-escaped-slash": ("application/json", '{"access_token": "AT\\/SLASH-kq7Tz0"}', ["SLASH-kq7Tz0"], []),
    "json-escaped-quote": ("application/json", '{"password": "s3cr\\"et-Wm4", "scope": "x"}', ["s3cr", "et-Wm4"], []),
    "sse-data-on-two-lines": (
        "text/event-stream",
        'event: message\nid: 7\ndata: {"jsonrpc": "2.0", "id": 1, "result": {"access_token":\ndata: "sse-Hd81"}}\n\n',
        ["sse-Hd81"],
        ["id: 7"],
    ),
    "multipart-client-secret": ("multipart/form-data; boundary=XyZ", MULTIPART, ["mp-secret-Lr52", "mp-json-Qe6"], []),
    "multipart-lf-only": (
        'multipart/form-data; boundary="a b"',
        "--a b\nContent-Disposition: form-data; name*=utf-8''client%5Fsecret\n\nmp-lf-Tt5\n--a b--\n",
        ["mp-lf-Tt5"],
        [],
    ),
    "json-credential-keys": (
        "application/json",
        json.dumps({**SESSION_KEYS, "passphrase": "k-pph-5e", "progressToken": "p-1"}),
        [*SESSION_KEYS.values(), "k-pph-5e"],
        ["p-1"],
    ),
    "json-escaped-key": ("application/json", '{"access\\u005ftoken": "esc-key-Pq3"}', ["esc-key-Pq3"], []),
    "xml": (
        "application/xml",
        "<auth><client_id>my-app</client_id><client_secret>xml-sec-1</client_secret><Password>xml-pw-2</Password></auth>",
        ["xml-sec-1", "xml-pw-2"],
        ["my-app"],
    ),
    "yaml": (
        "application/yaml",
        'client_id: my-app\nclient_secret: yaml-sec-1\npassword: "yaml pw 2"\n',
        ["yaml-sec-1", "yaml pw 2"],
        ["my-app"],
    ),
    "html": (
        "text/html",
        '<form><input type="hidden" name="client_secret" value="html-sec-1">'
        '<input value="html-tok-2" name="csrf_token"><input name="state" value="st-1"></form>',
        ["html-sec-1", "html-tok-2"],
        ["st-1"],
    ),
    "code-sent-as-text": ("text/plain", "code=txt-code-Zz9", ["txt-code-Zz9"], []),
}


class _Echo(BaseHTTPRequestHandler):
    """Answers every POST with its own body and content type."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", self.headers["content-type"])
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def tap(tmp_path_factory, cli_server):
    """A tap in front of an echoing upstream: its URL and its recording."""
    out = tmp_path_factory.mktemp("redact") / "tap.jsonl"
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        origin = f"http://127.0.0.1:{upstream.server_address[1]}"
        server = cli_server([MCP_TEACH, "tap", "--out", str(out), "--listen", "127.0.0.1:0", "--upstream", origin])
        yield server.url.rstrip("/"), out
        server.stop()
    finally:
        upstream.shutdown()
        upstream.server_close()


def _recorded(out: Path, target: str) -> TappedExchange:
    """The tap's record of the exchange for ``target``, once it has ended (the client may see the end first)."""
    deadline = time.monotonic() + HANG_TIMEOUT
    while not (done := [e for e in load_tap(out).http if e.target == target and e.ended_at is not None]):
        assert time.monotonic() < deadline, f"the tap recorded no end for {target}"
        time.sleep(0.02)
    return done[0]


@pytest.mark.parametrize("name", ATTACKS)
def test_a_credential_inside_a_bodys_structure_is_recorded_nowhere(name, tap, run):
    content_type, body, secrets, kept = ATTACKS[name]
    url, out = tap
    captured: list[HttpExchange] = []

    async def send() -> httpx2.Response:
        async with httpx2.AsyncClient(transport=RecordingHTTPTransport(captured.append), timeout=HANG_TIMEOUT) as http:
            response = await http.post(f"{url}/echo/{name}", content=body, headers={"content-type": content_type})
            await response.aread()
            return response

    response = run(send)
    assert response.status_code == 200 and response.text == body  # the wire is untouched
    recorded = _recorded(out, f"/echo/{name}")
    (exchange,) = captured
    texts = {
        "tap recording": out.read_text(),
        "HAR of the recording": json.dumps(to_har(load_tap(out)), ensure_ascii=False),
        "capture": exchange.request_body + exchange.response_body,
        "HAR of the capture": json.dumps(to_har(Capture(http=[exchange])), ensure_ascii=False),
    }
    leaks = [(where, secret) for where, text in texts.items() for secret in secrets if secret in text]
    assert not leaks, f"recorded: {leaks}"
    for value in kept:
        assert value in recorded.request_body and value in recorded.response_body and value in exchange.request_body


@pytest.mark.parametrize("content_type", ["application/json", "text/event-stream"])
def test_one_huge_body_is_cut_in_the_recording_which_says_so_and_a_credential_cut_in_two_is_hidden(
    content_type, tap, run
):
    url, out = tap
    target = f"/huge/{content_type.replace('/', '-')}"
    pad = "x" * (CUT_AT - 40)  # the credential straddles the first mebibyte
    body = f'data: {{"pad": "{pad}", "access_token": "cut-Secret-9Kd2z7", "more": "{"y" * CUT_AT}"}}\n\n'
    body = body if content_type == "text/event-stream" else body[6:]

    async def send() -> int:
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
            response = await http.post(url + target, content=body, headers={"content-type": content_type})
            return len(response.content)

    assert run(send) == len(body)  # the client still gets it all
    _recorded(out, target)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    (number,) = [r["exchange"] for r in records if r["type"] == "http-request" and r["target"] == target]
    mine = [r for r in records if r.get("exchange") == number]
    cut = [r for r in mine if r["type"] in ("http-request", "http-body", "sse-event")]
    assert [(r["type"], r.get("truncated_from")) for r in cut] == [
        (cut[0]["type"], len(body)),
        (cut[1]["type"], len(body)),
    ]
    assert all(len(json.dumps(r)) < 2 * CUT_AT + 4096 for r in mine)  # an event's record has it twice: raw and data
    assert "9Kd2z7" not in out.read_text() and "cut-Sec" not in out.read_text()
