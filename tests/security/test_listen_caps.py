"""Attacks on the ``subscriptions/listen`` streams of the servers a class shares, over real HTTP on 127.0.0.1.

The assistant server (``mcp-teach serve --server assistant``) and lesson 12's untrusted server served listen streams
without a limit: one student held 49 streams, and each change of the tool list was sent 49 times to her. Only the
capstone counted them per person.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import anyio
import httpx2
from support import HANG_TIMEOUT, open_listen_stream

from mcp_teach.servers.listen_limits import LISTEN_STREAMS_PER_PERSON
from mcp_teach.servers.student_tokens import student_token
from mcp_teach.servers.untrusted import build_untrusted_server
from mcp_teach.transports.in_process import serve_http

SECRET = "class-secret-Lc5Tm8Xp3Vd1"  # made up for these tests
ASSISTANT = [
    str(Path(sys.executable).with_name("mcp-teach")),
    *("serve", "--server", "assistant", "--transport", "streamable-http", "--port", "0"),
]
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
REFUSED = {
    "code": -32603,
    "message": f"Too many subscriptions/listen streams (at most {LISTEN_STREAMS_PER_PERSON} per person): "
    "close one you can spare.",
}


async def _listen(streams: contextlib.AsyncExitStack, http: httpx2.AsyncClient, url: str, token: str | None) -> dict:
    """Open a ``subscriptions/listen`` stream, kept open until ``streams`` closes: its first message."""
    return await open_listen_stream(streams, http, url, {"Authorization": f"Bearer {token}"} if token else {})


async def _reopen(http: httpx2.AsyncClient, url: str, token: str | None) -> dict:
    """A stream opened once the server has seen a closed one go (it notices within moments)."""
    with anyio.fail_after(HANG_TIMEOUT):
        while True:
            async with contextlib.AsyncExitStack() as again:
                reopened = await _listen(again, http, url, token)
            if "error" not in reopened:
                return reopened
            await anyio.sleep(0.05)


def _kinds(messages: list[dict]) -> list[str]:
    return [message.get("method") or message["error"]["message"] for message in messages]


def test_one_student_holds_only_so_many_listen_streams_on_the_assistant(run, cli_server):
    server = cli_server(ASSISTANT, MCP_AUTH_TOKEN=SECRET)
    ana, ben = student_token(SECRET, "ana"), student_token(SECRET, "ben")

    async def scenario() -> tuple[list[dict], dict, dict, dict]:
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http, contextlib.AsyncExitStack() as streams:
            held = [await _listen(streams, http, server.url, ana) for _ in range(LISTEN_STREAMS_PER_PERSON)]
            async with contextlib.AsyncExitStack() as extra:
                refused = await _listen(extra, http, server.url, ana)  # was: acknowledged, and 49 of them
            bens = await _listen(streams, http, server.url, ben)
            await streams.aclose()  # ana closes her streams
            return held, refused, bens, await _reopen(http, server.url, ana)

    held, refused, bens, reopened = run(scenario)
    assert _kinds([*held, bens, reopened]) == [ACKNOWLEDGED] * (LISTEN_STREAMS_PER_PERSON + 2)
    assert refused["error"] == REFUSED


def test_the_untrusted_server_bounds_listen_streams_too(run):
    """Lesson 12's server, served over HTTP as a server from the internet would be: without a token, one person."""

    async def scenario() -> tuple[list[dict], dict]:
        async with serve_http(server=build_untrusted_server()) as url, httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
            async with contextlib.AsyncExitStack() as streams:
                held = [await _listen(streams, http, url, None) for _ in range(LISTEN_STREAMS_PER_PERSON + 1)]
            return held, await _reopen(http, url, None)

    held, reopened = run(scenario)
    assert _kinds(held) == [ACKNOWLEDGED] * LISTEN_STREAMS_PER_PERSON + [REFUSED["message"]]
    assert reopened["method"] == ACKNOWLEDGED
