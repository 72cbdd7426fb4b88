"""Lesson 13's web-API tool against a real loopback server playing GitHub's answers, and once against GitHub itself.

Each status GitHub documents gets its own sentence; the token reaches GitHub's ``Authorization`` header and
nothing else (not the result, the error, the course's capture of the MCP traffic, nor any log record).
"""

from __future__ import annotations

import logging
import socket
from typing import Any

import httpx2
import pytest
from fastmcp import Client, FastMCP
from support import recorded_text

from mcp_teach.servers.github_facts import (
    TEXT_LIMIT,
    add_github_tool,
    github_error,
    repository_facts,
    stored_responses,
)
from mcp_teach.servers.github_replay import GitHubReplay
from mcp_teach.wire.capture import CaptureTransport

TOKEN = "ghp_NotARealTokenButShapedLikeOne1234567"
KNOWN = "modelcontextprotocol/python-sdk"


def github_server(timeout: float = 5.0) -> FastMCP:
    server = FastMCP("github-test")
    add_github_tool(server, timeout=timeout)
    return server


def call(run: Any, repository: str, *, timeout: float = 5.0) -> tuple[Any, str]:
    """Call the tool through a CaptureTransport: the result and everything the capture recorded, as text."""

    async def main() -> tuple[Any, str]:
        transport = CaptureTransport(github_server(timeout))
        async with Client(transport) as client:
            result = await client.call_tool("github_repository", {"repository": repository}, raise_on_error=False)
        return result, recorded_text(transport.capture)

    return run(main)


def text_of(result: Any) -> str:
    return result.content[0].text


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch):
    """``replay(scenario, delay=0)``: a GitHubReplay the tool is pointed at (``GITHUB_API_URL``)."""
    started = []

    def start(scenario: str = "live", delay: float = 0.0) -> GitHubReplay:
        github = GitHubReplay(scenario, delay=delay).__enter__()
        started.append(github)
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        return github

    yield start
    for github in started:
        github.__exit__(None, None, None)


def test_a_repository_comes_back_as_facts_with_their_source(run, replay) -> None:
    github = replay("live")
    result, _ = call(run, KNOWN)
    assert not result.is_error
    assert result.structured_content["repository"] == KNOWN
    assert result.structured_content["license"] == "MIT"
    assert result.structured_content["source"] == f"live from {github.url}"
    path, headers = github.requests[0]
    assert path == f"/repos/{KNOWN}"
    assert headers["Accept"] == "application/vnd.github+json"
    assert headers["X-GitHub-Api-Version"] == "2022-11-28"


@pytest.mark.parametrize(
    ("scenario", "repository", "expected"),
    [
        ("live", "octocat/no-such-repo", "no public repository 'octocat/no-such-repo' (404): check the spelling"),
        ("rate_limited", KNOWN, "resets at 2026-12-02 09:00 UTC. Try again then, or set GITHUB_TOKEN"),
        ("secondary_rate_limited", KNOWN, "secondary rate limit (429: too many requests in a short time): wait 30"),
        ("bad_credentials", KNOWN, "refused the token in GITHUB_TOKEN (401 Bad credentials): fix it or unset it"),
        ("forbidden", KNOWN, "forbids reading 'modelcontextprotocol/python-sdk' (403): Resource not accessible by"),
        ("blocked", KNOWN, "GitHub answered 451 for 'modelcontextprotocol/python-sdk': Repository access blocked"),
    ],
)
def test_each_refusal_is_a_tool_error_that_says_what_to_do(run, replay, scenario, repository, expected) -> None:
    replay(scenario)
    result, captured = call(run, repository)
    assert result.is_error
    assert expected in text_of(result)
    assert '"isError":true' in captured.replace(" ", "")  # on the wire: a tool result, not a protocol error


@pytest.mark.parametrize(
    "bad", ["python-sdk", "a/b/c", "owner/", "../etc/passwd", "owner name/repo", "", "octocat/..", "a/.", "-/-"]
)
def test_what_is_not_owner_slash_name_is_refused_before_any_request(run, replay, bad) -> None:
    github = replay("live")
    result, _ = call(run, bad)
    assert result.is_error
    assert "is not a repository: write owner/name" in text_of(result)
    assert github.requests == []


@pytest.mark.parametrize(
    ("status", "headers", "message", "expected"),
    [
        (
            403,
            {},
            "You have exceeded a secondary rate limit.",
            "secondary rate limit (403: too many requests in a short time): wait at least a minute",
        ),
        (429, {}, "", "secondary rate limit (429: too many requests in a short time): wait at least a minute"),
        (403, {"retry-after": "7"}, "", "wait 7 seconds"),
        (403, {}, "Resource not accessible by integration", "forbids reading 'o/r' (403): Resource not accessible"),
    ],
)
def test_a_secondary_limit_without_headers_is_read_from_its_message(status, headers, message, expected) -> None:
    response = httpx2.Response(status, headers=headers, json={"message": message})
    assert expected in str(github_error(response, "o/r"))


def test_githubs_free_text_reaches_the_model_cut_to_a_limit() -> None:
    long = "x" * (TEXT_LIMIT + 50)
    facts = repository_facts({"full_name": "o/r", "description": long, "forks_count": 3}, source="test")
    assert facts["description"] == "x" * TEXT_LIMIT
    assert facts["forks"] == 3 and "stars" not in facts  # a count GitHub did not send is not made up
    assert len(str(github_error(httpx2.Response(418, json={"message": long}), "o/r"))) < TEXT_LIMIT + 60


def test_the_server_limits_calls_of_the_tool_itself(run, replay) -> None:
    github = replay("live")
    server = FastMCP("frugal")
    add_github_tool(server, calls_per_minute=2)

    async def three_calls() -> list[Any]:
        async with Client(server) as client:
            return [
                await client.call_tool("github_repository", {"repository": KNOWN}, raise_on_error=False)
                for _ in range(3)
            ]

    first, second, third = run(three_calls)
    assert not first.is_error and not second.is_error
    assert third.is_error and text_of(third).startswith("This server answers 2 calls a minute: wait ")
    assert len(github.requests) == 2  # the third never reached GitHub


def test_a_github_url_is_accepted_as_owner_slash_name(run, replay) -> None:
    replay("live")
    result, _ = call(run, f"https://github.com/{KNOWN}/")
    assert result.structured_content["repository"] == KNOWN


@pytest.mark.parametrize("scenario", ["live", "bad_credentials"])
def test_the_token_goes_to_github_and_nowhere_else(run, replay, monkeypatch, caplog, scenario) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    github = replay(scenario)
    with caplog.at_level(logging.DEBUG):
        result, captured = call(run, KNOWN)
    assert github.requests[0][1]["Authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in repr(result)
    assert TOKEN not in captured
    assert caplog.records  # httpx2, httpcore and fastmcp did log at DEBUG: the token is in none of it
    assert TOKEN not in caplog.text
    assert all(TOKEN not in str(record.args) for record in caplog.records)


def test_without_a_token_no_authorization_header_is_sent(run, replay, monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    github = replay("live")
    call(run, KNOWN)
    assert "Authorization" not in github.requests[0][1]


def unused_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_when_github_cannot_be_reached_a_dated_recording_answers(run, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{unused_port()}")
    result, _ = call(run, KNOWN)
    assert not result.is_error
    source = result.structured_content["source"]
    assert source.startswith(f"a recording from {stored_responses()['stored']}, not live: ")
    assert "could not be reached" in source


def test_without_network_or_recording_the_error_names_both(run, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{unused_port()}")
    result, _ = call(run, "octocat/hello-world")
    assert result.is_error
    assert "cannot be reached" in text_of(result)
    assert f"only {KNOWN}" in text_of(result)


def test_a_slow_answer_is_a_timeout_not_a_hang(run, replay) -> None:
    replay("live", delay=1.0)
    result, _ = call(run, KNOWN, timeout=0.2)
    assert result.is_error
    assert text_of(result) == "GitHub did not answer within 0.2 seconds: try again in a minute."


def github_reachable() -> bool:
    try:
        socket.create_connection(("api.github.com", 443), timeout=3).close()
    except OSError:
        return False
    return True


def test_the_real_github_answers_or_limits_us(run, monkeypatch) -> None:
    if not github_reachable():
        pytest.skip("api.github.com cannot be reached from here (no network or no DNS)")
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    result, _ = call(run, KNOWN, timeout=10.0)
    if result.is_error:  # 60 requests an hour per address without a token: a shared address may have used them
        assert "rate limit" in text_of(result)
    else:
        assert result.structured_content["repository"] == KNOWN
        assert result.structured_content["source"] == "live from https://api.github.com"
        assert isinstance(result.structured_content["stars"], int)
