"""Lesson 14's reading of GitHub's rate limits, in GitHub's order ("Troubleshooting the REST API", Rate limit errors).

``retry-after`` first, then ``x-ratelimit-reset`` when ``x-ratelimit-remaining`` is ``0``, else at least a minute;
remaining ``0`` alone does not say the primary (hourly) limit: a secondary limit says so in its message and may send
either header. The lesson's cells and ``mcp_teach/servers/github_facts.py`` agree (tests/test_exports.py).
"""

from __future__ import annotations

import httpx2
import pytest

from mcp_teach.servers.github_facts import github_error

RESET = {"x-ratelimit-reset": "1796202000"}  # 2026-12-02 09:00 UTC
SECONDARY = "You have exceeded a secondary rate limit."


def explained(status: int, headers: dict[str, str], message: str) -> str:
    return str(github_error(httpx2.Response(status, headers=headers, json={"message": message}), "o/r"))


@pytest.mark.parametrize("status", [403, 429])
def test_retry_after_comes_first_even_when_remaining_is_0(status: int) -> None:
    text = explained(status, {"retry-after": "30", "x-ratelimit-remaining": "0", **RESET}, SECONDARY)
    assert "wait 30 seconds" in text
    assert "resets at" not in text


def test_remaining_0_with_a_secondary_message_is_a_secondary_limit_that_waits_for_the_reset() -> None:
    text = explained(429, {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000", **RESET}, SECONDARY)
    assert "secondary rate limit (429" in text
    assert "resets at 2026-12-02 09:00 UTC" in text
    assert "requests an hour is used up" not in text and "GITHUB_TOKEN" not in text


def test_the_hourly_limit_suggests_a_token_only_when_none_was_used() -> None:
    without = explained(403, {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "60", **RESET}, "API rate limit")
    with_token = explained(403, {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000", **RESET}, "API rate limit")
    assert "60 requests an hour is used up (403)" in without and "set GITHUB_TOKEN" in without
    assert "5000 requests an hour is used up (403)" in with_token and "GITHUB_TOKEN" not in with_token


def test_a_403_that_is_no_rate_limit_stays_a_refusal() -> None:
    text = explained(403, {"x-ratelimit-remaining": "41"}, "Resource not accessible by integration")
    assert text == "GitHub forbids reading 'o/r' (403): Resource not accessible by integration"
