"""Lesson 13's exercise on the web-API tool: 13.8, a refusal of GitHub's that ``github_error`` does not explain.

``explain_refusal(response, repository)`` must turn GitHub's 451 (Unavailable For Legal Reasons, RFC 7725: a
repository blocked, e.g. by a DMCA takedown) into a ToolError that names the status, the legal reason and the
repository, and leave every other refusal to ``github_error``. The check asks the loopback replay of GitHub for
real responses (451, 403 rate-limited, 403 forbidden, 404) and judges what the function returns for each.
``mcp_teach.exercises.l13`` registers it beside the conformance steps.
"""

from __future__ import annotations

from typing import Any

import httpx2
from fastmcp.exceptions import ToolError

from mcp_teach.exercises.check import Checker
from mcp_teach.servers.github_facts import github_error
from mcp_teach.servers.github_replay import GitHubReplay

ANSWERS = ("explain_refusal",)
REPOSITORY = "octocat/blocked-example"
#: The other refusals the check asks the replay for ("live" does not know the repository: 404).
DELEGATED = ("rate_limited", "forbidden", "live")


def _response(scenario: str) -> httpx2.Response:
    """A real response from the replay server, read in full."""
    with GitHubReplay(scenario) as github:
        return httpx2.get(f"{github.url}/repos/{REPOSITORY}")


def _explained(check: Checker, explain_refusal: Any, response: httpx2.Response) -> str:
    error = check.runs(
        explain_refusal,
        response,
        REPOSITORY,
        what=f"explain_refusal(<the {response.status_code} response>, {REPOSITORY!r})",
        expected="a ToolError, returned",
        hint="return ToolError(...), do not raise it: the tool raises what you return",
    )
    check.instance(error, ToolError, f"what explain_refusal returns for {response.status_code}")
    return str(error)


def refusal_explained(check: Checker, explain_refusal: Any) -> None:
    check.function(explain_refusal, "explain_refusal", hint="def explain_refusal(response, repository):")
    blocked = _explained(check, explain_refusal, _response("blocked"))
    for word in ("451", "legal", REPOSITORY):
        check.true(
            word in blocked.lower(),
            f"the words of the 451 error: {word!r}",
            expected=f"a sentence containing {word!r}",
            found=blocked,
            hint=f'f"GitHub blocks {{repository!r}} for legal reasons (451): ..." (what was {REPOSITORY!r})',
        )
    check.true(
        "retry" in blocked.lower() or "try again" in blocked.lower(),
        "what the 451 error tells the model to do",
        expected="that no retry (and no token) will help",
        found=blocked,
        hint="a model that is told nothing retries: say that retrying will not help",
    )
    for scenario in DELEGATED:
        response = _response(scenario)
        check.equal(
            _explained(check, explain_refusal, response),
            str(github_error(response, REPOSITORY)),
            f"explain_refusal for {scenario} ({response.status_code})",
            hint="for any status but 451, return github_error(response, repository)",
        )
    print("451 explained as a legal block; 403 rate-limited, 403 forbidden and 404 left to github_error")
