"""The expectations of lesson 01 (the handshake): the check cells ``check("01.1")`` … ``check("01.4")`` call them.

Each function gets a :class:`~mcp_teach.exercises.check.Checker` and the names the student's solution defines.
Where a check compares with what the lesson itself captured (the ``legacy`` and ``modern`` captures of
sections 1 and 4), it captures the same again on a fresh in-memory connection (:func:`legacy_handshake`,
:func:`modern_opening`), in a worker thread: a check is a plain function, called while the kernel's event
loop is running.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from typing import Any

from mcp_teach.client import teaching_client
from mcp_teach.exercises.answers import SESSION_HEADER, made_capture, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.l00 import NEW_IDS, repeated_ids
from mcp_teach.exercises.language import say
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture

#: The three messages of a 2025-11-25 opening, as ``Capture.methods()`` names them.
HANDSHAKE = ["initialize", "initialize (result)", "notifications/initialized"]
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


async def _opening(mode: str) -> Capture:
    """A calculator session in memory: the handshake alone (legacy), or ``server/discover`` and ``tools/list``."""
    capture = CaptureTransport(build_calculator_server())
    async with teaching_client(capture, mode=mode) as client:
        if mode != "legacy":
            await client.list_tools()
    return capture.capture


def legacy_handshake() -> Capture:
    """What section 1 captures: the course client's 2025-11-25 handshake with a calculator, in memory."""
    return run_sync(_opening("legacy"))


def modern_opening() -> Capture:
    """What section 4 captures: ``server/discover`` and ``tools/list`` at 2026-07-28, in memory."""
    return run_sync(_opening("auto"))


def kinds(capture: Capture) -> dict[str, int]:
    """How many requests, responses (error responses included) and notifications ``capture`` holds."""
    return dict(Counter("response" if wire.kind == "error" else wire.kind for wire in capture))


@exercise("01.1", answers=("http_capture", "session_header"))
def handshake_over_http(check: Checker, http_capture: Any, session_header: Any) -> None:
    """The 2025-11-25 handshake over streamable HTTP: same three messages, plus a session header."""
    capture = made_capture(check, http_capture, "http_capture", "CaptureTransport(url)")
    check.equal(
        capture.methods(),
        HANDSHAKE,
        "the messages in http_capture",
        hint="connect with mode='legacy' and do nothing in the block; the default mode starts with server/discover",
    )
    check.equal(
        [m.message for m in capture],
        [m.message for m in legacy_handshake()],
        "the handshake over HTTP compared with an in-memory one",
        hint="use teaching_client without extra options: its clientInfo and capabilities are fixed",
    )
    exchanges = capture.http
    check.true(
        len(exchanges) >= 2,
        "the HTTP exchanges in http_capture.capture.http",
        expected="at least two POSTs (initialize, notifications/initialized)",
        found=len(exchanges),
        hint="connect to the URL that serve_http('streamable-http') yields; an in-memory connection has no HTTP",
    )
    check.instance(session_header, str, "session_header", hint="store the header's name as a string")
    name = session_header.lower()
    check.true(
        name in exchanges[0].response_headers,
        "the headers of the server's first HTTP response",
        expected=f"a header named {name!r}",
        found="none of that name",
        hint="print sorted(http_capture.capture.http[0].response_headers)",
    )
    sent_back = [exchange.request_headers.get(name) for exchange in exchanges[1:]]
    check.true(
        all(value == exchanges[0].response_headers[name] for value in sent_back),
        f"the {name!r} header of every later request",
        expected="the value the server sent in its first response",
        found=sent_back,
        hint="the client sends the session header back unchanged with every later request (request_headers)",
    )
    check.true(
        name == SESSION_HEADER,
        "session_header",
        expected="the header that names the session",
        found=name,
        hint=f"{name!r} comes back too, but names no session: find the header named after MCP",
    )
    say(f"found: {', '.join(capture.methods())}")
    say(f"       the session header {name} came back on every later request")


@exercise("01.2", answers=("classify", "legacy_counts", "modern_counts"))
def count_and_classify(check: Checker, classify: Any, legacy_counts: Any, modern_counts: Any) -> None:
    """Tell requests, responses and notifications apart by their members, then count both captures."""
    check.function(classify, "classify", hint="def classify(message): ...")
    examples = [
        ({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, "request", "a request has a 'method' and an 'id'"),
        (
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            "notification",
            "a notification has a 'method' but no 'id'",
        ),
        ({"jsonrpc": "2.0", "id": 7, "result": {}}, "response", "a response: no 'method'; its 'id' is the request's"),
        (
            {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}},
            "response",
            "an error answers a request as a result does: it is a response",
        ),
        (
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}},
            "response",
            "an error about a line the server could not read may have no 'id' (MCP's schema, lesson 03):"
            " having no 'method' makes it a response, not having an 'id'",
        ),
        (
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
            "response",
            'an error about a line the server could not read may carry "id": null (JSON-RPC 2.0): still a response',
        ),
        (
            {"jsonrpc": "2.0", "id": 0, "method": "ping"},
            "request",
            "an id of 0 is still an id: test 'id' in message, not whether the id is truthy",
        ),
    ]
    for message, kind, hint in examples:
        check.equal(classify(message), kind, f"classify({message})", hint=hint)
    for name, counts, capture in [
        ("legacy_counts", legacy_counts, legacy_handshake()),
        ("modern_counts", modern_counts, modern_opening()),
    ]:
        check.true(
            hasattr(counts, "items"),
            name,
            expected="a dict (or Counter) of kind -> number",
            found=counts,
            hint="Counter(classify(wire.message) for wire in ...capture)",
        )
        check.equal(
            {kind: n for kind, n in dict(counts).items() if n},
            kinds(capture),
            name,
            hint="count classify(wire.message) for every wire in the capture",
        )
    say("legacy:", dict(legacy_counts), " modern:", dict(modern_counts))


@exercise("01.3", answers=("my_version", "raw", "negotiated"))
def propose_a_version(check: Checker, my_version: Any, raw: Any, negotiated: Any) -> None:
    """One hand-written initialize with a version of the student's choice, and the server's answer."""
    check.true(
        isinstance(my_version, str) and my_version != "2025-11-25",
        "my_version",
        expected="a version string other than '2025-11-25'",
        found=my_version,
        hint="every client proposes 2025-11-25 anyway; choose another version to see what the server decides",
    )
    capture = made_capture(check, raw, "raw", "RawMemoryServer() (or RawStdioServer())")
    sent = capture.requests("initialize")
    check.equal(
        len(sent),
        1,
        "initialize requests sent through raw",
        hint="send exactly one, with await raw.exchange(initialize(my_version))",
    )
    proposed = sent[0].message.get("params", {}).get("protocolVersion")
    check.equal(
        proposed, my_version, "the protocolVersion your initialize proposed", hint="pass my_version to initialize(...)"
    )
    answer = capture.response_to(sent[0])
    check.true(
        answer is not None and "result" in answer.message,
        "the server's reply to your initialize",
        expected="a result",
        found=answer and answer.message,
        hint="send a complete initialize request: initialize(my_version) builds one",
    )
    check.true(
        negotiated == answer.message["result"]["protocolVersion"],
        "negotiated compared with the server's answer",
        expected="the protocolVersion the server answered with",
        found=negotiated,
        hint="read reply['result']['protocolVersion']: the server decides, and it does not always agree",
    )
    say(f"asked {my_version}, the server answered {negotiated}")


@exercise("01.4", answers=("discover_server", "envelope_error", "fixed_reply"))
def missing_envelope_key(check: Checker, discover_server: Any, envelope_error: Any, fixed_reply: Any) -> None:
    """A server/discover without clientCapabilities is refused; the corrected one, on the same connection, is not."""
    capture = made_capture(check, discover_server, "discover_server", "RawMemoryServer() (or RawStdioServer())")
    sent = capture.requests("server/discover")
    check.equal(
        len(sent),
        2,
        "server/discover requests sent through discover_server",
        hint="send two on the same connection: the incomplete one, then the corrected one",
    )
    check.equal(repeated_ids([m.message for m in capture.requests()]), [], "the ids you used twice", hint=NEW_IDS)
    meta = sent[0].message.get("params", {}).get("_meta", {})
    check.equal(
        meta.get(PROTOCOL_VERSION),
        "2026-07-28",
        "the protocolVersion in the _meta of your first request",
        hint="keep the version: leave out only clientCapabilities",
    )
    check.true(
        CLIENT_CAPABILITIES not in meta,
        "the _meta of your first request",
        expected=f"no {CLIENT_CAPABILITIES} key",
        found=sorted(meta),
        hint="remove that key, e.g. with del",
    )
    first_reply = capture.response_to(sent[0])
    check.equal(
        envelope_error,
        first_reply and first_reply.message.get("error"),
        "envelope_error compared with the server's first reply",
        hint="store only the reply's 'error' member: reply['error']",
    )
    check.true(
        isinstance(envelope_error, dict) and "code" in envelope_error,
        "envelope_error",
        expected="the error object (code, message) of the server's first reply",
        found=envelope_error,
        hint="a request without a required _meta key is refused with a JSON-RPC error: store reply['error']",
    )
    last_reply = capture.response_to(sent[1])
    check.equal(
        fixed_reply,
        last_reply and last_reply.message,
        "fixed_reply compared with the reply to your second request",
        hint="store the whole reply to the corrected server/discover",
    )
    check.true(
        isinstance(fixed_reply, dict) and "result" in fixed_reply,
        "the reply to your corrected request",
        expected="a result: the server accepted it",
        found=fixed_reply.get("error") if isinstance(fixed_reply, dict) else fixed_reply,
        hint=f"put {CLIENT_CAPABILITIES} back ({{}} is fine)",
    )
    refusal = f"refused with {envelope_error['code']}: {envelope_error['message']}"
    say(textwrap.fill(refusal, 116, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))
    say("then accepted; supportedVersions:", fixed_reply["result"]["supportedVersions"])
