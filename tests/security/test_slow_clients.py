"""Attacks by slow clients on a class server, over raw TCP on 127.0.0.1 against ``mcp-teach serve``.

uvicorn closes a connection idle between requests after 5 s, but had no limit on how long a request may take to
arrive: a client that sent its headers one byte at a time (slowloris), or its body slower than any real client, or
nothing at all, held its connection as long as it liked (50 such connections were all still open after 60 s). The
server here is the CLI's, with the time a request may take shortened so the tests wait well under a second.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator

import anyio
import httpx2
import pytest
from support import HANG_TIMEOUT

from mcp_teach.wire.modern_post import modern_post

#: How long these tests let a request take to arrive (the course's default is many times longer).
SECONDS = 0.4
#: How long a slow connection may stay open before the tests call it held: the check comes every ``SECONDS``.
CLOSED_WITHIN = 2 * SECONDS + 2.0
#: ``mcp-teach serve --server assistant`` as a class runs it, with the shorter time.
SERVER = f"""
import sys
from mcp_teach.transports import sockets
sockets.REQUEST_SECONDS = {SECONDS}
from mcp_teach.cli import main
sys.exit(main(["serve", "--server", "assistant", "--transport", "streamable-http", "--port", "0"]))
"""
SLOW_CONNECTIONS = 50


@pytest.fixture(scope="module")
def server(cli_server):
    return cli_server([sys.executable, "-c", SERVER])


def _request(port: int, length: int) -> bytes:
    """The start of a POST whose body has ``length`` bytes: request line and headers, up to the blank line."""
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


async def _slow(port: int, sent_at_once: bytes, dripped: bytes) -> tuple[str, float]:
    """Send ``sent_at_once``, then ``dripped`` a byte every 0.1 s: what the server answered, and after how long it
    closed the connection (the test fails if it does not within :data:`CLOSED_WITHIN`)."""
    answer = bytearray()
    started = time.monotonic()
    with anyio.fail_after(CLOSED_WITHIN):
        async with await anyio.connect_tcp("127.0.0.1", port) as stream, anyio.create_task_group() as group:

            async def drip() -> None:
                await stream.send(sent_at_once)
                for byte in dripped:
                    await anyio.sleep(0.1)
                    await stream.send(bytes([byte]))

            group.start_soon(drip)
            try:
                while True:
                    answer += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
                group.cancel_scope.cancel()
    return answer.decode(), time.monotonic() - started


def _port(server) -> int:
    return httpx2.URL(server.url).port


def _timed_out(answer: str) -> bool:
    return answer.startswith("HTTP/1.1 408 Request Timeout\r\n") and "must arrive whole within" in answer


def test_headers_sent_a_byte_at_a_time_cost_their_connection(run, server):
    port = _port(server)
    headers = _request(port, 2)

    async def attack() -> list[tuple[str, float]]:
        results: list[tuple[str, float]] = []

        async def one() -> None:
            results.append(await _slow(port, b"", headers))

        async with anyio.create_task_group() as group:
            for _ in range(SLOW_CONNECTIONS):
                group.start_soon(one)
        return results

    results = run(attack)  # was: every connection still open when the test gave up
    assert len(results) == SLOW_CONNECTIONS
    assert all(_timed_out(answer) for answer, _ in results), results[0][0]


def test_a_body_sent_slower_than_any_client_costs_its_connection(run, server):
    port = _port(server)
    body = modern_post("tools/list").json().encode()
    answer, _ = run(_slow, port, _request(port, len(body)) + body[:10], body[10:])  # was: held open
    assert _timed_out(answer)


def test_a_connection_that_sends_nothing_is_closed(run, server):
    answer, after = run(_slow, _port(server), b"", b"")  # was: held open
    assert _timed_out(answer) and after >= SECONDS


def test_real_clients_keep_their_streams_and_slow_answers(run, server):
    """A listen stream outlives the time a request may take to arrive, and so does a slow tool call."""
    listen = modern_post("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    slow_call = modern_post("tools/call", {"name": "wait_for", "arguments": {"seconds": 3 * SECONDS}})
    change = modern_post("tools/call", {"name": "add_shout_tool", "arguments": {}})

    async def next_event(lines: AsyncIterator[str]) -> str:
        return await anext(line async for line in lines if line.startswith("data:"))

    async def scenario() -> tuple[list[str], str]:
        with anyio.fail_after(HANG_TIMEOUT):
            async with (
                httpx2.AsyncClient(timeout=HANG_TIMEOUT) as http,
                http.stream("POST", server.url, content=listen.json(), headers=listen.headers) as stream,
            ):
                lines = stream.aiter_lines()
                acknowledged = await next_event(lines)
                answer = await http.post(server.url, content=slow_call.json(), headers=slow_call.headers)
                await http.post(server.url, content=change.json(), headers=change.headers)
                return [acknowledged, await next_event(lines)], answer.text

    events, answer = run(scenario)
    assert "notifications/subscriptions/acknowledged" in events[0]
    assert "notifications/tools/list_changed" in events[1]
    assert f"Waited {3 * SECONDS:g} s." in answer
