"""Every HTTP server the course runs answers an invalid ``Origin`` with 403, before any ``Host`` check, over real HTTP.

"If the `Origin` header is present and invalid, servers **MUST** respond with HTTP 403 Forbidden" (2026-07-28,
basic/transports/streamable-http, Security; 2025-11-25, basic/transports, Security Warning, the same words).
fastmcp's guard checks ``Host`` first and answers a DNS-rebinding request (foreign ``Host`` *and* foreign
``Origin``) 421; the course's guard (:class:`~mcp_teach.transports.http_app.RememberedHostOriginGuard`) answers
it 403. A foreign ``Host`` alone still gets 421. Checked on: streamable HTTP with sessions (2025-11-25
``initialize``) and stateless (2026-07-28 requests), SSE, the large-class server (``--workers``), the HTTP tap, and
the offline teaching model served with ``mcp-teach model serve``.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from support import HANG_TIMEOUT, discover, initialize

from mcp_teach.transports.in_process import serve_http

MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
JSON_OR_SSE = "application/json, text/event-stream"
EVIL_HOST = "evil.example"
EVIL_ORIGIN = "http://evil.example"
TOKEN = "origin-test-token-0123456789"
#: The requests each server is sent, and what each must answer (``"ok"``: not refused by the guard).
CASES = {
    "good": ({}, "ok"),
    "foreign Origin": ({"Origin": EVIL_ORIGIN}, 403),
    "foreign Host and Origin (DNS rebinding)": ({"Host": EVIL_HOST, "Origin": EVIL_ORIGIN}, 403),
    "foreign Host": ({"Host": EVIL_HOST}, 421),
    "foreign Host, the server's own Origin": ({"Host": EVIL_HOST, "Origin": "<own>"}, 421),
}


def _modern_headers() -> dict[str, str]:
    return {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}


def statuses(method: str, url: str, body: dict | None = None, **headers: str) -> dict[str, int]:
    """The status each case of :data:`CASES` gets from ``method url`` (with ``body`` and ``headers``)."""
    own = f"{urlsplit(url).scheme}://{urlsplit(url).netloc}"
    found = {}
    with httpx2.Client(timeout=HANG_TIMEOUT) as http:
        for name, (extra, _) in CASES.items():
            sent = {"Accept": JSON_OR_SSE, **headers, **{k: own if v == "<own>" else v for k, v in extra.items()}}
            found[name] = http.request(method, url, json=body, headers=sent).status_code
    return found


def expected(good: int | None = None) -> dict[str, int | str]:
    return {name: good if answer == "ok" and good is not None else answer for name, (_, answer) in CASES.items()}


def judged(found: dict[str, int], good: int | None = None) -> dict[str, int | str]:
    """``found`` with the good request's status as ``"ok"`` when it is no refusal of the guard (``good`` unset)."""
    if good is None and found["good"] not in (403, 421):
        return {**found, "good": "ok"}
    return dict(found)


@pytest.mark.parametrize(
    ("transport", "stateless", "era"),
    [("streamable-http", False, "2025-11-25"), ("streamable-http", True, "2026-07-28"), ("sse", False, "2025-11-25")],
    ids=["sessions-2025-11-25", "stateless-2026-07-28", "sse"],
)
def test_the_course_servers_answer_a_foreign_origin_403_before_the_host(run, transport, stateless, era):
    async def scenario() -> dict[str, int]:
        async with serve_http(transport, stateless=stateless) as url:
            if transport == "sse":  # the POST endpoint without a session: the guard answers before the SSE app
                target = url.replace("/sse", "/messages/?session_id=0123456789abcdef0123456789abcdef")
                return await anyio.to_thread.run_sync(lambda: statuses("POST", target, initialize("2025-11-25")))
            if era == "2026-07-28":
                request = discover("2026-07-28")
                return await anyio.to_thread.run_sync(lambda: statuses("POST", url, request, **_modern_headers()))
            return await anyio.to_thread.run_sync(lambda: statuses("POST", url, initialize("2025-11-25")))

    found = run(scenario)
    if transport == "sse":
        assert judged(found) == expected()
    else:
        assert found == expected(200)


def test_the_large_class_server_answers_a_foreign_origin_403(cli_server):
    server = cli_server(
        [MCP_TEACH, "serve", "--transport", "streamable-http", "--port", "0", "--workers", "2", "--stateless"],
        MCP_AUTH_TOKEN=TOKEN,
    )
    try:
        found = statuses(
            "POST", server.url, discover("2026-07-28"), Authorization=f"Bearer {TOKEN}", **_modern_headers()
        )
    finally:
        server.stop(signal.SIGTERM)
    assert found == expected(200)


def test_the_http_tap_has_the_guard_of_its_own(run, cli_server, tmp_path):
    """The tap sends the upstream its own ``Host``: it must judge the ``Host`` and ``Origin`` it was sent itself."""

    async def scenario() -> dict[str, int]:
        async with serve_http("streamable-http", stateless=True) as upstream:
            argv = [MCP_TEACH, "tap", "--out", str(tmp_path / "tap.jsonl"), "--listen", "127.0.0.1:0"]
            tap = cli_server([*argv, "--upstream", upstream])
            url = await anyio.to_thread.run_sync(lambda: tap.url)
            try:
                request = discover("2026-07-28")
                return await anyio.to_thread.run_sync(lambda: statuses("POST", url, request, **_modern_headers()))
            finally:
                await anyio.to_thread.run_sync(tap.stop)

    assert run(scenario) == expected(200)


def test_the_offline_model_served_over_http_has_the_guard(cli_server):
    server = cli_server([MCP_TEACH, "model", "serve", "--port", "0"])
    try:
        found = statuses("GET", f"{server.url}/models")
    finally:
        server.stop(signal.SIGTERM)
    assert found == expected(200)
