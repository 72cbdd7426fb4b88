"""mcp_teach.exercises.l14: the solved lesson's answers pass; wrong ones fail with expected / found / hint.

14.1: a 451 explained as a legal block passes; leaving it to github_error, raising instead of returning, rewording
the other refusals, or a clause that still sends the model to a retry or a token fails. 14.2: the lesson's tests pass
on the tool and fail on its unchecked twin; tests that cannot tell the two apart, that fail, or that do not run or
load, fail the check (without pytest's colours). 14.3: the lesson's VS Code entry
really starts the capstone over stdio; a token in the file, a relative command, Claude Desktop's key or a command
that is not a server fail. The right answers of 14.2 and 14.3 are the solution cells of
``notebooks/solutions/14_web_api_and_shipping.ipynb``, run here.
"""

from __future__ import annotations

import os
import sys
from typing import Any
from unittest.mock import patch

import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError

from mcp_teach.exercises import check, l14
from mcp_teach.exercises.check import Checker, ExerciseFailed
from mcp_teach.exercises.l14 import refusal_explained, unchecked_repository_path
from mcp_teach.lessons.l14_cell_tests import run_cell_tests
from mcp_teach.lessons.l14_ship import capstone_command
from mcp_teach.servers import github_facts
from mcp_teach.servers.github_facts import add_github_tool, github_error
from mcp_teach.servers.github_replay import GitHubReplay

LESSON = SolvedLesson(
    "14_web_api_and_shipping.ipynb", {"run_cell_tests": run_cell_tests, "capstone_command": capstone_command}
)
EXERCISES = ["14.1", "14.2", "14.3"]


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
    return ToolError(f"GitHub refused {repository!r} for legal reasons (451): do not retry, no token will help.")


def retry_soon(response, repository):
    if response.status_code == 451:
        return ToolError(
            f"GitHub blocks {repository!r} for legal reasons (451): retry in a few minutes, it is not final."
        )
    return github_error(response, repository)


@pytest.mark.parametrize(
    "sentence",
    ["Don't retry. A token doesn't help either.", "Calling again will not change that and no token can unlock it."],
)
def test_other_wordings_of_no_retry_and_no_token_pass(sentence, capsys) -> None:
    def answer(response, repository):
        if response.status_code == 451:
            return ToolError(f"GitHub blocks {repository!r} for legal reasons (451). {sentence}")
        return github_error(response, repository)

    refusal_explained(Checker("14.1"), answer)
    assert "451 explained as a legal block" in capsys.readouterr().out


def retry_later(response, repository):
    if response.status_code == 451:
        return ToolError(f"GitHub blocks {repository!r} for legal reasons (451): try again later.")
    return github_error(response, repository)


def legal_block_saying(advice: str):
    """An answer whose 451 error says ``advice`` after the legal block; every other refusal left to github_error."""

    def explain_refusal(response, repository):
        if response.status_code == 451:
            return ToolError(f"GitHub blocks {repository!r} for legal reasons (451): {advice}")
        return github_error(response, repository)

    return explain_refusal


def status_as_text(response, repository):
    if response.status_code == "451":  # the status is an int: this branch never runs
        return solution(response, repository)
    return github_error(response, repository)


def lessons_repository(response, repository):
    if response.status_code == 451:  # the lesson's example name, not the one asked about
        return ToolError("GitHub blocks 'octocat/blocked' for legal reasons (451): no retry or token will help.")
    return github_error(response, repository)


def reason_phrase_only(response, repository):
    if response.status_code == 451:  # says what happened, not what to do
        return ToolError(f"{repository!r}: {response.status_code} {response.reason_phrase}")
    return github_error(response, repository)


def raising_the_others(response, repository):
    if response.status_code == 451:
        return solution(response, repository)
    raise github_error(response, repository)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    assert LESSON.assert_answers_defined_nowhere_else() == EXERCISES


def test_the_refusal_solution_passes(capsys) -> None:
    refusal_explained(Checker("14.1"), solution)
    assert "451 explained as a legal block" in capsys.readouterr().out


@pytest.mark.wrong_answer("14.1")
@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (github_error, "for legal reasons (451)"),
        (raising, "return ToolError(...), do not raise it"),
        (rewording, "for any status but 451, return github_error(response, repository)"),
        (retry_later, 'say "no retry or token will help"'),
        (retry_soon, "'retry in a few minutes' answers a rate limit or a missing token"),
        ("not a function", "def explain_refusal(response, repository):"),
        (legal_block_saying("no token will help; retry in an hour."), "'retry in an hour' answers a rate limit"),
        (legal_block_saying("use a token; do not retry."), "'use a token' answers a rate limit or a missing token"),
        (legal_block_saying("set GITHUB_TOKEN and retry."), "'set GITHUB_TOKEN and retry' answers a rate limit"),
        (legal_block_saying("a token will not help, but a retry might."), "'a retry might' answers a rate limit"),
        (status_as_text, "for legal reasons (451)"),
        (lessons_repository, "here repository is 'octocat/blocked-example'"),
        (reason_phrase_only, "a model that is told nothing retries"),
        (raising_the_others, "return ToolError(...), do not raise it"),
    ],
    ids=[
        "all-left-to-github_error",
        "raised-not-returned",
        "every-refusal-reworded",
        "try-again-later",
        "retry-in-minutes",
        "not-a-function",
        "no-token-but-retry-in-an-hour",
        "advises-a-token",
        "set-a-token-and-retry",
        "no-token-but-a-retry-might",
        "status-compared-as-text",
        "the-lessons-repository-hard-coded",
        "reason-phrase-without-advice",
        "the-others-raised",
    ],
)
def test_wrong_refusals_fail_with_a_hint(answer, hint) -> None:
    with pytest.raises(ExerciseFailed) as failed:
        refusal_explained(Checker("14.1"), answer)
    assert hint in str(failed.value)


def test_the_unchecked_twin_sends_a_bad_name_to_github(monkeypatch, run) -> None:
    """What 14.2's tests must catch is real: the twin puts the name into the URL, and GitHub answers 404."""
    twin = FastMCP("twin")
    add_github_tool(twin)

    async def call() -> Any:
        async with Client(twin) as client:
            return await client.call_tool("github_repository", {"repository": "a/b/c"}, raise_on_error=False)

    with GitHubReplay("live") as github, patch.object(github_facts, "repository_path", unchecked_repository_path):
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        result = run(call)
    assert result.is_error and "(404)" in result.content[0].text
    assert [path for path, _ in github.requests] == ["/repos/a/b/c"]


def test_the_lessons_tests_pass_and_catch_the_twin(capsys, run) -> None:
    namespace = run(LESSON.run_solution, "14.2")
    check("14.2", namespace)
    out = capsys.readouterr().out
    assert "fail on its twin" in out and "✔ Exercise 14.2 passed" in out


TEST_HEAD = """
import pytest
from fastmcp import Client, FastMCP

from mcp_teach.servers.github_facts import add_github_tool
from mcp_teach.servers.github_replay import GitHubReplay


@pytest.mark.anyio
async def test_bad_name(monkeypatch):
    server = FastMCP("github")
    add_github_tool(server)
    with GitHubReplay("live") as github:
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        async with Client(server) as client:
            result = await client.call_tool("github_repository", {"repository": "a/b/c"}, raise_on_error=False)
"""


#: A test that expects the ToolError a bad name raises: GitHub's 404 raises one too.
RAISES_EITHER_WAY = (
    TEST_HEAD.replace(
        "            result = await client.call_tool(",
        "            with pytest.raises(ToolError):\n                await client.call_tool(",
    )
    .replace(", raise_on_error=False)", ")")
    .replace("import pytest\n", "import pytest\nfrom fastmcp.exceptions import ToolError\n")
)


@pytest.mark.wrong_answer("14.2")
@pytest.mark.parametrize(
    ("source", "fragments"),
    [
        (TEST_HEAD + "    assert result.is_error\n", ("sends any name to GitHub", "github.requests == []")),
        (RAISES_EITHER_WAY, ("sends any name to GitHub", "(isError, a ToolError) comes there too")),
        (TEST_HEAD + "    assert not result.is_error\n", ("every test passes", "FAILED test_cell.py::test_bad_name")),
        (
            TEST_HEAD + '    assert "invalid repository" in result.content[0].text\n',
            ("every test passes", "invalid repository", "is not a repository", "names its assertion"),
        ),
        ("def helper():\n    pass\n", ("at least one test that runs", "no tests ran")),
        (42, ("BAD_NAME_TESTS", "a str")),
    ],
    ids=[
        "cannot-fail",
        "pytest-raises-on-both",
        "fails",
        "words-the-tool-never-says",
        "no-tests",
        "not-a-string",
    ],
)
def test_tests_that_cannot_tell_or_do_not_pass_fail(source, fragments) -> None:
    failed_with("14.2", {"BAD_NAME_TESTS": source}, *fragments)


@pytest.mark.wrong_answer("14.2")
@pytest.mark.parametrize(
    ("source", "fragments"),
    [
        (
            "import pytest\n\n\ndef test_bad_name(:\n    pass\n",
            ("expected Python that compiles", "SyntaxError: invalid syntax (BAD_NAME_TESTS, line 4)", "the line it"),
        ),
        (
            TEST_HEAD.replace("servers.github_facts", "servers.github"),
            ("ModuleNotFoundError: No module named 'mcp_teach.servers.github'", "an ERROR line"),
        ),
    ],
    ids=["syntax-error", "wrong-module-imported"],
)
def test_tests_that_do_not_load_are_told_so_without_terminal_colours(source, fragments, monkeypatch) -> None:
    """Where a notebook forces colours, pytest colours its error lines: the feedback shows none of its codes."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("PY_COLORS", "1")
    message = failed_with("14.2", {"BAD_NAME_TESTS": source}, *fragments)
    assert "\x1b" not in message and "\\x1b" not in message and "[31m" not in message, message
    assert "the line of a failing test names its assertion" not in message


def test_the_lessons_host_config_starts_the_capstone(capsys, run) -> None:
    namespace = run(LESSON.run_solution, "14.3")
    check("14.3", namespace)
    assert "✔ Exercise 14.3 passed" in capsys.readouterr().out


def _config(**changes) -> dict:
    command, *args = capstone_command()
    entry = {"type": "stdio", "command": command, "args": args, "env": {"GITHUB_TOKEN": "${input:github-token}"}}
    token = {"type": "promptString", "id": "github-token", "description": "GitHub token", "password": True}
    return {"inputs": [token], "servers": {"capstone": entry | changes}}


@pytest.mark.parametrize(
    ("config", "fragments"),
    [
        (_config(env={"GITHUB_TOKEN": "ghp_madeUpForThisTest0123456789"}), ("${input:<id>}", "never holds it")),
        (_config(command="python"), ("the absolute path", "capstone_command()[0]")),
        ({"mcpServers": _config()["servers"]}, ('HOST_CONFIG["servers"]', '"mcpServers" is Claude Desktop')),
        ({"servers": _config()["servers"]}, ("an input whose id is 'github-token'", "letter for letter")),
        (
            _config() | {"inputs": [{"type": "promptString", "id": "github_token", "password": True}]},
            ("the ids ['github_token']", "letter for letter"),
        ),
        (
            _config() | {"inputs": [{"type": "promptString", "id": "github-token"}]},
            ("'github-token'", "password: true"),
        ),
        (_config(args=["../mcp_teach/serve.py", "--server", "capstone"]), ("in a folder of its own", "absolute")),
        (_config(command=sys.executable, args=["-c", "pass"]), ("starting the entry", "lists its tools")),
        (
            {"servers": {"capstone": {"type": "http", "url": "http://127.0.0.1:8000/mcp"}}},
            ("'http'", "a host starts this server over stdio"),
        ),
        (_config(env={"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}), ("'${env:GITHUB_TOKEN}'", "that input in")),
        (
            _config() | {"inputs": [{"type": "promptString", "id": "github-token", "password": "true"}]},
            ("'password': 'true'", "password: true"),
        ),
    ],
    ids=[
        "token-in-file",
        "relative-command",
        "claude-desktop-key",
        "input-not-declared",
        "input-id-differs",
        "input-not-a-password",
        "relative-path-in-args",
        "not-a-server",
        "lesson-10s-http-entry",
        "token-from-the-environment",
        "password-as-text",
    ],
)
@pytest.mark.wrong_answer("14.3")
def test_host_configs_that_leak_or_do_not_start_fail(config, fragments) -> None:
    failed_with("14.3", {"HOST_CONFIG": config}, *fragments)


@pytest.mark.wrong_answer("14.3")
def test_a_host_config_that_never_answers_on_stdio_fails_in_time(monkeypatch) -> None:
    """A server started on another transport reads no stdin: the check gives up with feedback, not a hang."""
    monkeypatch.setattr(l14, "START_SECONDS", 3.0)
    config = _config(args=[*capstone_command()[1:], "--transport", "streamable-http", "--port", "0"])
    failed_with("14.3", {"HOST_CONFIG": config}, "no answer to initialize on stdin within 3 s", "no --transport")


@pytest.mark.wrong_answer("14.3")
def test_a_server_that_fails_the_handshake_is_feedback_not_a_traceback() -> None:
    failed_with("14.3", {"HOST_CONFIG": _config(command="/bin/cat", args=[])}, "starting the entry", "found MCPError")


FORGETS_THE_REPLAY = """
import pytest
from fastmcp import Client, FastMCP

from mcp_teach.servers.github_facts import add_github_tool
from mcp_teach.servers.github_replay import GitHubReplay


@pytest.mark.anyio
async def test_no_request_for_a_bad_name():
    server = FastMCP("github")
    add_github_tool(server)
    with GitHubReplay("live") as github:  # but GITHUB_API_URL is never pointed at it
        async with Client(server) as client:
            result = await client.call_tool("github_repository", {"repository": "../etc/passwd"}, raise_on_error=False)
    assert result.is_error and github.requests == []
"""

NOT_MARKED_ASYNC = FORGETS_THE_REPLAY.replace("@pytest.mark.anyio\n", "")


@pytest.mark.wrong_answer("14.2")
def test_a_test_that_forgets_its_replay_is_told_so_and_reaches_no_real_github(monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    failed_with("14.2", {"BAD_NAME_TESTS": FORGETS_THE_REPLAY}, "at least one test fails", "monkeypatch.setenv")
    assert "GITHUB_API_URL" not in os.environ  # the check's own address for it is gone again


@pytest.mark.wrong_answer("14.2")
def test_an_async_test_without_its_marker_gets_the_marker_hint() -> None:
    failed_with("14.2", {"BAD_NAME_TESTS": NOT_MARKED_ASYNC}, "pytest.mark.anyio")
