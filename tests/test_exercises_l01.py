"""Lesson 01's exercises: real solutions pass, wrong answers get expected / found / hint, blanks are not attempted."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from support import discover, initialize

from mcp_teach.client import teaching_client
from mcp_teach.exercises import ExerciseFailed, ExerciseNotAttempted, check
from mcp_teach.exercises.l01 import kinds, legacy_handshake, modern_opening
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.raw_memory import RawMemoryServer
from mcp_teach.wire.raw_stdio import RawStdioServer

ANSWERS = {
    "01.1": ("http_capture", "session_header"),
    "01.2": ("classify", "legacy_counts", "modern_counts"),
    "01.3": ("my_version", "raw", "negotiated"),
    "01.4": ("discover_server", "envelope_error", "fixed_reply"),
}


def classify(message: dict) -> str:
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "response"


def passes(exercise_id: str, namespace: dict, capsys: pytest.CaptureFixture[str]) -> str:
    check(exercise_id, namespace)
    printed = capsys.readouterr().out
    assert f"✔ Exercise {exercise_id} passed" in printed
    return printed


def fails(exercise_id: str, namespace: dict, *words: str) -> str:
    with pytest.raises(ExerciseFailed) as failure:
        check(exercise_id, namespace)
    message = str(failure.value)
    for word in ("expected", "found", "Hint:", *words):
        assert word in message
    return message


# 01.1 — the handshake over streamable HTTP


async def http_handshake(mode: str = "legacy") -> CaptureTransport:
    async with serve_http("streamable-http") as url:
        capture = CaptureTransport(url)
        async with teaching_client(capture, mode=mode):
            pass
    return capture


@pytest.fixture(scope="module")
def http_solution(run) -> dict:
    return {"http_capture": run(http_handshake), "session_header": "mcp-session-id"}


def test_01_1_the_solution_passes(http_solution, capsys):
    assert "mcp-session-id came back" in passes("01.1", http_solution, capsys)
    assert passes("01.1", {**http_solution, "session_header": "MCP-Session-Id"}, capsys)


@pytest.mark.wrong_answer("01.1")
def test_01_1_another_header_fails_with_the_hint(http_solution):
    feedback = fails("01.1", {**http_solution, "session_header": "connection"}, "named after MCP")
    assert "mcp-session-id" not in feedback.lower()


@pytest.mark.wrong_answer("01.1")
@pytest.mark.parametrize(
    ("header", "fragments"),
    [
        pytest.param("content-type", ("sends the session header back unchanged",), id="content-type"),
        pytest.param("date", ("sends the session header back unchanged",), id="date-not-sent-back"),
        pytest.param("session-id", ("a header named 'session-id'", "response_headers"), id="a-guessed-name"),
        pytest.param("mcp-protocol-version", ("none of that name",), id="the-version-header"),
    ],
)
def test_01_1_a_header_that_names_no_session_fails_without_naming_it(http_solution, header, fragments):
    """A header of the first response the client does not send back, a guessed name, the version header (which the
    client sends, the server does not)."""
    feedback = fails("01.1", {**http_solution, "session_header": header}, *fragments)
    assert "mcp-session-id" not in feedback.lower()


@pytest.mark.wrong_answer("01.1")
def test_01_1_the_default_mode_fails(run):
    fails("01.1", {"http_capture": run(http_handshake, "auto"), "session_header": "mcp-session-id"}, "mode='legacy'")


@pytest.mark.wrong_answer("01.1")
def test_01_1_an_in_memory_capture_has_no_http(run):
    async def in_memory():
        capture = CaptureTransport(build_calculator_server())
        async with teaching_client(capture, mode="legacy"):
            pass
        return capture

    fails("01.1", {"http_capture": run(in_memory), "session_header": "mcp-session-id"}, "serve_http")


@pytest.mark.wrong_answer("01.1")
def test_01_1_storing_the_messages_instead_of_the_transport_fails(http_solution):
    fails("01.1", {**http_solution, "http_capture": http_solution["http_capture"].capture.messages}, "http_capture")


# 01.2 — count and classify


@pytest.fixture(scope="module")
def lesson_captures(run) -> tuple:
    """The lesson's `legacy` (section 1) and `modern` (section 4) captures, made as the lesson makes them."""

    async def capture_both():
        legacy = CaptureTransport(build_calculator_server())
        async with teaching_client(legacy, mode="legacy"):
            pass
        modern = CaptureTransport(build_calculator_server())
        async with teaching_client(modern) as client:
            await client.list_tools()
        return legacy, modern

    return run(capture_both)


def counts_solution(lesson_captures, classify=classify) -> dict:
    legacy, modern = lesson_captures
    return {
        "classify": classify,
        "legacy_counts": Counter(classify(wire.message) for wire in legacy.capture),
        "modern_counts": Counter(classify(wire.message) for wire in modern.capture),
    }


def test_01_2_the_solution_passes(lesson_captures, capsys):
    printed = passes("01.2", counts_solution(lesson_captures), capsys)
    assert "legacy: {'request': 1, 'response': 1, 'notification': 1}  modern: {'request': 2, 'response': 2}" in printed


def test_01_2_the_checks_own_captures_match_the_lessons(lesson_captures):
    legacy, modern = lesson_captures
    assert [m.message for m in legacy_handshake()] == [m.message for m in legacy.capture]
    assert kinds(modern_opening()) == kinds(modern.capture) == {"request": 2, "response": 2}


@pytest.mark.wrong_answer("01.2")
def test_01_2_an_id_of_zero_is_an_id(lesson_captures):
    def truthy(message):
        if "method" in message:
            return "request" if message.get("id") else "notification"
        return "response"

    fails("01.2", counts_solution(lesson_captures, truthy), "an id of 0 is still an id")


@pytest.mark.wrong_answer("01.2")
def test_01_2_errors_are_responses(lesson_captures):
    def four_kinds(message):
        return "error" if "error" in message else classify(message)

    fails("01.2", counts_solution(lesson_captures, four_kinds), "it is a response")


@pytest.mark.wrong_answer("01.2")
def test_01_2_an_error_without_id_is_a_response(lesson_captures):
    """MCP's schema lets an error about an unreadable line leave `id` out; JSON-RPC 2.0 sends null."""

    def by_id(message):
        if "method" not in message and "id" in message:
            return "response"
        return "request" if "id" in message else "notification"

    assert by_id({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}) == "response"
    message = fails("01.2", counts_solution(lesson_captures, by_id), "may have no 'id'")
    assert "'method' makes it a response" in message


@pytest.mark.wrong_answer("01.2")
def test_01_2_wrong_counts_fail(lesson_captures):
    solution = counts_solution(lesson_captures)
    fails("01.2", {**solution, "modern_counts": {"request": 2, "response": 2, "notification": 1}}, "modern_counts")


def by_result(message: dict) -> str:
    if "result" in message:
        return "response"
    return "request" if "id" in message else "notification"


def by_params(message: dict) -> str:
    if "method" in message:
        return "request" if "params" in message else "notification"
    return "response"


def capitalized(message: dict) -> str:
    return classify(message).capitalize()


@pytest.mark.wrong_answer("01.2")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        pytest.param(by_result, ("an error answers a request as a result does",), id="only-result-is-a-response"),
        pytest.param(by_params, ("a request has a 'method' and an 'id'",), id="params-make-a-request"),
        pytest.param(capitalized, ("expected 'request', found 'Request'",), id="capitalized"),
    ],
)
def test_01_2_a_classify_that_reads_other_members_fails(lesson_captures, wrong, fragments):
    """An error response taken for a request (only `result` makes a response), `params` taken for what makes a
    request (tools/list has none), the kinds' names capitalized."""
    fails("01.2", counts_solution(lesson_captures, wrong), *fragments)


@pytest.mark.wrong_answer("01.2")
def test_01_2_the_tasks_example_counts_copied_for_both_fail(lesson_captures):
    example = {"request": 1, "response": 1, "notification": 1}
    fails("01.2", {**counts_solution(lesson_captures), "modern_counts": example}, "modern_counts", "count classify")


# 01.3 — propose a version


async def propose(version: str, server_class: type = RawMemoryServer) -> dict:
    """01.3's solution proposing ``version`` (``reply``, the server's answer, for the wrong answers)."""
    async with server_class() as raw:
        reply = await raw.exchange(initialize(version), timeout=30)
    return {"my_version": version, "raw": raw, "negotiated": reply["result"]["protocolVersion"], "reply": reply}


@pytest.mark.parametrize(("version", "answered"), [("2030-01-01", "2025-11-25"), ("2025-06-18", "2025-06-18")])
def test_01_3_the_solution_passes(run, capsys, version, answered):
    printed = passes("01.3", run(propose, version), capsys)
    assert f"asked {version}, the server answered {answered}" in printed


def test_01_3_passes_over_a_real_pipe_too(run, capsys):
    passes("01.3", run(propose, "2030-01-01", RawStdioServer), capsys)


@pytest.mark.wrong_answer("01.3")
def test_01_3_the_servers_answer_is_not_the_proposal(run):
    solution = run(propose, "2030-01-01")
    fails("01.3", {**solution, "negotiated": "2030-01-01"}, "the server decides")


@pytest.mark.wrong_answer("01.3")
def test_01_3_proposing_the_default_fails(run):
    fails("01.3", run(propose, "2025-11-25"), "choose another version")


@pytest.mark.wrong_answer("01.3")
def test_01_3_two_initialize_requests_fail(run):
    async def twice():
        async with RawMemoryServer() as raw:
            await raw.exchange(initialize("2030-01-01"))
            reply = await raw.exchange(initialize("2030-01-01", 2))
        return {"my_version": "2030-01-01", "raw": raw, "negotiated": reply["result"]["protocolVersion"]}

    fails("01.3", run(twice), "send exactly one")


@pytest.fixture(scope="module")
def older_version(run) -> dict:
    """01.3 solved with a version the server speaks: it agrees."""
    return run(propose, "2025-06-18")


@pytest.mark.wrong_answer("01.3")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        pytest.param({"negotiated": "2025-11-25"}, ("the server decides",), id="the-lessons-counter-offer-typed"),
        pytest.param({"negotiated": "reply"}, ("negotiated compared", "protocolVersion"), id="the-whole-reply"),
        pytest.param({"raw": "reply"}, ("raw", "not one of its messages or replies"), id="the-reply-not-the-server"),
        pytest.param({"my_version": 20250618}, ("a version string",), id="a-number-not-a-string"),
    ],
)
def test_01_3_an_answer_not_read_from_the_servers_reply_fails(older_version, wrong, fragments):
    """The version typed from section 3's output where the server agreed to 2025-06-18, the whole reply stored as
    negotiated or as raw, the version as a number."""
    answers = {**older_version, **{name: older_version["reply"] if v == "reply" else v for name, v in wrong.items()}}
    feedback = fails("01.3", answers, *fragments)
    if wrong.get("negotiated") == "2025-11-25":  # typed: the feedback must not give away the server's answer
        assert "2025-06-18" not in feedback


# 01.4 — a missing envelope key


CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


async def envelope(fix: bool = True, *, second_id: int = 2, left_out: str = CAPABILITIES, one_connection=True) -> dict:
    """01.4's solution; or with the second request not corrected, its id reused, another key left out, or the
    corrected request sent on a connection of its own (kept in ``discover_server`` as the student's code keeps it)."""
    incomplete = discover("2026-07-28")
    del incomplete["params"]["_meta"][left_out]
    corrected = discover("2026-07-28", second_id) if fix else {**copy.deepcopy(incomplete), "id": second_id}
    async with RawMemoryServer() as discover_server:
        envelope_error = (await discover_server.exchange(incomplete))["error"]
        if one_connection:
            fixed_reply = await discover_server.exchange(corrected)
    if not one_connection:
        async with RawMemoryServer() as discover_server:
            fixed_reply = await discover_server.exchange(corrected)
    return {"discover_server": discover_server, "envelope_error": envelope_error, "fixed_reply": fixed_reply}


def test_01_4_the_solution_passes(run, capsys):
    printed = passes("01.4", run(envelope), capsys)
    assert "refused with -32602:" in printed
    assert "io.modelcontextprotocol/clientCapabilities" in printed.split("then accepted")[0]
    assert "supportedVersions: ['2026-07-28']" in printed


@pytest.mark.wrong_answer("01.4")
def test_01_4_the_whole_reply_is_not_the_error(run):
    solution = run(envelope)
    whole = solution["discover_server"].capture.messages[1].message
    fails("01.4", {**solution, "envelope_error": whole}, "reply['error']")


@pytest.mark.wrong_answer("01.4")
def test_01_4_an_uncorrected_second_request_fails(run):
    fails("01.4", run(envelope, False), "put io.modelcontextprotocol/clientCapabilities back")


@pytest.mark.wrong_answer("01.4")
def test_01_4_the_corrected_request_reusing_id_1_fails_with_the_rule(run):
    """The corrected request copied from the first, id and all: the server answers, but an id is never reused."""
    feedback = fails(
        "01.4", run(lambda: envelope(second_id=1)), "the ids you used twice", "must be new on its connection"
    )
    assert "found [1]" in feedback


@pytest.mark.wrong_answer("01.4")
@pytest.mark.parametrize(
    ("how", "fragments"),
    [
        pytest.param({"left_out": "io.modelcontextprotocol/protocolVersion"}, ("keep the version",), id="other-key"),
        pytest.param({"one_connection": False}, ("send two on the same connection",), id="two-connections"),
    ],
)
def test_01_4_another_key_left_out_or_another_connection_fails(run, how, fragments):
    fails("01.4", run(lambda: envelope(**how)), *fragments)


@pytest.mark.wrong_answer("01.4")
def test_01_4_the_error_code_alone_is_not_the_error(run):
    solution = run(envelope)
    fails("01.4", {**solution, "envelope_error": solution["envelope_error"]["code"]}, "reply['error']")


# every exercise: blank means not attempted


@pytest.mark.parametrize("exercise_id", sorted(ANSWERS))
def test_a_blank_exercise_is_not_attempted(exercise_id, capsys):
    check(exercise_id, {})
    printed = capsys.readouterr().out
    assert f"Exercise {exercise_id} — not attempted yet" in printed
    assert all(f"`{name}`" in printed for name in ANSWERS[exercise_id])


@pytest.mark.parametrize("exercise_id", sorted(ANSWERS))
def test_a_blank_exercise_scores_nothing_while_grading(exercise_id, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(ExerciseNotAttempted, match="not attempted yet"):
        check(exercise_id, {ANSWERS[exercise_id][0]: object()})
