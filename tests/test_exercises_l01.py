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


def test_01_1_another_header_fails_with_the_hint(http_solution):
    fails("01.1", {**http_solution, "session_header": "connection"}, "named after MCP")


def test_01_1_the_default_mode_fails(run):
    fails("01.1", {"http_capture": run(http_handshake, "auto"), "session_header": "mcp-session-id"}, "mode='legacy'")


def test_01_1_an_in_memory_capture_has_no_http(run):
    async def in_memory():
        capture = CaptureTransport(build_calculator_server())
        async with teaching_client(capture, mode="legacy"):
            pass
        return capture

    fails("01.1", {"http_capture": run(in_memory), "session_header": "mcp-session-id"}, "serve_http")


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


def test_01_2_an_id_of_zero_is_an_id(lesson_captures):
    def truthy(message):
        if "method" in message:
            return "request" if message.get("id") else "notification"
        return "response"

    fails("01.2", counts_solution(lesson_captures, truthy), "an id of 0 is still an id")


def test_01_2_errors_are_responses(lesson_captures):
    def four_kinds(message):
        return "error" if "error" in message else classify(message)

    fails("01.2", counts_solution(lesson_captures, four_kinds), "it is a response")


def test_01_2_an_error_without_id_is_a_response(lesson_captures):
    """MCP's schema lets an error about an unreadable line leave `id` out; JSON-RPC 2.0 sends null."""

    def by_id(message):
        if "method" not in message and "id" in message:
            return "response"
        return "request" if "id" in message else "notification"

    assert by_id({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}) == "response"
    message = fails("01.2", counts_solution(lesson_captures, by_id), "may have no 'id'")
    assert "'method' makes it a response" in message


def test_01_2_wrong_counts_fail(lesson_captures):
    solution = counts_solution(lesson_captures)
    fails("01.2", {**solution, "modern_counts": {"request": 2, "response": 2, "notification": 1}}, "modern_counts")


# 01.3 — propose a version


async def propose(version: str, server_class: type = RawMemoryServer) -> dict:
    async with server_class() as raw:
        reply = await raw.exchange(initialize(version), timeout=30)
    return {"my_version": version, "raw": raw, "negotiated": reply["result"]["protocolVersion"]}


@pytest.mark.parametrize(("version", "answered"), [("2030-01-01", "2025-11-25"), ("2025-06-18", "2025-06-18")])
def test_01_3_the_solution_passes(run, capsys, version, answered):
    printed = passes("01.3", run(propose, version), capsys)
    assert f"asked {version}, the server answered {answered}" in printed


def test_01_3_passes_over_a_real_pipe_too(run, capsys):
    passes("01.3", run(propose, "2030-01-01", RawStdioServer), capsys)


def test_01_3_the_servers_answer_is_not_the_proposal(run):
    solution = run(propose, "2030-01-01")
    fails("01.3", {**solution, "negotiated": "2030-01-01"}, "the server decides")


def test_01_3_proposing_the_default_fails(run):
    fails("01.3", run(propose, "2025-11-25"), "choose another version")


def test_01_3_two_initialize_requests_fail(run):
    async def twice():
        async with RawMemoryServer() as raw:
            await raw.exchange(initialize("2030-01-01"))
            reply = await raw.exchange(initialize("2030-01-01", 2))
        return {"my_version": "2030-01-01", "raw": raw, "negotiated": reply["result"]["protocolVersion"]}

    fails("01.3", run(twice), "send exactly one")


# 01.4 — a missing envelope key


async def envelope(fix: bool = True) -> dict:
    incomplete = discover("2026-07-28")
    del incomplete["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    async with RawMemoryServer() as discover_server:
        envelope_error = (await discover_server.exchange(incomplete))["error"]
        fixed_reply = await discover_server.exchange(discover("2026-07-28", 2) if fix else copy.deepcopy(incomplete))
    return {"discover_server": discover_server, "envelope_error": envelope_error, "fixed_reply": fixed_reply}


def test_01_4_the_solution_passes(run, capsys):
    printed = passes("01.4", run(envelope), capsys)
    assert "refused with -32602:" in printed
    assert "io.modelcontextprotocol/clientCapabilities" in printed.split("then accepted")[0]
    assert "supportedVersions: ['2026-07-28']" in printed


def test_01_4_the_whole_reply_is_not_the_error(run):
    solution = run(envelope)
    whole = solution["discover_server"].capture.messages[1].message
    fails("01.4", {**solution, "envelope_error": whole}, "reply['error']")


def test_01_4_an_uncorrected_second_request_fails(run):
    fails("01.4", run(envelope, False), "put io.modelcontextprotocol/clientCapabilities back")


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
