"""Lesson 05's exercise checks (mcp_teach.exercises.l05): the real solutions pass, wrong answers fail with
expected / found / hint, and missing ones are "not attempted" (an error while grading)."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from exercise_support import failed_with, passed

from mcp_teach.client import teaching_client
from mcp_teach.display.json_diff import diff_captures
from mcp_teach.exercises import ExerciseNotAttempted, check
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http, stdio_transport
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.raw_stdio import RawStdioServer

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


async def _session(
    target, mode="legacy", calls=(("calculator_multiply", 6, 7), ("calculator_subtract", 42, 2)), *, listed=True
):
    capture = CaptureTransport(target)
    async with teaching_client(capture, mode=mode) as client:
        if listed:
            await client.list_tools()
        for tool, a, b in calls:
            await client.call_tool(tool, {"a": a, "b": b})
    return capture


@pytest.fixture(scope="module")
def stdio_and_sse(tmp_path_factory):
    """The solution of 05.1, run for real."""
    log_file = tmp_path_factory.mktemp("stdio") / "server.log"

    async def solve():
        stdio_capture = await _session(stdio_transport(log_file=log_file))
        async with serve_http("sse") as url:
            sse_capture = await _session(url)
        return stdio_capture, sse_capture

    stdio_capture, sse_capture = asyncio.run(solve())
    my_diff = diff_captures({"stdio": stdio_capture, "sse": sse_capture})
    return {"stdio_capture": stdio_capture, "sse_capture": sse_capture, "my_diff": my_diff}


def test_05_1_the_real_sessions_pass(stdio_and_sse, capsys):
    check("05.1", stdio_and_sse)
    assert "found: identical: all 9 messages" in passed(capsys, "05.1")


@pytest.mark.wrong_answer("05.1")
def test_05_1_a_modern_stdio_session_fails_with_the_era_hint(stdio_and_sse, run):
    in_memory = run(_session, build_calculator_server(), "auto")
    failed_with("05.1", {**stdio_and_sse, "stdio_capture": in_memory}, "StdioTransport", "stdio_transport()")


@pytest.mark.wrong_answer("05.1")
def test_05_1_other_calls_fail(stdio_and_sse, run):
    async def other_calls():
        async with serve_http("sse") as url:
            return await _session(url, calls=(("calculator_add", 1, 2), ("calculator_subtract", 42, 2)))

    failed_with("05.1", {**stdio_and_sse, "sse_capture": run(other_calls)}, "the tools called in sse_capture")


@pytest.mark.wrong_answer("05.1")
def test_05_1_calls_before_the_tools_are_listed_fail(stdio_and_sse, run):
    async def unlisted():
        async with serve_http("sse") as url:
            return await _session(url, listed=False)

    failed_with("05.1", {**stdio_and_sse, "sse_capture": run(unlisted)}, "the first tools request", "list_tools()")


@pytest.mark.wrong_answer("05.1")
def test_05_1_a_diff_in_the_other_order_fails(stdio_and_sse):
    reversed_diff = diff_captures({"sse": stdio_and_sse["sse_capture"], "stdio": stdio_and_sse["stdio_capture"]})
    failed_with("05.1", {**stdio_and_sse, "my_diff": reversed_diff}, "stdio first")


@pytest.mark.wrong_answer("05.1")
def test_05_1_streamable_http_instead_of_sse_fails(stdio_and_sse, run):
    async def streamable():
        async with serve_http("streamable-http") as url:
            return await _session(url)

    failed_with(
        "05.1", {**stdio_and_sse, "sse_capture": run(streamable)}, "the first HTTP request", "serve_http('sse')"
    )


@pytest.mark.wrong_answer("05.1")
def test_05_1_other_numbers_over_sse_fail(stdio_and_sse, run):
    async def other_numbers():
        async with serve_http("sse") as url:
            return await _session(url, calls=(("calculator_multiply", 3, 4), ("calculator_subtract", 12, 5)))

    sse_capture = run(other_numbers)
    answers = {**stdio_and_sse, "sse_capture": sse_capture}
    answers["my_diff"] = diff_captures({"stdio": stdio_and_sse["stdio_capture"], "sse": sse_capture})
    failed_with("05.1", answers, "the differing messages", "'params.arguments.a'", "same arguments on both")


@pytest.mark.wrong_answer("05.1")
def test_05_1_a_diff_under_other_names_fails(stdio_and_sse):
    renamed = diff_captures(
        {"stdio_capture": stdio_and_sse["stdio_capture"], "sse_capture": stdio_and_sse["sse_capture"]}
    )
    failed_with("05.1", {**stdio_and_sse, "my_diff": renamed}, "the names compared in my_diff", "stdio first, then sse")


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
POST_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def handshake_by_hand(url, http, tools_list=TOOLS_LIST):
    """The solution of 05.2 (``tools_list``: the request it lists the tools with)."""
    replies = [await http.post(url, json=INITIALIZE, headers=POST_HEADERS)]
    session = POST_HEADERS | {
        "mcp-session-id": replies[0].headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    replies.append(await http.post(url, json=INITIALIZED, headers=session))
    replies.append(await http.post(url, json=tools_list, headers=session))
    replies.append(await http.delete(url, headers=session))
    replies.append(await http.post(url, json=TOOLS_LIST, headers=session))
    return replies


async def handshake_with(url, http, *, initialized=INITIALIZED, accept=None, version="2025-11-25"):
    """05.2 with one thing changed: the notification sent, the accept header, the protocol version sent later."""
    headers = POST_HEADERS if accept is None else POST_HEADERS | {"accept": accept}
    replies = [await http.post(url, json=INITIALIZE, headers=headers)]
    session = headers | {"mcp-session-id": replies[0].headers["mcp-session-id"]}
    session |= {"mcp-protocol-version": version} if version else {}
    replies.append(await http.post(url, json=initialized, headers=session))
    replies.append(await http.post(url, json=TOOLS_LIST, headers=session))
    replies.append(await http.delete(url, headers=session))
    replies.append(await http.post(url, json=TOOLS_LIST, headers=session))
    return replies


@pytest.mark.wrong_answer("05.2")
@pytest.mark.parametrize(
    ("changed", "fragments"),
    [
        (
            {"initialized": INITIALIZED | {"id": 1}},
            ("the body of the notifications/initialized POST", "expected no id", "a notification is one-way"),
        ),
        ({"accept": "application/json"}, ("the accept header of the initialize POST", "both reply formats")),
        ({"version": None}, ("the mcp-protocol-version of request 2", "found None", "the version agreed there")),
        ({"version": "2026-07-28"}, ("the mcp-protocol-version of request 2", "found '2026-07-28'")),
    ],
    ids=["notification-with-an-id", "accept-json-only", "no-protocol-version", "the-modern-version"],
)
def test_05_2_a_wrong_header_or_body_fails(changed, fragments):
    async def wrong(url, http):
        return await handshake_with(url, http, **changed)

    failed_with("05.2", {"handshake_by_hand": wrong}, *fragments)


@pytest.mark.wrong_answer("05.2")
def test_05_2_returning_the_statuses_fails():
    async def statuses(url, http):
        return [reply.status_code for reply in await handshake_by_hand(url, http)]

    failed_with("05.2", {"handshake_by_hand": statuses}, "what handshake_by_hand returned", "[200, 202, 200, 200, 404]")


def test_05_2_the_real_handshake_passes(capsys):
    check("05.2", {"handshake_by_hand": handshake_by_hand})
    assert "DELETE 200, tools/list 404" in passed(capsys, "05.2")


@pytest.mark.wrong_answer("05.2")
def test_05_2_a_plain_function_fails():
    failed_with("05.2", {"handshake_by_hand": lambda url, http: []}, "an async function")


@pytest.mark.wrong_answer("05.2")
def test_05_2_without_the_session_id_fails_with_the_rule():
    async def forgets_the_id(url, http):
        replies = [await http.post(url, json=INITIALIZE, headers=POST_HEADERS)]
        later = POST_HEADERS | {"mcp-protocol-version": "2025-11-25"}
        replies.append(await http.post(url, json=INITIALIZED, headers=later))
        replies.append(await http.post(url, json=TOOLS_LIST, headers=later))
        replies.append(await http.delete(url, headers=later))
        replies.append(await http.post(url, json=TOOLS_LIST, headers=later))
        return replies

    message = failed_with("05.2", {"handshake_by_hand": forgets_the_id}, "the mcp-session-id of request 2")
    assert "send back the id" in message


@pytest.mark.wrong_answer("05.2")
def test_05_2_an_id_used_twice_in_the_session_fails():
    async def same_id(url, http):
        return await handshake_by_hand(url, http, TOOLS_LIST | {"id": 1})  # initialize's id again

    failed_with("05.2", {"handshake_by_hand": same_id}, "the ids of the requests [1, 1]", "MUST NOT have been used")


@pytest.mark.wrong_answer("05.2")
def test_05_2_without_the_delete_fails():
    async def no_delete(url, http):
        replies = await handshake_by_hand(url, http)
        return replies[:3] + replies[4:]

    failed_with("05.2", {"handshake_by_hand": no_delete}, "the requests sent", "then DELETE")


@pytest.mark.wrong_answer("05.2")
def test_05_2_an_error_in_the_function_is_reported_as_found():
    async def broken(url, http):
        raise KeyError("mcp-session-id")

    failed_with("05.2", {"handshake_by_hand": broken}, "KeyError")


def header_value(value):
    """The solution of 05.3."""
    plain = value == value.strip() and all(" " <= c <= "~" for c in value)
    if plain and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def test_05_3_the_real_encoder_passes(capsys):
    check("05.3", {"header_value": header_value})
    assert "5 Base64-encoded" in passed(capsys, "05.3")


@pytest.mark.wrong_answer("05.3")
def test_05_3_sending_every_value_plain_fails_on_the_server():
    message = failed_with("05.3", {"header_value": lambda value: value}, "the server's answer", "not sent")
    assert "=?base64?" in message


@pytest.mark.wrong_answer("05.3")
def test_05_3_encoding_every_value_fails_on_the_plain_ones():
    def always(value):
        return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="

    failed_with("05.3", {"header_value": always}, "header_value('us-west1')", "goes as it is")


@pytest.mark.wrong_answer("05.3")
def test_05_3_forgetting_the_marker_look_alike_fails():
    def no_marker_rule(value):
        plain = value == value.strip() and all(" " <= c <= "~" for c in value)
        return value if plain else header_value(value)

    failed_with("05.3", {"header_value": no_marker_rule}, "'=?base64?literal?='", "looks like the sentinel")


def header_value_that(
    *, plain=lambda value: all(" " <= c <= "~" for c in value) and value == value.strip(), encoded=None
):
    """05.3 with one mistake: which values it keeps ``plain``, or how it ``encoded`` the others."""

    def header_value(value):
        if plain(value) and not (value.startswith("=?base64?") and value.endswith("?=")):
            return value
        return encoded(value) if encoded else "=?base64?" + base64.b64encode(value.encode()).decode() + "?="

    return header_value


@pytest.mark.wrong_answer("05.3")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (
            header_value_that(plain=lambda value: value.isascii() and value.isprintable()),
            ("for ' padded '", "leading or trailing whitespace"),
        ),
        (
            header_value_that(plain=lambda value: value.isascii() and value == value.strip()),
            ("for 'line1\\nline2'", "a control character"),
        ),
        (
            header_value_that(encoded=lambda value: f"=?base64?{base64.b64encode(value.encode())}?="),
            ("for 'Zürich'", "\"=?base64?b'WsO8cmljaA=='?=\"", "b64encode returns bytes"),
        ),
        (
            header_value_that(
                encoded=lambda value: "=?base64?" + base64.b64encode(value.encode("latin-1")).decode() + "?="
            ),
            ("for 'Zürich'", "malformed base64", "its UTF-8 bytes"),
        ),
    ],
    ids=["padded-value-kept-plain", "control-characters-kept-plain", "bytes-shown-in-the-header", "latin-1-bytes"],
)
def test_05_3_a_wrong_rule_or_encoding_fails(wrong, fragments):
    failed_with("05.3", {"header_value": wrong}, "the server's answer to a forecast call", *fragments)


@pytest.fixture(scope="module")
def framing_answers():
    """The solution of 05.4, run for real against the stdio server."""

    async def solve():
        pretty = json.dumps(INITIALIZE, indent=2)
        async with RawStdioServer() as raw_server:
            await raw_server.send(pretty)
            pretty_replies = await raw_server.receive_all()
            compact_reply = await raw_server.exchange(INITIALIZE)
        return {
            "raw_server": raw_server,
            "pretty_replies": pretty_replies,
            "compact_reply": compact_reply,
            "pretty_lines": len(pretty.splitlines()),
        }

    return asyncio.run(solve())


def test_05_4_the_real_answers_pass(framing_answers, capsys):
    check("05.4", framing_answers)
    assert "13 lines → 13 replies" in passed(capsys, "05.4")


@pytest.mark.wrong_answer("05.4")
def test_05_4_a_wrong_line_count_fails(framing_answers):
    failed_with("05.4", {**framing_answers, "pretty_lines": 1}, "pretty_lines", "splits its input at every newline")


@pytest.mark.wrong_answer("05.4")
def test_05_4_the_dict_sent_instead_of_the_pretty_text_fails(run):
    async def compact_first():
        async with RawStdioServer() as raw_server:
            first = await raw_server.exchange(INITIALIZE)
            second = await raw_server.exchange(INITIALIZE)
        return {"raw_server": raw_server, "pretty_replies": [first], "compact_reply": second, "pretty_lines": 13}

    failed_with("05.4", run(compact_first), "one Parse error per line")


def compact_to_another_server(framing_answers):
    """raw_server as it is when the compact line went to a second ``async with RawStdioServer()``: its capture
    holds only that line and its reply."""
    second = RawStdioServer()
    second.capture.messages = framing_answers["raw_server"].capture.messages[-2:]
    return {**framing_answers, "raw_server": second}


@pytest.mark.wrong_answer("05.4")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (lambda answers: {**answers, "pretty_lines": 12}, ("pretty_lines: expected 13, found 12", "every newline")),
        (
            lambda answers: {**answers, "pretty_lines": len(json.dumps(INITIALIZE, indent=2))},
            ("pretty_lines", "count the lines"),
        ),
        (lambda answers: {**answers, "pretty_replies": answers["pretty_replies"][0]}, ("pretty_replies", "receive()")),
        (
            lambda answers: {**answers, "pretty_replies": answers["pretty_replies"][:1]},
            ("the (id, error code) of each reply in pretty_replies", "one Parse error per line"),
        ),
        (compact_to_another_server, ("the directions of the messages in raw_server.capture", "to the same raw_server")),
    ],
    ids=[
        "counts-the-newlines",
        "counts-the-characters",
        "one-reply-received",
        "first-reply-kept",
        "compact-to-another-server",
    ],
)
def test_05_4_a_wrong_count_or_reply_fails(framing_answers, wrong, fragments):
    failed_with("05.4", wrong(framing_answers), *fragments)


@pytest.mark.parametrize("exercise_id", ["05.1", "05.2", "05.3", "05.4"])
def test_missing_answers_are_not_attempted(exercise_id, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check(exercise_id, {})
    assert f"Exercise {exercise_id} — not attempted yet" in capsys.readouterr().out
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, {})
