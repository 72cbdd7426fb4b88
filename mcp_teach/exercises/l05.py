"""The expectations of lesson 05 (three transports): the check cells ``check("05.1")`` … ``check("05.4")`` call them.

Each function gets a :class:`~mcp_teach.exercises.check.Checker` and the names the student's solution defines.
The checks read the captures, HTTP exchanges and replies the student's code produced; 05.3 also runs fresh
sessions of its own (:func:`requests_in_sessions`), in a worker thread: a check is a plain function, called
while the kernel's event loop is running the cell.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import httpx2
from fastmcp.client.transports import StdioTransport

from mcp_teach.client import teaching_client
from mcp_teach.display.show import table
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.lessons.l05_diff import CaptureDiff, diff_captures
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.raw_stdio import RawStdioServer

T = TypeVar("T")

SESSION_HEADER = "mcp-session-id"
#: The (transport, mode) pairs of exercise 05.3 that use HTTP.
HTTP_SESSIONS = (("sse", "legacy"), ("streamable-http", "legacy"), ("streamable-http", "auto"))


def run_in_worker(function: Callable[[], Awaitable[T]]) -> T:
    """``await function()`` in a fresh event loop of its own thread (the kernel's loop is busy running the cell)."""

    def main() -> T:
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(function())
        finally:
            _close(loop)

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="check-05") as pool:
        return pool.submit(main).result()


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Close ``loop`` as ``asyncio.run`` would: tasks left behind (a server's shutdown watcher) are cancelled and
    awaited first, so that none is destroyed pending (which logs an error whenever the garbage collector runs)."""
    try:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


async def _requests_in_sessions(transport: str, sessions: Sequence[tuple[str, int]]) -> list[int]:
    counts = []
    async with serve_http(transport) as url:  # type: ignore[arg-type]
        for mode, n in sessions:
            capture = CaptureTransport(url)
            async with teaching_client(capture, mode=mode) as client:
                await client.list_tools()
                for _ in range(n):
                    await client.call_tool("calculator_add", {"a": 1, "b": 2})
            counts.append(len(capture.capture.http))
    return counts


def requests_in_sessions(transport: str, sessions: Sequence[tuple[str, int]]) -> list[int]:
    """The HTTP requests of real sessions on one fresh server: per ``(mode, n)``, list the tools, then n tool calls."""
    return run_in_worker(lambda: _requests_in_sessions(transport, sessions))


@exercise("05.1", answers=("stdio_capture", "sse_capture", "my_diff"))
def same_calls_over_stdio_and_sse(check: Checker, stdio_capture: Any, sse_capture: Any, my_diff: Any) -> None:
    """The same session over stdio and over SSE, compared with diff_captures: no field differs."""
    check.instance(
        stdio_capture, CaptureTransport, "stdio_capture", hint="wrap the target: CaptureTransport(stdio_transport())"
    )
    check.instance(sse_capture, CaptureTransport, "sse_capture", hint="wrap the URL that serve_http('sse') yields")
    check.instance(
        stdio_capture.inner, StdioTransport, "the transport inside stdio_capture", hint="use stdio_transport()"
    )
    check.equal(
        [(exchange.method, exchange.target) for exchange in sse_capture.capture.http[:1]],
        [("GET", "/sse")],
        "the first HTTP request of sse_capture",
        hint="connect to the URL of `async with serve_http('sse') as url:` (it ends in /sse)",
    )
    for name, capture in [("stdio_capture", stdio_capture), ("sse_capture", sse_capture)]:
        check.equal(
            capture.capture.methods()[:1],
            ["initialize"],
            f"the first message of {name}",
            hint="SSE speaks only 2025-11-25: open both sessions with teaching_client(..., mode='legacy')",
        )
        called = [request.message["params"]["name"] for request in capture.capture.requests("tools/call")]
        check.equal(
            called,
            ["calculator_multiply", "calculator_subtract"],
            f"the tools called in {name}",
            hint="call calculator_multiply, then calculator_subtract, once each",
        )
    differences = diff_captures({"stdio": stdio_capture, "sse": sse_capture}).differences()
    check.equal(
        differences,
        [],
        "the differing messages of stdio_capture and sse_capture: (number, capture, fields)",
        hint="same mode, same calls in the same order, same arguments on both transports",
    )
    check.instance(my_diff, CaptureDiff, "my_diff", hint="store what diff_captures({...}) returns")
    check.equal(my_diff.names, ("stdio", "sse"), "the names compared in my_diff", hint="stdio first, then sse")
    check.equal(my_diff.identical, True, "my_diff.identical", hint="compare stdio_capture with sse_capture")
    print(f"found: {my_diff.verdict()}")


def _check_reply(check: Checker, name: str, reply: Any, with_session_id: bool) -> None:
    check.instance(reply, httpx2.Response, name, hint="store what `await http_client.post(...)` returns")
    request = reply.request
    check.equal(request.method, "POST", f"the HTTP method of the request of {name}", hint="POST to the URL")
    try:
        sent = json.loads(request.content)
    except ValueError:
        sent = None
    check.equal(
        sent.get("method") if isinstance(sent, dict) else sent,
        "tools/list",
        f"the JSON-RPC method in the body of the request of {name}",
        hint="send the tools/list request as the JSON body (json=...)",
    )
    check.equal(
        request.headers.get("mcp-protocol-version"),
        "2025-11-25",
        f"the mcp-protocol-version header of the request of {name}",
        hint="send the headers of section 5: this is the session-based era",
    )
    check.equal(
        SESSION_HEADER in request.headers,
        with_session_id,
        f"whether the request of {name} has an mcp-session-id header",
        hint="made_up_reply: with an id you made up; no_session_reply: without the header",
    )


@exercise(
    "05.2", answers=("exchanges", "session_id", "issued_in", "first_sent_back", "made_up_reply", "no_session_reply")
)
def follow_the_session_id(
    check: Checker,
    exchanges: Any,
    session_id: Any,
    issued_in: Any,
    first_sent_back: Any,
    made_up_reply: Any,
    no_session_reply: Any,
) -> None:
    """Where the 2025-11-25 session id is issued and sent back, and what the server does without a valid one."""
    check.true(
        isinstance(exchanges, list) and bool(exchanges) and all(isinstance(e, HttpExchange) for e in exchanges),
        "exchanges",
        expected="the list of HTTP exchanges of legacy['streamable-http']",
        found=exchanges,
        hint="exchanges = legacy['streamable-http'].capture.http",
    )
    check.equal(
        [(e.method, e.target) for e in exchanges[:1]],
        [("POST", "/mcp")],
        "the first exchange in exchanges",
        hint="take the exchanges of the streamable-HTTP session of section 5, legacy['streamable-http']",
    )
    issued = [e.response_headers.get(SESSION_HEADER) for e in exchanges]
    check.true(
        session_id in issued,
        "session_id",
        expected="the value of an mcp-session-id response header in exchanges",
        found=session_id,
        hint="read it from the exchange's response_headers (a new id is issued on every run: do not copy it)",
    )
    check.equal(
        issued_in,
        1,
        "issued_in",
        hint="the server creates the session when it answers initialize (numbering starts at 1)",
    )
    check.equal(
        first_sent_back,
        2,
        "first_sent_back",
        hint="look at request_headers: which is the first request after initialize?",
    )
    _check_reply(check, "made_up_reply", made_up_reply, with_session_id=True)
    _check_reply(check, "no_session_reply", no_session_reply, with_session_id=False)
    made_up = made_up_reply.request.headers[SESSION_HEADER]
    check.true(
        made_up not in issued,
        "the session id sent for made_up_reply",
        expected="an id the server never issued",
        found=made_up,
        hint="make one up, e.g. 32 zeros",
    )
    check.equal(
        made_up_reply.status_code,
        404,
        "the status of made_up_reply",
        hint="the server answers a session id it does not know (or has ended) with 404 Not Found (section 5)",
    )
    check.equal(
        no_session_reply.status_code,
        400,
        "the status of no_session_reply",
        hint="once the server has assigned a session id, every later request must carry it; a server that needs "
        "one answers a request without it (other than initialize) with 400 Bad Request",
    )
    print(
        f"found: issued in exchange #{issued_in}, first sent back in exchange #{first_sent_back}; "
        f"made-up id → {made_up_reply.status_code}, no id → {no_session_reply.status_code}"
    )


@exercise("05.3", answers=("predicted_requests", "five_calls"))
def count_the_http_requests(check: Checker, predicted_requests: Any, five_calls: Any) -> None:
    """A formula for the HTTP requests of a session per transport and era, tested against real sessions."""
    check.true(
        callable(predicted_requests),
        "predicted_requests",
        expected="a function (transport, mode, n) -> number of HTTP requests",
        found=predicted_requests,
        hint="def predicted_requests(transport, mode, n): ...",
    )
    check.true(
        isinstance(five_calls, dict),
        "five_calls",
        expected="a dict keyed by (transport, mode)",
        found=five_calls,
        hint="five_calls[transport, mode] = the CaptureTransport of that session",
    )
    check.equal(
        sorted(five_calls), sorted(HTTP_SESSIONS), "the keys of five_calls", hint="one (transport, mode) per session"
    )
    for key in HTTP_SESSIONS:
        check.instance(five_calls[key], CaptureTransport, f"five_calls[{key}]", hint="store the CaptureTransport")
        capture = five_calls[key].capture
        check.equal(
            len(capture.requests("tools/call")), 5, f"the tools/call requests in five_calls[{key}]", hint="n = 5"
        )
        check.equal(
            capture.methods()[0],
            "initialize" if key[1] == "legacy" else "server/discover",
            f"the first message of five_calls[{key}]",
            hint="pass the mode to teaching_client(..., mode=...)",
        )
        check.equal(
            predicted_requests(*key, 5),
            len(capture.http),
            f"predicted_requests{(*key, 5)} against the HTTP requests in five_calls[{key}]",
            hint="count one request per client message, plus the requests that carry none (section 8)",
        )
    for mode in ("legacy", "auto"):
        check.equal(predicted_requests("stdio", mode, 5), 0, f"predicted_requests('stdio', {mode!r}, 5)", hint="pipes")
    sessions = [(key, 0) for key in HTTP_SESSIONS]  # with the five calls above: two points of each line
    for transport in ("sse", "streamable-http"):
        mine = [(key, n) for key, n in sessions if key[0] == transport]
        found = requests_in_sessions(transport, [(key[1], n) for key, n in mine])
        for ((_, mode), n), count in zip(mine, found, strict=True):
            check.equal(
                predicted_requests(transport, mode, n),
                count,
                f"predicted_requests{(transport, mode, n)} against a real session with {n} tool calls",
                hint="which requests are there once per session, and which once per tool call?",
            )
    print(
        repr(
            table(
                ["transport", "mode", "predicted for n = 5", "HTTP requests captured"],
                [[t, m, predicted_requests(t, m, 5), len(five_calls[t, m].capture.http)] for t, m in HTTP_SESSIONS],
            )
        )
    )


@exercise("05.4", answers=("raw_server", "pretty_replies", "compact_reply", "pretty_lines"))
def break_the_stdio_framing(
    check: Checker, raw_server: Any, pretty_replies: Any, compact_reply: Any, pretty_lines: Any
) -> None:
    """A pretty-printed message is several lines, each a failed message; one line is one message."""
    check.instance(raw_server, RawStdioServer, "raw_server", hint="async with RawStdioServer() as raw_server: ...")
    sent = [m.message for m in raw_server.capture if m.direction == "client->server"]
    check.equal(
        sent[0].get("method") if sent else None,
        "initialize",
        "the JSON-RPC method of the first text sent to raw_server",
        hint="send json.dumps(initialize_request, indent=2) (the string, not the dict) with raw_server.send(...)",
    )
    check.equal(
        pretty_lines,
        len(json.dumps(sent[0], indent=2).splitlines()),
        "pretty_lines",
        hint="count the lines of json.dumps(initialize_request, indent=2): the server splits its input at every "
        "newline",
    )
    check.instance(pretty_replies, list, "pretty_replies", hint="pretty_replies = await raw_server.receive_all()")
    check.equal(
        [(reply.get("id"), reply.get("error", {}).get("code")) for reply in pretty_replies],
        [(None, -32700)] * pretty_lines,
        "the (id, error code) of each reply in pretty_replies",
        hint="send the pretty-printed string with send(), then receive_all(): one Parse error per line",
    )
    check.instance(compact_reply, dict, "compact_reply", hint="send the dict to the same raw_server and keep the reply")
    check.equal(
        (compact_reply.get("id"), compact_reply.get("result", {}).get("protocolVersion")),
        (1, "2025-11-25"),
        "the id and result.protocolVersion of compact_reply",
        hint="the one-line message is whole: the server answers initialize normally",
    )
    directions = [m.direction for m in raw_server.capture]
    check.equal(
        directions,
        ["client->server"] + ["server->client"] * pretty_lines + ["client->server", "server->client"],
        "the directions of the messages in raw_server.capture",
        hint="send both requests to the same raw_server, in one `async with` block: the pretty text, its replies, "
        "then the compact line and its reply",
    )
    print(
        f"found: {pretty_lines} lines → {len(pretty_replies)} replies, each error -32700 with id null; "
        "one line → the initialize result"
    )
