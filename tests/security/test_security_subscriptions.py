"""Attacks on the capstone's resource subscriptions, each over real HTTP on 127.0.0.1 against ``mcp-teach serve``.

Lesson 07's ``resources/subscribe`` kept any URI, however long and whether the server had it or not, for as long
as the server ran: one 2025-11-25 session sending 30 subscriptions to 2 MB URIs grew the server by 126 MB, and
its ``DELETE`` (or, over SSE, its event stream closing) freed none of it. Nothing bounded how many resources a
session or a person watched, nor how many ``subscriptions/listen`` streams one person held open. Over stdio a
session is the server's whole life, so these attacks are HTTP's.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import anyio
import httpx2
import mcp_types
import psutil
from fastmcp import Client
from mcp.shared.exceptions import MCPError
from support import HANG_TIMEOUT, initialize, open_listen_stream

from mcp_teach.client import teaching_client
from mcp_teach.servers.capstone import (
    MAX_URI_LENGTH,
    SUBSCRIPTIONS_PER_PERSON,
    SUBSCRIPTIONS_PER_SESSION,
    WATCHED_URI,
)
from mcp_teach.servers.listen_limits import LISTEN_STREAMS_PER_PERSON
from mcp_teach.servers.student_tokens import student_token

SECRET = "class-secret-Sb3Kq8Wn2Rt6"  # made up for these tests
CAPSTONE = [
    str(Path(sys.executable).with_name("mcp-teach")),
    *("serve", "--server", "capstone", "--transport", "streamable-http", "--port", "0"),
]
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
#: What the attack's growth stays under now (the allocator keeps some of the 60 MB of bodies it parsed); was 126 MB.
TOLERATED_GROWTH = 50_000_000


def _message(text: str) -> dict:
    """The JSON-RPC message in a JSON or an SSE response body."""
    lines = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")] or [text]
    return json.loads(lines[-1])


def _template_uri(number: int) -> str:
    """A URI the capstone's template ``test://template/{id}/data`` makes: a resource it has."""
    return f"test://template/{number}/data"


class Session:
    """A hand-written 2025-11-25 session on ``url``: ``initialize``, then requests carrying its ``Mcp-Session-Id``."""

    def __init__(self, http: httpx2.AsyncClient, url: str, auth: dict[str, str]) -> None:
        self.http, self.url, self.headers, self.next_id = http, url, {**ACCEPT, **auth}, 2

    async def open(self) -> Session:
        opened = await self.http.post(self.url, json=initialize("2025-11-25"), headers=self.headers)
        self.headers |= {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        await self.http.post(
            self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers
        )
        return self

    async def subscribe(self, uri: str) -> dict:
        """``resources/subscribe`` to ``uri``: the result, or the error (code and message)."""
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": "resources/subscribe", "params": {"uri": uri}}
        answer = _message((await self.http.post(self.url, json=request, headers=self.headers)).text)
        return answer.get("result", answer.get("error"))

    async def end(self) -> int:
        return (await self.http.delete(self.url, headers=self.headers)).status_code


def _bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {student_token(SECRET, name)}"}


def test_huge_unknown_uris_are_refused_and_leave_no_memory_behind(run, cli_server):
    server = cli_server(CAPSTONE)
    process = psutil.Process(server.process.pid)

    async def attack() -> tuple[list[dict], int, int]:
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
            session = await Session(http, server.url, {}).open()
            before = process.memory_info().rss
            answers = [await session.subscribe(f"test://x/{n:02}/" + "a" * 2_000_000) for n in range(30)]
            assert await session.end() == 200
        return answers, before, process.memory_info().rss

    answers, before, after = run(attack)
    assert after - before < TOLERATED_GROWTH, f"grew by {(after - before) / 1e6:.0f} MB"
    expected = f"A resource URI has at most {MAX_URI_LENGTH} characters, not 2000012."
    assert answers == [{"code": -32602, "message": expected}] * 30


def test_a_uri_the_server_does_not_have_is_resource_not_found(run, cli_server):
    server = cli_server(CAPSTONE)

    async def scenario() -> list[dict]:
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
            session = await Session(http, server.url, {}).open()
            answers = [await session.subscribe(uri) for uri in ("file:///etc/passwd", WATCHED_URI, _template_uri(7))]
            await session.end()
        return answers

    unknown, watched, templated = run(scenario)
    assert unknown == {
        "code": -32002,
        "message": "Unknown resource: 'file:///etc/passwd'. Subscribe to one that resources/list or a template gives.",
    }
    assert watched == templated == {}


def test_subscriptions_are_bounded_per_session_and_per_person_and_freed_when_a_session_ends(run, cli_server):
    server = cli_server(CAPSTONE, MCP_AUTH_TOKEN=SECRET)
    sessions_to_fill = SUBSCRIPTIONS_PER_PERSON // SUBSCRIPTIONS_PER_SESSION

    async def scenario() -> dict[str, dict]:
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http:
            full = [await Session(http, server.url, _bearer("ana")).open() for _ in range(sessions_to_fill)]
            for number in range(SUBSCRIPTIONS_PER_PERSON):
                answer = await full[number // SUBSCRIPTIONS_PER_SESSION].subscribe(_template_uri(number))
                assert answer == {}, (number, answer)
            seen = {
                "again": await full[0].subscribe(_template_uri(0)),  # the same URI again: no new subscription
                "session": await full[0].subscribe(_template_uri(1000)),
            }
            another = await Session(http, server.url, _bearer("ana")).open()
            seen["person"] = await another.subscribe(WATCHED_URI)
            seen["ben"] = await (await Session(http, server.url, _bearer("ben")).open()).subscribe(WATCHED_URI)
            assert await full[0].end() == 200
            seen["freed"] = await another.subscribe(WATCHED_URI)
            for session in [*full[1:], another]:
                await session.end()
        return seen

    seen = run(scenario)
    limits = f"at most {SUBSCRIPTIONS_PER_SESSION} per session, {SUBSCRIPTIONS_PER_PERSON} per person"
    too_many = {"code": -32603, "message": f"Too many subscriptions ({limits}): unsubscribe, or end a session."}
    assert seen == {"again": {}, "session": too_many, "person": too_many, "ben": {}, "freed": {}}


async def _listen(streams: contextlib.AsyncExitStack, http: httpx2.AsyncClient, url: str, name: str) -> dict:
    """Open a ``subscriptions/listen`` stream as ``name``, kept open until ``streams`` closes: its first message."""
    return await open_listen_stream(streams, http, url, _bearer(name))


def test_one_person_holds_only_so_many_listen_streams(run, cli_server):
    server = cli_server(CAPSTONE, MCP_AUTH_TOKEN=SECRET)

    async def scenario() -> tuple[list[dict], dict, dict, dict]:
        async with httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http, contextlib.AsyncExitStack() as streams:
            held = [await _listen(streams, http, server.url, "ana") for _ in range(LISTEN_STREAMS_PER_PERSON)]
            async with contextlib.AsyncExitStack() as extra:
                refused = await _listen(extra, http, server.url, "ana")
            ben = await _listen(streams, http, server.url, "ben")
            await streams.aclose()  # ana closes her streams: the server frees them once it sees them go
            with anyio.fail_after(HANG_TIMEOUT):
                async with contextlib.AsyncExitStack() as again:
                    while "error" in (reopened := await _listen(again, http, server.url, "ana")):
                        await again.aclose()
                        await anyio.sleep(0.05)
        return held, refused, ben, reopened

    held, refused, ben, reopened = run(scenario)
    acknowledged = "notifications/subscriptions/acknowledged"
    assert [message["method"] for message in [*held, ben, reopened]] == [acknowledged] * (LISTEN_STREAMS_PER_PERSON + 2)
    limit = f"at most {LISTEN_STREAMS_PER_PERSON} per person"
    assert refused["error"] == {
        "code": -32603,
        "message": f"Too many subscriptions/listen streams ({limit}): close one you can spare.",
    }


def test_a_session_whose_sse_stream_closes_frees_its_subscriptions(run, cli_server):
    server = cli_server([*CAPSTONE[:4], "--transport", "sse", "--port", "0"])
    sessions_to_fill = SUBSCRIPTIONS_PER_PERSON // SUBSCRIPTIONS_PER_SESSION

    async def subscribe(client: Client, uri: str) -> str:
        request = mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=uri))
        try:
            await client.session.send_request(request, mcp_types.EmptyResult)
        except MCPError as error:
            return error.error.message
        return "subscribed"

    async def scenario() -> tuple[str, str]:
        async with contextlib.AsyncExitStack() as clients:
            full = [await clients.enter_async_context(teaching_client(server.url)) for _ in range(sessions_to_fill)]
            for number in range(SUBSCRIPTIONS_PER_PERSON):
                assert await subscribe(full[number // SUBSCRIPTIONS_PER_SESSION], _template_uri(number)) == "subscribed"
            async with teaching_client(server.url) as another:
                refused = await subscribe(another, WATCHED_URI)
                await full[0].close()  # its event stream closes: the server ends the session once it sees that
                with anyio.fail_after(HANG_TIMEOUT):
                    while (freed := await subscribe(another, WATCHED_URI)) != "subscribed":
                        await anyio.sleep(0.05)
        return refused, freed

    refused, freed = run(scenario)
    assert refused.startswith("Too many subscriptions") and freed == "subscribed"
