"""Lesson 00's exercises (setup and orientation): what each one expects, for the one-line check cells
``check("00.k")`` of ``notebooks/00_setup.ipynb``.

- 00.1: one ``tools/call`` of ``calculator_multiply`` over streamable HTTP, captured with its HTTP requests;
- 00.2: a short stdio conversation typed by hand (``initialize``, ``notifications/initialized``, ``tools/list``);
- 00.3: the opening of a connection over HTTP+SSE (a 2025-11-25 session) compared with one over streamable HTTP
  (2026-07-28, no session), read from the two captures.

A check compares what a student stored with what their capture recorded, so a value typed by hand (a product, a
list of methods) does not pass without the messages that produce it.

The answers are read from the lesson's globals by :func:`mcp_teach.exercises.catalogue.check`; every check here
only reads them (no server is started).
"""

from __future__ import annotations

from typing import Any

from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import say
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT
from mcp_teach.wire.raw_stdio import RawStdioServer

#: The messages only one of the two connections of 00.3 has.
SSE_ONLY = {"initialize", "initialize (result)", "notifications/initialized"}
HTTP_ONLY = {"server/discover", "server/discover (result)"}
#: Why a request's id is never reused on a connection (2025-11-25, basic/index, Requests).
NEW_IDS = "a request's id must be new on its connection: a reply names the request it answers by that id"


def repeated_ids(messages: list[dict[str, Any]]) -> list[Any]:
    """The ids of requests that reuse an id an earlier request of the same connection had: each must be new."""
    ids = [message["id"] for message in messages if "method" in message and "id" in message]
    return [request_id for at, request_id in enumerate(ids) if request_id in ids[:at]]


@exercise("00.1", answers=("product", "http_capture"))
def call_over_streamable_http(check: Checker, product: Any, http_capture: Any) -> None:
    """``http_capture`` saw one ``calculator_multiply`` call go over ``POST /mcp``; ``product`` is what it returned."""
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
        hint="call calculator_multiply once, through the client you connected to http_capture: the check reads it",
    )
    check.equal(
        calls[0].message["params"].get("arguments"),
        {"a": 6, "b": 7},
        "the arguments of your tools/call",
        hint="arguments is one JSON object with a number for each parameter, a and b, as the task gives them",
    )
    paths = sorted({exchange.target for exchange in http_capture.capture.http})
    check.contains(
        paths,
        "/mcp",
        "the HTTP paths your messages were sent to",
        hint="connect to the URL that serve_http('streamable-http') yields (it ends in /mcp), not to a server object",
    )
    check.equal(
        product,
        42.0,
        "product, the value calculator_multiply returned",
        hint="store result.data, the value your call returned: not the result object, not its text",
    )
    posts = sum(1 for exchange in http_capture.capture.http if exchange.method == "POST")
    say(f"found: product = {product!r}, {len(http_capture.capture)} messages in {posts} POSTs to {', '.join(paths)}")


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
    check.equal(repeated_ids(sent), [], "the ids your requests used twice on this connection", hint=NEW_IDS)
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
    check.instance(tool_names, list, "tool_names", hint="a list of names: take each tool's 'name' from the reply")
    check.true(
        sorted(map(str, tool_names)) == sorted(tool["name"] for tool in received[1]["result"]["tools"]),
        "tool_names compared with the tools/list reply",
        expected="the name of every tool in the reply's result.tools",
        found=tool_names,
        hint="take each tool's 'name' from reply['result']['tools']: a tool itself is a dict",
    )
    say(f"found: {len(sent)} lines sent, {len(received)} received\n       tools {tool_names}")


@exercise("00.3", answers=("sse_capture", "streamable_capture", "sse_methods", "http_methods", "only_sse", "only_http"))
def two_openings(check: Checker, *answers: Any) -> None:
    """Both connections end with the same call; only their openings differ: ``initialize`` or ``server/discover``.

    Each list of methods must be what its capture recorded over its transport: the table of section 3 lets a student
    type one without connecting.
    """
    sse_capture, streamable_capture, sse_methods, http_methods, only_sse, only_http = answers
    for name, capture, connection, listed, methods in [
        ("sse_capture", sse_capture, "sse", "sse_methods", sse_methods),
        ("streamable_capture", streamable_capture, "streamable-http", "http_methods", http_methods),
    ]:
        check.instance(capture, CaptureTransport, name, hint="keep the CaptureTransport your client connected through")
        paths = sorted({exchange.target.split("?")[0] for exchange in capture.capture.http})
        check.contains(
            paths,
            "/sse" if connection == "sse" else "/mcp",
            f"the HTTP paths {name} recorded",
            hint=f"capture a client connected to what calculator_target({connection!r}) yields",
        )
        check.instance(methods, list, listed, hint=f"store {name}.capture.methods(), the list of method names")
        check.true(
            methods == capture.capture.methods(),
            f"{listed} compared with what {name} recorded",
            expected=f"the names of the messages {name} recorded, in wire order",
            found=methods,
            hint=f"store {name}.capture.methods(): the messages that crossed the wire, not a list typed by hand",
        )
        check.equal(
            methods[-2:],
            ["tools/call", "tools/call (result)"],
            f"the last two entries of {listed}",
            hint="list the tools, then call calculator_add once, inside the async with block",
        )
    lists = {"sse_methods": sse_methods, "http_methods": http_methods}
    for name, found, mine, theirs in [
        ("only_sse", only_sse, "sse_methods", "http_methods"),
        ("only_http", only_http, "http_methods", "sse_methods"),
    ]:
        check.true(
            found == set(lists[mine]) - set(lists[theirs]),
            name,
            expected=f"the set of the entries of {mine} that are not in {theirs}",
            found=found,
            hint=f"compute it from your lists: the names in {mine} that {theirs} lacks, as a set",
        )
    check.true(
        (only_sse, only_http) == (SSE_ONLY, HTTP_ONLY),
        "the messages only one of the two connections has",
        expected="the messages by which a 2025-11-25 opening and a 2026-07-28 one differ",
        found=f"only_sse={sorted(only_sse)}, only_http={sorted(only_http)}",
        hint="use teaching_client's default mode on both; with mode='legacy' streamable HTTP does the handshake too",
    )
    say(f"found: only over SSE {sorted(only_sse)}\n       only over streamable HTTP {sorted(only_http)}")
