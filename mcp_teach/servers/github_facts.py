"""A tool that calls a real web API: a repository's facts from GitHub's REST API (lesson 14).

What a real server's tool meets that a calculator does not, each with the answer a model can act on:

- ``GET /repos/{owner}/{repo}`` with ``Accept: application/vnd.github+json`` and ``X-GitHub-Api-Version:
  2022-11-28`` (docs.github.com/en/rest/repos/repos, "Get a repository"); ``Authorization: Bearer`` when
  ``GITHUB_TOKEN`` is set (docs.github.com/en/rest/authentication/authenticating-to-the-rest-api). The token is
  read at call time and goes only into that header: never into a result, an error or a log line.
- 404: no such repository, or a private one (GitHub answers 404, not 403, to hide it). 401: "Bad credentials".
  301: the repository was renamed or moved; the client follows it (docs.github.com/en/rest/using-the-rest-api/
  best-practices-for-using-the-rest-api, "Follow redirects").
- 403 or 429 rate-limited: the wait in GitHub's order, ``retry-after`` seconds first, then until
  ``x-ratelimit-reset`` (UTC epoch seconds) when ``x-ratelimit-remaining`` is ``0``, else at least a minute
  (docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api, "Rate limit errors"). The primary
  limit (60 requests an hour without a token, 5,000 with a personal access token) always sends remaining ``0``; a
  secondary limit says so in its message and may send either header, so remaining ``0`` alone does not say which.
- The server's own limit on calls of the tool (2026-07-28, server/tools, Security Considerations: servers MUST
  "Rate limit tool invocations"); free text from GitHub is cut to a length a model's context can afford.
- A timeout, so a slow network cannot hang the tool; when GitHub cannot be reached at all, a stored answer from
  ``github_responses.json`` (package data), labelled as a recording with its date.

``GITHUB_API_URL`` (default ``https://api.github.com``) points the tool elsewhere: lesson 14 and the tests point it
at :mod:`mcp_teach.servers.github_replay`, a loopback server that plays GitHub's answers back.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from functools import cache
from importlib.resources import files
from typing import Any

import httpx2
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

from mcp_teach.servers.gates import SlidingWindow

GITHUB_API = "https://api.github.com"
API_URL_VARIABLE = "GITHUB_API_URL"
TOKEN_VARIABLE = "GITHUB_TOKEN"
TIMEOUT_SECONDS = 10.0
#: Calls of the tool one server answers in any minute, whoever calls (a looping model is stopped here).
CALLS_PER_MINUTE = 30
#: Longest text from GitHub (a description, an error message) passed on to the model.
TEXT_LIMIT = 300
#: Close to GitHub's rules: an owner is 1-39 letters, digits or hyphens, not starting or ending with a hyphen; a
#: repository name adds ``.`` and ``_`` but is never ``.`` or ``..`` (a dot segment would change the URL's path).
REPOSITORY = re.compile(
    r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?)/(?P<name>(?!\.\.?$)[A-Za-z0-9._-]{1,100})"
)


def github_headers() -> dict[str, str]:
    """The header GitHub requires, the two it recommends, and the token from the environment if there is one."""
    headers = {
        "User-Agent": "mcp-teach",  # required: GitHub refuses requests without one
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",  # pinned: still supported, and the default without this header
    }
    if token := os.environ.get(TOKEN_VARIABLE, "").strip():
        headers["Authorization"] = f"Bearer {token}"
    return headers


def repository_path(repository: str) -> str:
    """``/repos/owner/name`` for ``owner/name``; anything else is a ToolError that shows the expected form."""
    match = REPOSITORY.fullmatch(repository.strip().removeprefix("https://github.com/").rstrip("/"))
    if match is None:
        raise ToolError(
            f"{repository!r} is not a repository: write owner/name, as in github.com/owner/name "
            "(for example modelcontextprotocol/python-sdk)."
        )
    return f"/repos/{match['owner']}/{match['name']}"


def github_error(response: httpx2.Response, repository: str) -> ToolError:
    """What GitHub's refusal means and what to do next, in words a model can act on."""
    status, headers, message = response.status_code, response.headers, github_message(response)
    if status == 404:
        return ToolError(f"GitHub has no public repository {repository!r} (404): check the spelling of owner and name.")
    if status == 401:
        return ToolError(f"GitHub refused the token in {TOKEN_VARIABLE} (401 Bad credentials): fix it or unset it.")
    limited = "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0" or "rate limit" in message.lower()
    if status == 429 or (status == 403 and limited):
        return rate_limit_error(status, headers, message)
    if status == 403:
        return ToolError(f"GitHub forbids reading {repository!r} (403): {message}")
    return ToolError(f"GitHub answered {status} for {repository!r}: {message}")


def rate_limit_error(status: int, headers: httpx2.Headers, message: str) -> ToolError:
    """A rate limit: which one, and how long to wait, in GitHub's order (retry-after, then the reset, then a minute)."""
    used_up = headers.get("x-ratelimit-remaining") == "0"
    if used_up and "secondary rate limit" not in message.lower():  # the hourly quota
        limit = f"GitHub's rate limit of {headers.get('x-ratelimit-limit', '?')} requests an hour is used up ({status})"
    else:  # the hourly quota always says remaining 0; a secondary limit may, and says so in its message
        limit = f"GitHub's secondary rate limit ({status}: too many requests in a short time)"
    if "retry-after" in headers:
        return ToolError(f"{limit}: wait {headers['retry-after']} seconds before calling again.")
    if used_up:
        reset = datetime.fromtimestamp(int(headers.get("x-ratelimit-reset", "0")), UTC)
        token = f", or set {TOKEN_VARIABLE}: a personal access token raises the limit from 60 to 5,000 requests an hour"
        if headers.get("x-ratelimit-limit") != "60":  # 60 an hour is GitHub's limit without a token
            token = ""
        return ToolError(f"{limit}; it resets at {reset:%Y-%m-%d %H:%M} UTC. Try again then{token}.")
    return ToolError(f"{limit}: wait at least a minute before calling again.")


def add_github_tool(
    mcp: FastMCP, *, timeout: float = TIMEOUT_SECONDS, calls_per_minute: int = CALLS_PER_MINUTE
) -> None:
    """Give ``mcp`` the tool ``github_repository``, which asks GitHub's REST API (or ``GITHUB_API_URL``)."""
    calls = SlidingWindow(calls_per_minute, clock=datetime.now)  # lesson 12's window, one count for all callers

    @mcp.tool(annotations={"readOnlyHint": True, "openWorldHint": True})
    async def github_repository(repository: str) -> dict[str, Any]:
        """Facts about a public GitHub repository: description, language, license, stars, forks, open issues,
        default branch and last push.

        Args:
            repository: owner/name, as in github.com/owner/name (for example modelcontextprotocol/python-sdk).
        """
        if (wait := calls.admit("every caller")) is not None:
            raise ToolError(f"This server answers {calls_per_minute} calls a minute: wait {wait:.0f} seconds.")
        path = repository_path(repository)
        base_url = os.environ.get(API_URL_VARIABLE, GITHUB_API).rstrip("/")
        try:
            async with httpx2.AsyncClient(
                base_url=base_url, headers=github_headers(), timeout=timeout, follow_redirects=True
            ) as http:  # a renamed repository answers 301 with its new address
                response = await http.get(path)
        except (httpx2.ConnectError, httpx2.ConnectTimeout):  # no network, no DNS, nothing listening
            return stored_repository(path, reason=f"{base_url} could not be reached")
        except httpx2.TimeoutException:
            raise ToolError(f"GitHub did not answer within {timeout:g} seconds: try again in a minute.") from None
        if response.status_code != 200:
            raise github_error(response, path.removeprefix("/repos/"))
        return repository_facts(response.json(), source=f"live from {base_url}")


# --- plumbing: reading GitHub's JSON, and the stored answers ---------------------------------------------------


def github_message(response: httpx2.Response) -> str:
    """The ``message`` of GitHub's JSON error body, or the start of whatever else it sent."""
    try:
        return str(response.json()["message"])[:TEXT_LIMIT]
    except (ValueError, KeyError, TypeError):
        return response.text[:TEXT_LIMIT] or response.reason_phrase


def repository_facts(body: dict[str, Any], *, source: str) -> dict[str, Any]:
    """The facts a model asks about, from GitHub's repository object, and where they came from.

    Only these fields go on, whatever else the body holds; the description (the owner's free text) is cut to
    :data:`TEXT_LIMIT`. The counts are left out when the body has none (a recording does not store them).
    """
    license_ = body.get("license") or {}
    counts = {"stars": "stargazers_count", "forks": "forks_count", "open_issues": "open_issues_count"}
    return {
        "repository": body.get("full_name"),
        "url": body.get("html_url"),
        "description": (body.get("description") or "")[:TEXT_LIMIT] or None,
        "language": body.get("language"),
        "license": license_.get("spdx_id"),
        **{fact: body[field] for fact, field in counts.items() if field in body},
        "default_branch": body.get("default_branch"),
        "archived": body.get("archived"),
        "pushed_at": body.get("pushed_at"),
        "source": source,
    }


@cache
def stored_responses() -> dict[str, Any]:
    """``github_responses.json``: GitHub's answers in its documented shape, with the date they were stored."""
    return json.loads(files("mcp_teach.servers").joinpath("github_responses.json").read_text(encoding="utf-8"))


def stored_repository(path: str, *, reason: str) -> dict[str, Any]:
    """The stored answer for ``path`` when GitHub cannot be reached, saying plainly that it is a recording."""
    stored = stored_responses()
    body = stored["responses"]["repository"]["body"]
    if path.lower() != f"/repos/{body['full_name']}".lower():
        raise ToolError(
            f"GitHub cannot be reached ({reason}) and no recording of {path.removeprefix('/repos/')!r} is stored "
            f"(only {body['full_name']}): check the network, or {API_URL_VARIABLE}."
        )
    return repository_facts(body, source=f"a recording from {stored['stored']}, not live: {reason}")
