"""A tool that calls a real web API: a repository's facts from GitHub's REST API (lesson 14).

What a real server's tool meets that a calculator does not, each with the answer a model can act on:

- ``GET /repos/{owner}/{repo}`` with ``Accept: application/vnd.github+json`` and ``X-GitHub-Api-Version:
  2022-11-28`` (docs.github.com/en/rest/repos/repos, "Get a repository"); ``Authorization: Bearer`` when
  ``GITHUB_TOKEN`` is set (docs.github.com/en/rest/authentication/authenticating-to-the-rest-api). The token is
  read at call time and goes only into that header: never into a result, an error or a log line, even when the
  server at ``GITHUB_API_URL`` (a proxy, a look-alike) echoes the header back, since every text taken from an
  answer has it replaced. An upstream that sends it back otherwise encoded (base64, reversed) is not caught: it
  holds the token already, and the tool cannot know every disguise. Nor is httpcore's DEBUG log (off unless asked
  for), which shows an answer's headers as they came.
- 404: no such repository, or a private one (GitHub answers 404, not 403, to hide it). 401: "Bad credentials".
  301: the repository was renamed or moved; the client follows it (docs.github.com/en/rest/using-the-rest-api/
  best-practices-for-using-the-rest-api, "Follow redirects").
- 403 or 429 rate-limited: the wait in GitHub's order, ``retry-after`` seconds first, then until
  ``x-ratelimit-reset`` (UTC epoch seconds) when ``x-ratelimit-remaining`` is ``0``, else at least a minute
  (docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api, "Rate limit errors"). The primary
  limit (60 requests an hour without a token, 5,000 with a personal access token) always sends remaining ``0``; a
  secondary limit says so in its message and may send either header, so remaining ``0`` alone does not say which.
- The server's own limit on calls of the tool (2026-07-28, server/tools, Security Considerations: servers MUST
  "Rate limit tool invocations"), counted after the input is checked, so refused input costs no one a call.
- An upstream is not trusted to be GitHub: its body is read up to :data:`BODY_LIMIT`, a 200 must be a JSON object,
  a rate-limit header must be a whole number, and every text passed on (the facts, a message) is cut to a length
  a model's context can afford; anything else is a ToolError that says what came and what to do.
- A timeout, so a slow network cannot hang the tool; when GitHub cannot be reached at all, a stored answer from
  ``github_responses.json`` (package data), labelled as a recording with its date. The timeout bounds each wait
  for the network, not the whole answer: an upstream that sends a byte within each could hold one call until
  :data:`BODY_LIMIT` (the host's own request timeout ends it; the server's call limit bounds how many wait so).

``GITHUB_API_URL`` (default ``https://api.github.com``) points the tool elsewhere: lesson 14 and the tests point it
at :mod:`mcp_teach.servers.github_replay`, a loopback server that plays GitHub's answers back.
"""

from __future__ import annotations

import contextlib
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
#: Most bytes of GitHub's answer read, once decompressed: 1 MiB (a repository object is a few KB).
BODY_LIMIT = 2**20
#: What to add when the hourly limit of 60 requests, GitHub's limit without a token, is used up.
TOKEN_ADVICE = f", or set {TOKEN_VARIABLE}: a personal access token raises the limit from 60 to 5,000 requests an hour"
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
    message = response.text or response.reason_phrase  # what it sent, unless it is GitHub's JSON error body
    with contextlib.suppress(ValueError, RecursionError, KeyError, TypeError):
        message = str(response.json()["message"])
    status, headers, message = response.status_code, response.headers, github_text(message)
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
        hourly = whole_number(headers, "x-ratelimit-limit") or "?"
        limit = f"GitHub's rate limit of {hourly} requests an hour is used up ({status})"
    else:  # the hourly quota always says remaining 0; a secondary limit may, and says so in its message
        limit = f"GitHub's secondary rate limit ({status}: too many requests in a short time)"
    if retry := whole_number(headers, "retry-after"):
        return ToolError(f"{limit}: wait {retry} seconds before calling again.")
    if used_up and (reset_at := whole_number(headers, "x-ratelimit-reset")):
        reset = datetime.fromtimestamp(int(reset_at), UTC)
        token = TOKEN_ADVICE if headers.get("x-ratelimit-limit") == "60" else ""  # 60 an hour: without a token
        return ToolError(f"{limit}; it resets at {reset:%Y-%m-%d %H:%M} UTC. Try again then{token}.")
    if used_up:  # with a reset time that is none (missing, negative, past the year 2286)
        limit += f"; its reset time {github_text(headers.get('x-ratelimit-reset', ''))!r} is not a time"
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
        path = repository_path(repository)  # first: input refused here uses up none of the calls below
        if (wait := calls.admit("every caller")) is not None:
            raise ToolError(f"This server answers {calls_per_minute} calls a minute: wait {wait:.0f} seconds.")
        base_url = os.environ.get(API_URL_VARIABLE, GITHUB_API).rstrip("/")
        http = httpx2.AsyncClient(base_url=base_url, headers=github_headers(), timeout=timeout, follow_redirects=True)
        try:  # following redirects: a renamed repository answers 301 with its new address
            async with http, http.stream("GET", path) as streamed:
                response = await read_bounded(streamed)
        except (httpx2.ConnectError, httpx2.ConnectTimeout):  # no network, no DNS, nothing listening
            return stored_repository(path, reason=f"{base_url} could not be reached")
        except httpx2.TimeoutException:
            raise ToolError(f"GitHub did not answer within {timeout:g} seconds: try again in a minute.") from None
        except httpx2.HTTPError:  # an answer cut short, or not in the compression it names
            raise ToolError("GitHub's answer broke off or could not be decoded: try again in a minute.") from None
        if response.status_code != 200:
            raise github_error(response, path.removeprefix("/repos/"))
        with contextlib.suppress(ValueError, RecursionError):  # not JSON, or nested past what Python parses
            if isinstance(body := response.json(), dict):
                return repository_facts(body, source=f"live from {base_url}")
        raise ToolError(f"GitHub's 200 answer is no JSON object: check {API_URL_VARIABLE} or the network, then retry.")


# --- plumbing: reading GitHub's JSON, and the stored answers ---------------------------------------------------


async def read_bounded(response: httpx2.Response) -> httpx2.Response:
    """The response with its body read, refused past :data:`BODY_LIMIT` bytes: an answer without Content-Length
    (or a compressed one) would otherwise be read whole, however large."""
    body = bytearray()
    async for chunk in response.aiter_bytes():  # decompressed a piece at a time
        body += chunk
        if len(body) > BODY_LIMIT:
            raise ToolError(f"GitHub's answer is longer than 1 MiB (a repository: a few KB): check {API_URL_VARIABLE}.")
    headers = [(name, value) for name, value in response.headers.multi_items() if name != "content-encoding"]
    return httpx2.Response(response.status_code, headers=headers, content=bytes(body))  # decompressed already


def github_text(text: str) -> str:
    """Text from GitHub's answer as the model may read it: cut to :data:`TEXT_LIMIT`, and never the token, which
    an upstream may echo back from the Authorization header (replaced first, so no cut leaves a piece of it)."""
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    return (text.replace(token, f"[{TOKEN_VARIABLE}]") if token else text)[:TEXT_LIMIT]


def whole_number(headers: httpx2.Headers, name: str) -> str | None:
    """A header GitHub sends as a whole number (seconds, a count, a reset time), if it is one that fits a time."""
    return value if re.fullmatch(r"[0-9]{1,10}", value := headers.get(name, "")) else None


def repository_facts(body: dict[str, Any], *, source: str) -> dict[str, Any]:
    """The facts a model asks about, from GitHub's repository object, and where they came from.

    Only these fields go on, whatever else the body holds, each as :func:`plain_fact` makes it: every text (the
    owner's, GitHub's) cut to :data:`TEXT_LIMIT`. The counts are left out when the body has none (a recording does
    not store them).
    """
    counts = {"stars": "stargazers_count", "forks": "forks_count", "open_issues": "open_issues_count"}
    facts = {
        "repository": body.get("full_name"),
        "url": body.get("html_url"),
        "description": body.get("description") or None,
        "language": body.get("language"),
        "license": body["license"].get("spdx_id") if isinstance(body.get("license"), dict) else None,
        **{fact: body[field] for fact, field in counts.items() if field in body},
        "default_branch": body.get("default_branch"),
        "archived": body.get("archived"),
        "pushed_at": body.get("pushed_at"),
    }
    return {name: plain_fact(value) for name, value in facts.items()} | {"source": source}


def plain_fact(value: object) -> str | int | None:
    """Text as :func:`github_text` makes it, a whole number (true and false are ones too) as JSON keeps it exactly;
    None for anything else, which GitHub's repository object never holds in these fields (a list, an object)."""
    if isinstance(value, str):
        return github_text(value)
    return value if isinstance(value, int) and abs(value) < 2**53 else None


@cache
def stored_responses() -> dict[str, Any]:
    """``github_responses.json``: GitHub's answers in its documented shape, with the date they were stored."""
    return json.loads(files("mcp_teach.servers").joinpath("github_responses.json").read_text(encoding="utf-8"))


def stored_repository(path: str, *, reason: str) -> dict[str, Any]:
    """The stored answer for ``path`` when GitHub cannot be reached, saying plainly that it is a recording."""
    body = stored_responses()["responses"]["repository"]["body"]
    if path.lower() != f"/repos/{body['full_name']}".lower():
        raise ToolError(
            f"GitHub cannot be reached ({reason}) and no recording of {path.removeprefix('/repos/')!r} is stored "
            f"(only {body['full_name']}): check the network, or {API_URL_VARIABLE}."
        )
    return repository_facts(body, source=f"a recording from {stored_responses()['stored']}, not live: {reason}")
