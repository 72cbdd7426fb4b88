"""Exercise 13.8's check: a 451 explained as a legal block passes; leaving it to github_error, raising instead of
returning, or rewording the other refusals fails with expected / found / hint."""

from __future__ import annotations

import pytest
from fastmcp.exceptions import ToolError

from mcp_teach.exercises.check import Checker, ExerciseFailed
from mcp_teach.exercises.l13_ship import refusal_explained
from mcp_teach.servers.github_facts import github_error


def solution(response, repository):
    if response.status_code == 451:
        return ToolError(
            f"GitHub blocks {repository!r} for legal reasons (451): the API will not serve it; "
            "no retry or token will help."
        )
    return github_error(response, repository)


def raising(response, repository):
    raise solution(response, repository)


def rewording(response, repository):
    return ToolError(f"GitHub refused {repository!r} for legal reasons (451): do not retry.")


def test_the_solution_passes(capsys) -> None:
    refusal_explained(Checker("13.8"), solution)
    assert "451 explained as a legal block" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (github_error, "for legal reasons (451)"),
        (raising, "return ToolError(...), do not raise it"),
        (rewording, "for any status but 451, return github_error(response, repository)"),
        ("not a function", "def explain_refusal(response, repository):"),
    ],
)
def test_wrong_answers_fail_with_a_hint(answer, hint) -> None:
    with pytest.raises(ExerciseFailed) as failed:
        refusal_explained(Checker("13.8"), answer)
    assert hint in str(failed.value)
