"""Attacks on a class server over the deprecated SSE transport, over real HTTP on 127.0.0.1 against ``mcp-teach serve``.

Each ``GET /sse`` opens a session that lasts as long as its event stream, and the quota of open sessions per person
counted only streamable HTTP's: one student held 50 SSE streams at once.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import anyio
import httpx2
from support import HANG_TIMEOUT

from mcp_teach.servers.student_tokens import student_token
from mcp_teach.transports.session_quota import SESSIONS_PER_PERSON

SECRET = "class-secret-Gy6Bv1Ns8Qe4"  # made up for these tests
SSE = [
    str(Path(sys.executable).with_name("mcp-teach")),
    *("serve", "--transport", "sse", "--port", "0"),
]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}


async def _open(http: httpx2.AsyncClient, url: str, streams: contextlib.AsyncExitStack, token: str) -> str:
    """Open an event stream, kept open until ``streams`` closes: ``"200"``, or the status and body of a refusal."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    response = await streams.enter_async_context(http.stream("GET", url, headers=headers))
    return "200" if response.status_code == 200 else f"{response.status_code} {(await response.aread()).decode()}"


def test_one_student_holds_no_more_sse_streams_than_sessions(run, cli_server):
    server = cli_server(SSE, MCP_AUTH_TOKEN=SECRET)
    ana, ben = student_token(SECRET, "ana"), student_token(SECRET, "ben")

    async def scenario() -> tuple[list[str], str, str]:
        with anyio.fail_after(HANG_TIMEOUT):
            async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
                async with contextlib.AsyncExitStack() as streams:
                    anas = [await _open(http, server.url, streams, ana) for _ in range(SESSIONS_PER_PERSON + 2)]
                    bens = await _open(http, server.url, streams, ben)
                while True:  # the server notices the closed streams within moments
                    async with contextlib.AsyncExitStack() as streams:
                        again = await _open(http, server.url, streams, ana)
                    if again == "200":
                        return anas, bens, again
                    await anyio.sleep(0.05)

    anas, bens, after_closing = run(scenario)
    assert anas[:SESSIONS_PER_PERSON] == ["200"] * SESSIONS_PER_PERSON
    refusals = anas[SESSIONS_PER_PERSON:]  # was: "200" for each, and for 50 streams
    assert all(refusal.startswith("429 ") and "event stream" in refusal for refusal in refusals), refusals
    assert f"{SESSIONS_PER_PERSON} open sessions on this server" in refusals[0]
    assert (bens, after_closing) == ("200", "200")
