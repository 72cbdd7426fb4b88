"""What stands in front of HTTP, beyond its answers: the body handed on, the client's own ``receive``, the
event loop made known to sniffio, and fastmcp's Host/Origin answers remembered, changed in one case only: an
invalid Origin is 403 even when the Host is foreign too (fastmcp says 421).

What they answer is in ``test_bad_input.py``, ``test_fuzz.py`` and ``test_class_token.py``; their cost beside
a plain fastmcp server is measured by ``benchmarks/classroom_load.py --plain``.
"""

from __future__ import annotations

import asyncio

import pytest
import sniffio
from fastmcp.server.http import HostOriginGuardMiddleware

from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.http_app import (
    REMEMBERED_PASSES,
    AsyncLibraryKnown,
    RememberedHostOriginGuard,
    allowed_hosts,
    guarded_http_app,
)
from mcp_teach.transports.http_guard import JsonRpcGuard, _Replay

BODY = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
#: fastmcp's guard as ``host_origin_protection="auto"`` builds it for a server on every interface.
AUTO = {"allowed_hosts": None, "allowed_origins": None, "mode": "auto"}


def test_the_app_gets_the_body_once_then_the_clients_own_receive(run):
    later = object()  # what the client's receive returns after the body: handed on as is, not wrapped

    async def scenario():
        replay = _Replay(lambda: later, BODY)
        first = await replay()
        return first, replay(), replay()

    first, second, third = run(scenario)
    assert first == {"type": "http.request", "body": BODY, "more_body": False}
    assert second is later and third is later


def test_a_good_body_reaches_the_app_whole_even_in_pieces(run):
    seen = []

    async def app(scope, receive, send):
        seen.append(await receive())

    async def scenario():
        pieces = [{"type": "http.request", "body": BODY[:10], "more_body": True}]
        pieces.append({"type": "http.request", "body": BODY[10:], "more_body": False})

        async def receive():
            return pieces.pop(0)

        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        await JsonRpcGuard(app, ["/mcp"])(scope, receive, None)

    run(scenario)
    assert seen == [{"type": "http.request", "body": BODY, "more_body": False}]


def test_requests_run_with_the_event_loop_known_to_sniffio(run):
    seen = []

    async def app(scope, receive, send):
        seen.append(sniffio.current_async_library_cvar.get())

    async def scenario():
        before = sniffio.current_async_library_cvar.get()  # asyncio.run, unlike anyio.run, sets none
        await AsyncLibraryKnown(app)({"type": "http"}, None, None)
        return before, sniffio.current_async_library_cvar.get()

    assert run(scenario) == (None, None)  # set for the request only
    assert seen == ["asyncio"]


def _status(app, host: str | None, origin: str | None, server: tuple[str, int]) -> int:
    headers = [(name, value.encode()) for name, value in ((b"host", host), (b"origin", origin)) if value is not None]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "scheme": "http", "headers": headers, "server": server}
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, None, send))
    return sent[0]["status"]


async def _ok(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def _origin_alone(status: int, host: str | None, origin: str | None, server: tuple[str, int], fastmcps) -> int:
    """fastmcp's answer, except that a 421 whose ``Origin`` fastmcp refuses even with the server's own ``Host``
    is 403: an invalid Origin is answered before the Host (what the course's guard adds)."""
    if status != 421 or origin is None:
        return status
    return 403 if _status(fastmcps, f"{server[0]}:{server[1]}", origin, server) == 403 else 421


@pytest.mark.parametrize("bound", ["127.0.0.1", "0.0.0.0"])
def test_the_remembered_host_origin_guard_answers_as_fastmcps_every_time_but_origin_first(bound):
    options = {**AUTO, "allowed_hosts": allowed_hosts(bound)}
    fastmcps, ours = HostOriginGuardMiddleware(_ok, **options), RememberedHostOriginGuard(_ok, options)
    hosts = ["127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "10.0.0.5:8000", "evil.example", "", None]
    origins = [None, "http://127.0.0.1:8000", "http://localhost:8000", "http://evil.example", "null"]
    servers = [("127.0.0.1", 8000), ("10.0.0.5", 8000)]
    requests = [(host, origin, server) for server in servers for host in hosts for origin in origins]
    answers = [_origin_alone(_status(fastmcps, *request), *request, fastmcps) for request in requests]
    assert {200, 403, 421} <= set(answers)  # the matrix has passes and both kinds of refusal
    assert _status(fastmcps, "evil.example", "http://evil.example", servers[0]) == 421  # what fastmcp alone says
    assert answers[requests.index(("evil.example", "http://evil.example", servers[0]))] == 403
    assert answers[requests.index(("evil.example", "http://127.0.0.1:8000", servers[0]))] == 421
    for _ in range(2):  # the second time from what was remembered
        assert [_status(ours, *request) for request in requests] == answers
    assert len(ours._passes) == answers.count(200)


def test_the_remembered_guard_keeps_a_bounded_number_of_passes():
    ours = RememberedHostOriginGuard(_ok, AUTO)
    for number in range(REMEMBERED_PASSES + 10):
        assert _status(ours, f"student-{number}.example", None, ("10.0.0.5", 8000)) == 200
    assert len(ours._passes) == REMEMBERED_PASSES


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
@pytest.mark.parametrize("bound", ["127.0.0.1", "0.0.0.0"])
def test_every_guarded_app_asks_fastmcps_guard_through_the_memory(transport, bound):
    app = guarded_http_app(build_calculator_server(), transport, "/mcp", bound, token="class-token-0123456789")
    guards = [entry for entry in app.user_middleware if "HostOrigin" in entry.cls.__name__]
    assert [entry.cls for entry in guards] == [RememberedHostOriginGuard]
    assert guards[0].kwargs["options"] == {**AUTO, "allowed_hosts": allowed_hosts(bound)}
