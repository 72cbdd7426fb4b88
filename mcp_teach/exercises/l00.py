"""Lesson 00's exercises (setup and orientation): what each one expects, for the one-line check cells
``check("00.k")`` of ``notebooks/00_setup.ipynb``.

- 00.1: one ``tools/call`` of ``calculator_multiply`` over streamable HTTP, captured with its HTTP requests;
- 00.2: a short stdio conversation typed by hand (``initialize``, ``notifications/initialized``, ``tools/list``);
- 00.3: the opening of a connection over HTTP+SSE (a 2025-11-25 session) compared with one over streamable HTTP
  (2026-07-28, no session).

The answers are read from the lesson's globals by :func:`mcp_teach.exercises.catalogue.check`; every check here
only reads them (no server is started).
"""

from __future__ import annotations

from typing import Any

from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT
from mcp_teach.wire.raw_stdio import RawStdioServer

#: The messages only one of the two connections of 00.3 has.
SSE_ONLY = {"initialize", "initialize (result)", "notifications/initialized"}
HTTP_ONLY = {"server/discover", "server/discover (result)"}


@exercise("00.1", answers=("product", "http_capture"))
def call_over_streamable_http(check: Checker, product: Any, http_capture: Any) -> None:
    """``product`` is 6 × 7 as the server computed it, and ``http_capture`` saw the call go over ``POST /mcp``."""
    check.equal(
        product,
        42.0,
        "product, the value calculator_multiply returned",
        hint="6 × 7 = 42: call calculator_multiply with {'a': 6, 'b': 7} and store result.data",
    )
    check.instance(
        http_capture,
        CaptureTransport,
        "http_capture",
        hint="the CaptureTransport around the server at url that teaching_client connected through",
    )
    calls = [
        m for m in http_capture.capture.requests("tools/call") if m.message["params"]["name"] == "calculator_multiply"
    ]
    check.equal(
        len(calls),
        1,
        "tools/call requests for calculator_multiply in http_capture",
        hint="call the tool once, through the client you connected to http_capture",
    )
    check.equal(
        calls[0].message["params"].get("arguments"),
        {"a": 6, "b": 7},
        "the arguments of your tools/call",
        hint="arguments is one JSON object with a value per parameter: {'a': 6, 'b': 7}",
    )
    paths = sorted({exchange.target for exchange in http_capture.capture.http})
    check.contains(
        paths,
        "/mcp",
        "the HTTP paths your messages were sent to",
        hint="connect to the URL that serve_http('streamable-http') yields (it ends in /mcp), not to a server object",
    )
    posts = sum(1 for exchange in http_capture.capture.http if exchange.method == "POST")
    print(f"found: product = {product!r}, {len(http_capture.capture)} messages in {posts} POSTs to {', '.join(paths)}")


@exercise("00.2", answers=("stdio_server", "tool_names"))
def typed_by_hand(check: Checker, stdio_server: Any, tool_names: Any) -> None:
    """Three messages sent on one stdio connection, two replies, and the tool names taken from the second."""
    check.instance(
        stdio_server,
        RawStdioServer,
        "stdio_server",
        hint="async with RawStdioServer() as stdio_server: ... (send all three messages inside the block)",
    )
    sent = [m.message for m in stdio_server.capture if m.direction == CLIENT_TO_SERVER]
    received = [m.message for m in stdio_server.capture if m.direction == SERVER_TO_CLIENT]
    check.equal(
        [m.get("method") for m in sent],
        ["initialize", "notifications/initialized", "tools/list"],
        "the methods you sent, in order",
        hint="send three messages on one connection: initialize, the notification, tools/list",
    )
    check.true(
        "id" not in sent[1],
        "your notifications/initialized message",
        expected="no 'id' member (a notification expects no answer)",
        found=sent[1],
        hint="write it exactly as {'jsonrpc': '2.0', 'method': 'notifications/initialized'}",
    )
    check.equal(
        len(received),
        2,
        "the number of lines the server wrote back",
        hint="every request gets exactly one response; a notification gets none",
    )
    check.equal(
        [m.get("id") for m in received],
        [sent[0].get("id"), sent[2].get("id")],
        "the ids of the two replies",
        hint="a response carries the id of the request it answers",
    )
    check.true(
        "result" in received[1],
        "the reply to tools/list",
        expected="a result",
        found=received[1],
        hint="send tools/list after the handshake, on the same connection",
    )
    check.instance(tool_names, list, "tool_names", hint="a list of names: [tool['name'] for tool in ...]")
    check.equal(
        sorted(tool_names),
        sorted(tool["name"] for tool in received[1]["result"]["tools"]),
        "tool_names compared with the tools/list reply",
        hint="take each tool's 'name' from reply['result']['tools']",
    )
    print(f"found: {len(sent)} lines sent, {len(received)} received\n       tools {tool_names}")


@exercise("00.3", answers=("sse_methods", "http_methods", "only_sse", "only_http"))
def two_openings(check: Checker, sse_methods: Any, http_methods: Any, only_sse: Any, only_http: Any) -> None:
    """Both connections end with the same call; only their openings differ: ``initialize`` or ``server/discover``."""
    for name, methods in [("sse_methods", sse_methods), ("http_methods", http_methods)]:
        check.instance(methods, list, name, hint="store capture.capture.methods(), the list of method names")
        check.equal(
            methods[-2:],
            ["tools/call", "tools/call (result)"],
            f"the last two entries of {name}",
            hint="list the tools, then call calculator_add once, inside the async with block",
        )
    check.equal(
        only_sse,
        set(sse_methods) - set(http_methods),
        "only_sse",
        hint="the entries of sse_methods that are not in http_methods: set(sse_methods) - set(http_methods)",
    )
    check.equal(
        only_http,
        set(http_methods) - set(sse_methods),
        "only_http",
        hint="the entries of http_methods that are not in sse_methods",
    )
    check.equal(
        only_sse,
        SSE_ONLY,
        "the messages only the SSE connection has",
        hint="use teaching_client's default mode on both; with mode='legacy' streamable HTTP does the handshake too",
    )
    check.equal(
        only_http,
        HTTP_ONLY,
        "the messages only the streamable-HTTP connection has",
        hint="connect to calculator_target('streamable-http') in teaching_client's default mode",
    )
    print(f"found: only over SSE {sorted(only_sse)}\n       only over streamable HTTP {sorted(only_http)}")
