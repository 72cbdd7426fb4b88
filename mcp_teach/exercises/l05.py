"""The expectations of lesson 05 (three transports): the check cells ``check("05.1")`` … ``check("05.4")`` call them.

Each function gets a :class:`~mcp_teach.exercises.check.Checker` and the names the student's solution defines.
05.1 and 05.4 read the captures and replies the student's code produced; 05.2 and 05.3 run the student's function
against a fresh server of their own, in a worker thread (:func:`run_sync`): a check is a plain function, called
while the kernel's event loop is running the cell.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import httpx2
from fastmcp import FastMCP
from fastmcp.client.transports import StdioTransport
from pydantic import Field

from mcp_teach.display.json_diff import CaptureDiff, diff_captures
from mcp_teach.exercises.answers import SESSION_HEADER, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import say
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.modern_post import modern_post
from mcp_teach.wire.raw_stdio import RawStdioServer
from mcp_teach.wire.sse import sse_events

LEGACY = "2025-11-25"
#: What exercise 05.2 sends, in order: (HTTP method, JSON-RPC method), and the status each must get.
HANDSHAKE = (
    ("POST", "initialize", 200),
    ("POST", "notifications/initialized", 202),
    ("POST", "tools/list", 200),
    ("DELETE", None, 200),
    ("POST", "tools/list", 404),
)
HANDSHAKE_HINTS = {
    200: "POST initialize with accept: application/json, text/event-stream and content-type: application/json",
    202: "a notification has no id; the server accepts it with 202 once it carries the session id",
    404: "after the DELETE the server has ended the session: a request with its id MUST get 404",
}
#: Exercise 05.3's values: plain ones go as they are, the others need the Base64 sentinel form.
PLAIN_VALUES = ("us-west1", "us west 1")
ENCODED_VALUES = ("Zürich", " padded ", "line1\nline2", "tab\tat the end\t", "=?base64?literal?=")


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
        requests = [m for m in capture.capture.requests() if m.message["method"] in ("tools/list", "tools/call")]
        check.equal(
            requests[0].message["method"] if requests else None,
            "tools/list",
            f"the first tools request of {name}",
            hint="list the tools first (await client.list_tools()), then call them",
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
    say(f"found: {my_diff.verdict()}")


def _body(reply: httpx2.Response) -> Any:
    """The JSON body of the request ``reply`` answers, or None."""
    try:
        return json.loads(reply.request.content) if reply.request.content else None
    except ValueError:
        return None


def _body_method(request: httpx2.Request) -> Any:
    try:
        body = json.loads(request.content) if request.content else None
    except ValueError:
        return "(not JSON)"
    return body.get("method") if isinstance(body, dict) else body


def _tool_names(reply: httpx2.Response) -> list[str]:
    """The tool names in a tools/list reply, whether it came as one JSON body or as an event stream."""
    texts = [e.data for e in sse_events(reply.text)] if "event-stream" in reply.headers.get("content-type", "") else []
    names = []
    for text in texts or [reply.text]:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            names += [tool["name"] for tool in json.loads(text)["result"]["tools"]]
    return names


async def _handshake_on_a_fresh_server(handshake_by_hand: Callable[..., Awaitable[Any]]) -> Any:
    async with serve_http("streamable-http") as url, httpx2.AsyncClient(timeout=30) as http:
        return await handshake_by_hand(url, http)


@exercise("05.2", answers=("handshake_by_hand",))
def the_handshake_by_hand(check: Checker, handshake_by_hand: Any) -> None:
    """The 2025-11-25 session over streamable HTTP sent request by request, the session id carried by hand."""
    check.async_function(
        handshake_by_hand,
        "handshake_by_hand",
        expected="an async function (url, http) -> list of httpx2 responses",
        hint="async def handshake_by_hand(url, http): ... return [reply, ...]",
    )
    replies = check.runs(
        run_sync,
        _handshake_on_a_fresh_server(handshake_by_hand),
        what="handshake_by_hand(url, http) on a fresh server",
        expected="a list of responses",
        hint="run it yourself on serve_http('streamable-http') and print each reply's status and headers",
    )
    check.true(
        isinstance(replies, list) and all(isinstance(reply, httpx2.Response) for reply in replies),
        "what handshake_by_hand returned",
        expected="a list of httpx2.Response",
        found=replies,
        hint="collect what each `await http.post(...)` / `await http.delete(...)` returns",
    )
    check.equal(
        [(reply.request.method, _body_method(reply.request)) for reply in replies],
        [(method, body) for method, body, _ in HANDSHAKE],
        "the requests sent: (HTTP method, JSON-RPC method)",
        hint="initialize, notifications/initialized, tools/list, then DELETE (no body), then tools/list once more",
    )
    for reply in replies:
        if reply.request.method == "POST":
            accept = reply.request.headers.get("accept", "")
            check.true(
                "application/json" in accept and "text/event-stream" in accept,
                f"the accept header of the {_body_method(reply.request)} POST",
                expected="both application/json and text/event-stream",
                found=accept,
                hint="a client MUST list both reply formats (2025-11-25, basic/transports, Sending Messages)",
            )
    initialized = _body(replies[1])
    check.true("id" not in initialized, "the body of the notifications/initialized POST", expected="no id",
               found=initialized, hint="a notification is one-way, so it has no id: the receiver MUST NOT answer it "
               "(2025-11-25, basic/index, Notifications)")  # fmt: skip
    in_session = replies[: [reply.request.method for reply in replies].index("DELETE")]  # the session ends there
    ids = [body["id"] for body in map(_body, in_session) if isinstance(body, dict) and "id" in body]
    check.equal(
        len(set(ids)),
        len(ids),
        f"the ids of the requests {ids}",
        hint="a request id MUST NOT have been used before by the requestor within the same session (2025-11-25, "
        "basic/index, Requests): 1, 2, 3, …",
    )
    check.equal(replies[0].status_code, 200, "the status of the initialize reply", hint=HANDSHAKE_HINTS[200])
    session_id = replies[0].headers.get(SESSION_HEADER)
    check.true(
        session_id is not None,
        "the initialize reply",
        expected="an mcp-session-id header",
        found=dict(replies[0].headers),
        hint="send initialize without an mcp-session-id: the server issues one in its reply",
    )
    for number, reply in enumerate(replies[1:], start=2):
        request = reply.request
        check.equal(
            request.headers.get(SESSION_HEADER),
            session_id,
            f"the mcp-session-id of request {number}",
            hint="send back the id of the initialize reply's mcp-session-id header on every later request",
        )
        check.equal(
            request.headers.get("mcp-protocol-version"),
            LEGACY,
            f"the mcp-protocol-version of request {number}",
            hint="after initialize every request carries the version agreed there, 2025-11-25",
        )
    for number, (reply, (_, method, status)) in enumerate(zip(replies, HANDSHAKE, strict=True), start=1):
        check.equal(
            reply.status_code,
            status,
            f"the status of reply {number} ({method or 'DELETE'})",
            hint=HANDSHAKE_HINTS.get(status, "send the session id and the protocol version"),
        )
    tools = _tool_names(replies[2])
    check.true(
        "calculator_add" in tools,
        "the tools in the tools/list reply",
        expected="calculator_add among them",
        found=tools,
        hint="the reply is an event stream: the result is in the data: line of its message event",
    )
    say(
        f"found: initialize 200 (session id issued), initialized 202, tools/list 200 ({len(tools)} tools), "
        "DELETE 200, tools/list 404"
    )


def forecast_server() -> FastMCP:
    """The lesson's one-tool server whose ``region`` parameter is mirrored into ``Mcp-Param-Region``."""
    server = FastMCP("mcp-teach-forecast", version="1.0.0")

    @server.tool
    def forecast(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], days: int = 1) -> str:
        """A made-up weather forecast for a cloud region."""
        return f"{days}-day forecast for {region}: sunny"

    return server


async def _send_forecasts(header_values: dict[str, str]) -> dict[str, str]:
    """POST a forecast call per region with the given Mcp-Param-Region; what the server answered, in words."""
    answers = {}
    async with serve_http("streamable-http", server=forecast_server()) as url, httpx2.AsyncClient() as http:
        for region, header in header_values.items():
            post = modern_post("tools/call", {"name": "forecast", "arguments": {"region": region}})
            try:
                reply = await http.post(url, json=post.body, headers=post.headers | {"mcp-param-region": header})
            except Exception as error:  # httpx2 refuses a header value it cannot send
                answers[region] = f"not sent: {error}"
                continue
            error = reply.json().get("error") if reply.status_code != 200 else None
            answers[region] = f"{reply.status_code}" + (f" {error['code']}: {error['message']}" if error else "")
    return answers


def _encoding_hint(value: str, sent: str) -> str:
    """Which Value Encoding rule ``value`` falls under, in words (or what went wrong in ``sent``, the header)."""
    if sent.startswith(("=?base64?b'", '=?base64?b"')):
        return "b64encode returns bytes, and an f-string shows them as b'…': decode them to a str first"
    if value.startswith("=?base64?") and value.endswith("?="):
        return "a plain value that looks like the sentinel (=?base64?…?=) must be encoded too, or it would be decoded"
    if value != value.strip():
        return "leading or trailing whitespace: encode it (a header's ends are trimmed on the way)"
    if not value.isascii():
        return "not ASCII: =?base64?…?= with the Base64 of its UTF-8 bytes"
    return "a control character (a newline, a tab): =?base64?…?= with the Base64 of its UTF-8 bytes"


@exercise("05.3", answers=("header_value",))
def encode_a_header_value(check: Checker, header_value: Any) -> None:
    """Mcp-Param values encoded as the Value Encoding rules say, and accepted by a real server."""
    check.function(
        header_value, "header_value", expected="a function (value: str) -> str", hint="def header_value(value): ..."
    )
    encoded = {}
    for value in (*PLAIN_VALUES, *ENCODED_VALUES):
        what = f"header_value({value!r})"
        encoded[value] = check.runs(header_value, value, what=what, expected="a str", hint="it must work for any str")
        check.instance(encoded[value], str, what, hint="return the header value as a str")
    answers = run_sync(_send_forecasts(encoded))
    for value, answer in answers.items():
        check.equal(
            answer,
            "200",
            f"the server's answer to a forecast call for {value!r} with Mcp-Param-Region: {encoded[value]!r}",
            hint=_encoding_hint(value, encoded[value]),
        )
    for value in PLAIN_VALUES:
        check.equal(encoded[value], value, f"header_value({value!r})", hint="a value safe in a header goes as it is")
    for value in ENCODED_VALUES:
        check.equal(
            encoded[value],
            "=?base64?" + base64.b64encode(value.encode()).decode() + "?=",
            f"header_value({value!r})",
            hint="non-ASCII, control characters, leading or trailing whitespace and values that look like the "
            "sentinel are all encoded",
        )
    say(
        f"found: {len(PLAIN_VALUES)} values sent as they are, {len(ENCODED_VALUES)} Base64-encoded; the server "
        "accepted every call"
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
    check.instance(pretty_replies, list, "pretty_replies", hint="receive() reads one reply; receive_all() every one")
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
    say(
        f"found: {pretty_lines} lines → {len(pretty_replies)} replies, each error -32700 with id null; "
        "one line → the initialize result"
    )
