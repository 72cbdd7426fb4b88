"""serve_http and stdio_transport: in-process HTTP servers on loopback and fresh stdio subprocesses."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import httpx2
import pytest
from fastmcp import FastMCP
from support import refuses_connections

from mcp_teach.client import teaching_client
from mcp_teach.config import LOOPBACK
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.http_app import DEFAULT_PATHS, allowed_hosts, guarded_http_app
from mcp_teach.transports.in_process import STDIO_LOG, serve_http, stdio_transport
from mcp_teach.transports.sockets import bind_socket, server_url
from mcp_teach.wire.capture import CaptureTransport

JSON_OR_SSE = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
def test_serve_http_serves_on_loopback_and_closes_the_port_afterwards(run, transport):
    async def scenario():
        async with serve_http(transport) as url, teaching_client(url) as client:
            names = [tool.name for tool in await client.list_tools()]
            result = await client.call_tool("calculator_subtract", {"a": 10, "b": 4})
        return url, names, result.data

    url, names, value = run(scenario)
    parts = urlsplit(url)
    assert (parts.scheme, parts.hostname, parts.path) == ("http", "127.0.0.1", DEFAULT_PATHS[transport])
    assert parts.port > 0
    assert names == ["calculator_add", "calculator_subtract", "calculator_multiply", "calculator_divide"]
    assert value == 6.0
    assert refuses_connections(parts.port)


def test_serve_http_with_custom_server_and_path(run):
    custom = FastMCP("custom", version="9.9")

    @custom.tool
    def shout(text: str) -> str:
        return text.upper()

    async def scenario():
        async with (
            serve_http("streamable-http", server=custom, path="/custom") as url,
            teaching_client(url) as client,
        ):
            return url, (await client.call_tool("shout", {"text": "hi"})).data

    url, shouted = run(scenario)
    assert urlsplit(url).path == "/custom"
    assert shouted == "HI"


def test_serve_http_closes_the_port_when_the_block_raises(run):
    seen = {}

    async def scenario():
        async with serve_http("sse") as url:
            seen["port"] = urlsplit(url).port
            raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        run(scenario)
    assert refuses_connections(seen["port"])


def test_serve_http_rejects_stdio(run):
    async def scenario():
        async with serve_http("stdio"):
            pass

    with pytest.raises(ValueError, match="'sse' or 'streamable-http', not 'stdio'"):
        run(scenario)


def test_serve_http_reports_a_busy_port(run):
    async def scenario():
        async with serve_http("streamable-http") as url:
            port = urlsplit(url).port
            with pytest.raises(OSError):
                async with serve_http("streamable-http", port=port):
                    pass
            async with teaching_client(url) as client:  # the first server is unharmed
                return (await client.call_tool("calculator_add", {"a": 1, "b": 1})).data

    assert run(scenario) == 2.0


def test_http_servers_reject_foreign_host_and_origin_headers(run):
    async def scenario():
        async with serve_http("streamable-http") as url, httpx2.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            headers = {"Accept": "application/json, text/event-stream"}
            wrong_host = await http.post(url, json=body, headers={**headers, "Host": "evil.example"})
            wrong_origin = await http.post(url, json=body, headers={**headers, "Origin": "http://evil.example"})
            return wrong_host.status_code, wrong_origin.status_code

    assert run(scenario) == (421, 403)


def test_stdio_transport_starts_a_fresh_server_per_block(run, tmp_path):
    log = tmp_path / "server.log"
    transport = stdio_transport(log_file=log)

    async def scenario():
        capture = CaptureTransport(transport)
        client = teaching_client(capture, mode="legacy")
        for _ in range(2):
            async with client:
                await client.list_tools()
        return capture.capture

    capture = run(scenario)
    assert capture.methods().count("initialize") == 2  # keep_alive=False: a new handshake per block
    assert [w.id for w in capture.requests()] == [1, 2, 1, 2]
    assert log.exists()
    assert transport.keep_alive is False
    assert transport.args == ["-m", "mcp_teach.serve", "--transport", "stdio"]


def test_stdio_transport_defaults():
    transport = stdio_transport()
    assert transport.log_file == STDIO_LOG
    assert stdio_transport(keep_alive=True).keep_alive is True


def test_bind_socket_and_server_url():
    with bind_socket() as sock:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.get_inheritable()
    assert server_url("127.0.0.1", 8000, "/mcp") == "http://127.0.0.1:8000/mcp"
    assert server_url("::1", 8000, "/sse") == "http://[::1]:8000/sse"


def test_a_server_on_every_interface_answers_whatever_name_students_use(run):
    """Bound to 0.0.0.0, the server is reached by an IP or a machine name it cannot know in advance.

    Requests arriving on another interface cannot be made from a loopback-only test, so the app is called
    through httpx2's ASGI transport with that interface's address (192.0.2.10, a documentation address).
    """

    async def status(app, interface: str, host: str) -> int:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=f"http://{interface}:8000") as http:
            response = await http.post("/mcp", json=INITIALIZE, headers={"Accept": JSON_OR_SSE, "Host": host})
            return response.status_code

    async def scenario():
        everywhere = guarded_http_app(build_calculator_server(), "streamable-http", "/mcp", "0.0.0.0")
        loopback = guarded_http_app(build_calculator_server(), "streamable-http", "/mcp", LOOPBACK)
        async with everywhere.router.lifespan_context(everywhere), loopback.router.lifespan_context(loopback):
            return [
                await status(everywhere, "192.0.2.10", "192.0.2.10:8000"),
                await status(everywhere, "192.0.2.10", "teacher.local:8000"),
                await status(everywhere, "127.0.0.1", "evil.example"),  # on loopback the guard still applies
                await status(loopback, "127.0.0.1", "192.0.2.10:8000"),
            ]

    assert run(scenario) == [200, 200, 421, 421]
    assert allowed_hosts("0.0.0.0") is None
    assert allowed_hosts("::") is None
    assert allowed_hosts("192.0.2.10") == ["192.0.2.10"]


def test_the_stdio_log_is_bounded(tmp_path):
    from mcp_teach.transports.in_process import STDIO_LOG_LIMIT, bounded_log

    log = tmp_path / "server.log"
    log.write_text("small\n")
    assert bounded_log(log) == log and log.read_text() == "small\n"
    log.write_bytes(b"x" * (STDIO_LOG_LIMIT + 1))
    assert bounded_log(log) == log and log.stat().st_size == 0  # moved aside, and a new private one begun
    assert (tmp_path / "server.log.1").stat().st_size == STDIO_LOG_LIMIT + 1
    assert bounded_log(tmp_path / "missing.log") == tmp_path / "missing.log"


def test_stdio_servers_log_plain_lines():
    from mcp_teach.transports.in_process import stdio_transport

    assert stdio_transport().env == {"FASTMCP_ENABLE_RICH_LOGGING": "false", "NO_COLOR": "1"}
