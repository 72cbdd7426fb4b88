"""The HTTP exchanges under SSE and streamable HTTP are recorded faithfully, with credentials redacted."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator

import httpx2
import pytest
import uvicorn
from fastmcp import Client
from fastmcp.client.transports import SSETransport, StreamableHttpTransport
from support import recorded_text

from mcp_teach.client import teaching_client
from mcp_teach.transports.in_process import serve_http
from mcp_teach.transports.sockets import bind_socket
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.http_recording import HttpExchange, RecordingHTTPTransport, recording_client_factory
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture
from mcp_teach.wire.redact import REDACTED

SECRET = "sk-test-0123456789abcdefXYZ"
TOKEN = "tok_live_9f8e7d6c5b4a"  # not key-shaped: only the header name marks it secret


def sse_data(body: str, event: str = "message") -> list[str]:
    """The data of every ``event`` in an event-stream body."""
    found = []
    for block in re.split(r"\r?\n\r?\n", body):
        lines = block.splitlines()
        if f"event: {event}" in lines:
            found.append("\n".join(line[len("data: ") :] for line in lines if line.startswith("data: ")))
    return found


def on_wire(capture: Capture, direction: str) -> list[str]:
    return [json.dumps(w.message) for w in capture if w.direction == direction]


def relaid(bodies: list[str]) -> list[str]:
    """JSON texts re-serialized like ``on_wire`` (key order kept), to compare with the captured messages."""
    return [json.dumps(json.loads(body)) for body in bodies]


async def _recorded(transport: str, mode: str) -> Capture:
    async with serve_http(transport) as url:
        capture = CaptureTransport(url)
        async with teaching_client(capture, mode=mode) as client:
            await client.list_tools()
            assert (await client.call_tool("calculator_add", {"a": 2, "b": 3})).data == 5.0
    return capture.capture


@pytest.fixture(scope="module")
def recorded(run):
    cache: dict[tuple[str, str], Capture] = {}

    def get(transport: str, mode: str) -> Capture:
        if (transport, mode) not in cache:
            cache[transport, mode] = run(_recorded, transport, mode)
        return cache[transport, mode]

    return get


def test_sse_opens_an_event_stream_that_announces_the_post_endpoint(recorded):
    capture = recorded("sse", "auto")
    stream = capture.http[0]
    assert (stream.method, stream.target, stream.status) == ("GET", "/sse", 200)
    assert stream.content_type.startswith("text/event-stream")
    assert stream.request_headers["accept"] == "text/event-stream"
    [endpoint] = sse_data(stream.response_body, "endpoint")
    assert re.fullmatch(r"/messages/\?session_id=[0-9a-f]{32}", endpoint)
    posts = capture.http[1:]
    assert posts
    for post in posts:
        assert (post.method, post.target, post.status, post.response_body) == ("POST", endpoint, 202, "Accepted")
        assert post.request_headers["content-type"] == "application/json"


def test_sse_posts_carry_requests_and_the_stream_carries_responses(recorded):
    capture = recorded("sse", "auto")
    assert relaid([post.request_body for post in capture.http[1:]]) == on_wire(capture, CLIENT_TO_SERVER)
    assert relaid(sse_data(capture.http[0].response_body)) == on_wire(capture, SERVER_TO_CLIENT)
    assert capture.methods()[0] == "initialize"  # SSE always does the legacy handshake


def test_streamable_http_2026_posts_json_to_mcp_without_a_session(recorded):
    capture = recorded("streamable-http", "auto")
    assert capture.methods()[0] == "server/discover"
    assert {(e.method, e.target, e.status) for e in capture.http} == {("POST", "/mcp", 200)}
    for exchange in capture.http:
        assert exchange.request_headers["accept"] == "application/json, text/event-stream"
        assert exchange.content_type == "application/json"
        assert "mcp-session-id" not in exchange.request_headers
        assert "mcp-session-id" not in exchange.response_headers
    assert relaid([e.request_body for e in capture.http]) == on_wire(capture, CLIENT_TO_SERVER)
    assert relaid([e.response_body for e in capture.http]) == on_wire(capture, SERVER_TO_CLIENT)


def test_streamable_http_legacy_uses_a_session_header(recorded):
    capture = recorded("streamable-http", "legacy")
    initialize, *later = capture.http
    assert json.loads(initialize.request_body)["method"] == "initialize"
    assert "mcp-session-id" not in initialize.request_headers
    session_id = initialize.response_headers["mcp-session-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", session_id)
    assert later
    for exchange in later:
        assert exchange.target == "/mcp"
        assert exchange.request_headers["mcp-session-id"] == session_id
        assert exchange.request_headers["mcp-protocol-version"] == "2025-11-25"
    assert later[-1].method == "DELETE"  # the client ends its session on close
    posts = [initialize, *(e for e in later if e.method == "POST")]
    assert relaid([post.request_body for post in posts]) == on_wire(capture, CLIENT_TO_SERVER)
    answered = []
    for post in posts:
        if post.status == 202:
            assert json.loads(post.request_body)["method"] == "notifications/initialized"
            continue
        assert post.status == 200
        if post.content_type.startswith("text/event-stream"):
            answered += sse_data(post.response_body)
        else:
            assert post.content_type == "application/json"
            answered.append(post.response_body)
    assert relaid(answered) == on_wire(capture, SERVER_TO_CLIENT)


@pytest.mark.parametrize(
    ("transport", "mode"), [("sse", "auto"), ("streamable-http", "auto"), ("streamable-http", "legacy")]
)
def test_exchanges_are_complete_and_ordered(recorded, transport, mode):
    capture = recorded(transport, mode)
    starts = [e.started_at for e in capture.http]
    assert starts == sorted(starts)
    for exchange in capture.http:
        assert exchange.status is not None
        assert exchange.request_headers["host"].startswith("127.0.0.1:")
        if exchange.ended_at is not None:
            assert exchange.ended_at >= exchange.started_at


def test_http_exchange_content_type():
    exchange = HttpExchange("POST", "/mcp", {"content-type": "application/json"}, "{}", 1.5, 200, {"a": "b"}, "x", 2.0)
    assert exchange.content_type is None
    assert HttpExchange("GET", "/", {}, "", 0.0, response_headers={"content-type": "text/plain"}).content_type == (
        "text/plain"
    )


async def _with_credentials(transport: str, how: str) -> tuple[Capture, str]:
    async with serve_http(transport) as url:
        if how == "auth":
            client = Client(CaptureTransport(url), auth=SECRET)
        else:
            kind = SSETransport if transport == "sse" else StreamableHttpTransport
            headers = {"Authorization": f"Bearer {TOKEN}", "X-Api-Key": SECRET}
            client = Client(CaptureTransport(kind(url, headers=headers)))
        capture_transport = client.transport
        async with client:
            result = await client.call_tool("calculator_add", {"a": SECRET, "b": 1}, raise_on_error=False)
            assert result.is_error
            echoed = result.content[0].text
    return capture_transport.capture, echoed


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
@pytest.mark.parametrize("how", ["auth", "headers"])
def test_credentials_never_reach_the_capture(run, tmp_path, transport, how):
    capture, echoed = run(_with_credentials, transport, how)
    assert SECRET in echoed  # the real connection did carry the secret: the server echoed it back
    text = recorded_text(capture)
    assert SECRET not in text
    assert TOKEN not in text
    assert REDACTED in text
    assert capture.http
    for exchange in capture.http:
        assert exchange.request_headers["authorization"] == f"Bearer {REDACTED}"
        if how == "headers":
            assert exchange.request_headers["x-api-key"] == REDACTED
    call = capture.requests("tools/call")[0]
    assert call.message["params"]["arguments"] == {"a": REDACTED, "b": 1}
    assert REDACTED in capture.response_to(call).message["result"]["content"][0]["text"]


def test_recording_can_be_switched_off_or_left_to_a_custom_factory(run):
    async def scenario():
        async with serve_http("streamable-http") as url:
            off = CaptureTransport(url, record_http=False)
            async with teaching_client(off) as client:
                await client.list_tools()
            own: list[HttpExchange] = []
            custom = StreamableHttpTransport(url, httpx_client_factory=recording_client_factory(own.append))
            kept = CaptureTransport(custom)
            async with teaching_client(kept) as client:
                await client.list_tools()
        return off.capture, kept, own

    off, kept, own = run(scenario)
    assert off.http == [] and len(off) == 4
    assert kept.capture.http == []
    assert [e.method for e in own] == ["POST", "POST"]
    assert kept.inner.httpx_client_factory is not None


@contextlib.asynccontextmanager
async def _chunked_server(parts: list[bytes]) -> AsyncIterator[str]:
    """A plain ASGI app that sends its body in the given chunks."""

    async def app(scope, receive, send):
        assert scope["type"] == "http"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        for part in parts:
            await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    sock = bind_socket()
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            await asyncio.sleep(0.005)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        await task
        sock.close()


def test_body_chunks_split_inside_a_secret_or_a_character_are_recorded_whole(run):
    """A secret or a UTF-8 character cut across two network chunks is still redacted / decoded correctly."""
    parts = [b"token=sk-test-01234", b"56789abcdef; 7 \xc3", b"\xb7 2 = 3\xc2", b"\xbd\nnext line sk-abc"]

    async def scenario():
        exchanges: list[HttpExchange] = []
        async with _chunked_server(parts) as url, recording_client_factory(exchanges.append)() as http:
            response = await http.get(url)
        return response.text, exchanges

    text, [exchange] = run(scenario)
    assert text == b"".join(parts).decode()  # the caller still gets the real body
    assert exchange.response_body == "token=[REDACTED]; 7 ÷ 2 = 3½\nnext line sk-abc"
    assert exchange.ended_at is not None


def test_a_recorder_in_front_of_an_app_in_process_keeps_both_bodies_and_redacts_the_key(run) -> None:
    """``inner``: the recorder under an SDK client whose requests go into an ASGI app (lesson 11's offline model)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def echo(request: Request) -> JSONResponse:
        return JSONResponse({"got": await request.json()})

    app = Starlette(routes=[Route("/v1/echo", echo, methods=["POST"])])
    exchanges: list[HttpExchange] = []

    async def main() -> None:
        transport = RecordingHTTPTransport(exchanges.append, inner=httpx2.ASGITransport(app=app))
        async with httpx2.AsyncClient(transport=transport, base_url="http://app.invalid") as http:
            response = await http.post("/v1/echo", json={"n": 1}, headers={"Authorization": "Bearer sk-secret-123456"})
            assert response.json() == {"got": {"n": 1}}

    run(main)
    [exchange] = exchanges
    assert (exchange.method, exchange.target, exchange.status) == ("POST", "/v1/echo", 200)
    assert json.loads(exchange.request_body) == {"n": 1} and json.loads(exchange.response_body) == {"got": {"n": 1}}
    assert exchange.request_headers["authorization"] == f"Bearer {REDACTED}"
