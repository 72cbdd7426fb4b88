"""Lesson 14's exercises (a web-API tool, its tests, shipping): what each one expects, for ``check("14.k")``.

- 14.1 ``explain_refusal(response, repository)``: GitHub's 451 (Unavailable For Legal Reasons, RFC 7725: a
  repository blocked, e.g. by a DMCA takedown) becomes a ToolError that says it is a legal block, names the status
  and the repository, and says that no retry and no token will help, with no clause that still advises either (that
  is a rate limit's or a bad token's answer); every other refusal is left to ``github_error``. The
  check asks the loopback replay of GitHub for real responses (451, 403 rate-limited, 403 forbidden, 404) and
  judges what the function returns for each.
- 14.2 ``BAD_NAME_TESTS``: pytest tests of the student's own, run by real pytest (``run_cell_tests``), that a name
  which is not ``owner/name`` never reaches GitHub. They must pass on the course's tool and fail on a twin that
  puts any text into the URL: a test that cannot fail tests nothing.
- 14.3 ``HOST_CONFIG``: VS Code's ``.vscode/mcp.json`` for the capstone, its token asked for, never written. The
  check starts the entry's command as the host would (over stdio, with the entry's ``env``) and lists its tools.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path
from typing import Any
from unittest.mock import patch

import httpx2
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError

from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import ANSI, Checker, described
from mcp_teach.exercises.language import say
from mcp_teach.lessons.l14_cell_tests import CellTestRun, run_cell_tests
from mcp_teach.servers import github_facts
from mcp_teach.servers.github_facts import API_URL_VARIABLE, github_error
from mcp_teach.servers.github_replay import GitHubReplay
from mcp_teach.transports.in_process import bounded_log

REPOSITORY = "octocat/blocked-example"
#: The other refusals the check asks the replay for ("live" does not know the repository: 404).
DELEGATED = ("rate_limited", "forbidden", "live")
#: Words that say no, and what they deny: trying again, or a token. "no retry or token will help", "Don't retry",
#: "calling again will not change that", "a token doesn't help", "retrying changes nothing" all say it.
_NO = r"(?:no|not|never|neither|nor|nothing|don't|doesn't|won't|cannot|can't|isn't|pointless|useless)"
_AGAIN = r"(?:retr\w*|try again|trying again|call\w* again|ask\w* again)"
NO_RETRY = re.compile(rf"\b{_NO}\b[^.]*\b{_AGAIN}|\b{_AGAIN}\b[^.]*\b{_NO}\b", re.IGNORECASE)
NO_TOKEN = re.compile(rf"\b{_NO}\b[^.]*\btoken|\btoken\b[^.]*\b{_NO}\b", re.IGNORECASE)
#: A clause that names a retry or a token and says no to neither advises it: "no token will help; retry in an hour"
#: denies the token and then sends the model back. Clauses end at punctuation and at "but", "then", "instead".
CLAUSE = re.compile(r"[.;:,!?]|\b(?:but|then|instead)\b", re.IGNORECASE)
ADVICE = re.compile(rf"\b{_AGAIN}|token", re.IGNORECASE)
NEGATED = re.compile(rf"\b{_NO}\b", re.IGNORECASE)
#: Words that send the model back later: the opposite of a legal block's answer.
LATER = re.compile(r"\b(later|in an? (few|minute|hour|while)|hours?|wait|until|set GITHUB_TOKEN)\b", re.IGNORECASE)


@functools.cache
def _response(scenario: str) -> httpx2.Response:
    """A real response from the replay server, read in full (once: the replay answers each scenario alike)."""
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


@exercise("14.1", answers=("explain_refusal",))
def refusal_explained(check: Checker, explain_refusal: Any) -> None:
    check.function(explain_refusal, "explain_refusal", hint="def explain_refusal(response, repository):")
    blocked = _explained(check, explain_refusal, _response("blocked")).replace("\u2019", "'")
    for word in ("451", "legal", REPOSITORY):
        check.true(
            word in blocked.lower(),
            f"the words of the 451 error: {word!r}",
            expected=f"a sentence containing {word!r}",
            found=blocked,
            hint=f'f"GitHub blocks {{repository!r}} for legal reasons (451): ..." (here repository is {REPOSITORY!r})',
        )
    advised = [
        clause.strip() for clause in CLAUSE.split(blocked) if ADVICE.search(clause) and not NEGATED.search(clause)
    ]
    check.true(
        not advised,
        "what the 451 error tells the model to do",
        expected="nothing that sends the model to a retry or a token: a legal block is no rate limit, no bad token",
        found=blocked,
        hint=f'{"; ".join(advised)!r} answers a rate limit or a missing token, and a legal block is neither: say "no '
        'retry or token will help"',
    )
    check.true(
        NO_RETRY.search(blocked) is not None and NO_TOKEN.search(blocked) is not None and not LATER.search(blocked),
        "what the 451 error tells the model to do",
        expected="that no retry and no token will help (and nothing about later)",
        found=blocked,
        hint='a model that is told nothing retries, and one told "later" waits: say "no retry or token will help"',
    )
    for scenario in DELEGATED:
        response = _response(scenario)
        check.equal(
            _explained(check, explain_refusal, response),
            str(github_error(response, REPOSITORY)),
            f"explain_refusal for {scenario} ({response.status_code})",
            hint="for any status but 451, return github_error(response, repository)",
        )
    say("451 explained as a legal block; 403 rate-limited, 403 forbidden and 404 left to github_error")


def unchecked_repository_path(repository: str) -> str:
    """``repository_path`` without its check: any text goes into the URL. 14.2's tests must catch the tool with it."""
    return f"/repos/{repository}"


#: Where the check points GITHUB_API_URL while your tests run: nothing listens there, so a test that forgets its
#: replay sends nothing to the real GitHub.
NOWHERE = "http://127.0.0.1:9"
#: What pytest says of an async test it cannot run, and what to do about it.
NOT_ASYNC = "async def functions are not natively supported"
#: An ERROR line: the file or a fixture failed before any test's own assertion ran.
ERROR_HINT = "an ERROR line: pytest could not import your tests or set one up; fix the error it names in your code"
ASYNC_HINT = "an async test needs @pytest.mark.anyio (or pytestmark = pytest.mark.anyio, as SERVER_TESTS has)"


def _report(run: CellTestRun) -> str:
    """pytest's lines without the colours it adds where they are forced (``FORCE_COLOR``, ``PY_COLORS``)."""
    return ANSI.sub("", "; ".join(run.lines))


@exercise("14.2", answers=("BAD_NAME_TESTS",))
def bad_names_are_tested(check: Checker, source: Any) -> None:
    check.instance(source, str, "BAD_NAME_TESTS", hint='BAD_NAME_TESTS = """ ... """: the test file, as a string')
    check.runs(compile, source, "BAD_NAME_TESTS", "exec", what="BAD_NAME_TESTS", expected="Python that compiles",
               hint="the line it names is in your tests: fix it there")  # fmt: skip
    with patch.dict(os.environ, {API_URL_VARIABLE: NOWHERE}):  # a test that forgets the replay reaches no one
        real = run_cell_tests(source)
    check.true(
        real.exit_code != pytest.ExitCode.NO_TESTS_COLLECTED,
        "your tests on the course's github_repository",
        expected="at least one test that runs",
        found=_report(real),
        hint=f"a test is a function named test_...; {ASYNC_HINT}",
    )
    check.true(
        real.passed,
        "your tests on the course's github_repository",
        expected="every test passes",
        found=_report(real),
        hint=ASYNC_HINT
        if NOT_ASYNC in _report(real)
        else ERROR_HINT
        if "ERROR " in _report(real)
        else "the line of a failing test names its assertion; the tool answers a bad name with isError: true",
    )
    with (
        patch.dict(os.environ, {API_URL_VARIABLE: NOWHERE}),
        patch.object(github_facts, "repository_path", unchecked_repository_path),  # the tool's one check, gone
    ):
        unchecked = run_cell_tests(source)
    check.true(
        not unchecked.passed,
        "your tests on a github_repository that sends any name to GitHub",
        expected="at least one test fails: that tool does not check its input",
        found=_report(unchecked),
        hint="an error alone (isError, a ToolError) comes there too (GitHub answers 404): assert that the replay got "
        "no request (github.requests == []), with GITHUB_API_URL pointing at that replay (monkeypatch.setenv), or "
        "that the message says the name 'is not a repository'",
    )
    say("your tests pass on the tool and fail on its twin that sends any name to GitHub")


#: ``${input:id}``: a value VS Code asks the user for (and keeps in its secret storage).
INPUT = re.compile(r"\$\{input:([^}]+)\}")
#: Stands in for the answer VS Code would give to a password input (made up).
ANSWERED_INPUT = "made-up-answer"


def _entry(check: Checker, config: Any) -> dict[str, Any]:
    check.instance(config, dict, "HOST_CONFIG", hint='HOST_CONFIG = {"servers": {"capstone": {...}}}')
    servers = config.get("servers")
    check.true(
        isinstance(servers, dict) and len(servers) == 1,
        'HOST_CONFIG["servers"]',
        expected="one entry: a name and its settings",
        found=servers if servers is not None else f"no 'servers', only {sorted(config)}",
        hint='VS Code\'s file names its servers under "servers" ("mcpServers" is Claude Desktop\'s)',
    )
    entry = next(iter(servers.values()))
    check.instance(entry, dict, "the server's entry", hint='{"type": "stdio", "command": ..., "args": [...]}')
    check.equal(entry.get("type"), "stdio", 'the entry\'s "type"', hint="a host starts this server over stdio")
    command, args = entry.get("command"), entry.get("args", [])
    check.true(
        isinstance(command, str) and Path(command).is_absolute() and Path(command).exists(),
        'the entry\'s "command"',
        expected="the absolute path of a program that exists",
        found=command,
        hint="a host starts in its own folder with its own PATH: capstone_command()[0] is absolute",
    )
    check.true(
        isinstance(args, list) and all(isinstance(arg, str) for arg in args),
        'the entry\'s "args"',
        expected="a list of strings",
        found=args,
        hint="capstone_command()[1:]",
    )
    return entry


def _secrets_asked(check: Checker, config: dict[str, Any], entry: dict[str, Any]) -> dict[str, str]:
    """The entry's ``env`` with each ``${input:id}`` answered; a token written into the file fails."""
    env = entry.get("env", {})
    check.instance(env, dict, 'the entry\'s "env"', hint='"env": {"GITHUB_TOKEN": "${input:github-token}"}')
    token = env.get("GITHUB_TOKEN")
    asked = INPUT.fullmatch(token) if isinstance(token, str) else None
    check.true(
        asked is not None,
        'the entry\'s env["GITHUB_TOKEN"]',
        expected="${input:<id>}: VS Code asks for it, the file never holds it",
        found=token,
        hint='"GITHUB_TOKEN": "${input:github-token}", and that input in "inputs"',
    )
    inputs = {item.get("id"): item for item in config.get("inputs", []) if isinstance(item, dict)}
    wanted = inputs.get(asked.group(1), {})
    check.true(
        bool(wanted),
        f'the input {asked.group(1)!r} in HOST_CONFIG["inputs"]',
        expected=f"an input whose id is {asked.group(1)!r}",
        found=f"the ids {sorted(map(str, inputs))}",
        hint="the id in inputs must be the one in ${input:...}, letter for letter",
    )
    check.true(
        wanted.get("type") == "promptString" and wanted.get("password") is True,
        f'the input {asked.group(1)!r} in HOST_CONFIG["inputs"]',
        expected='{"type": "promptString", "id": ..., "description": ..., "password": true}',
        found=wanted or config.get("inputs"),
        hint="password: true keeps the answer hidden as it is typed and in VS Code's secret storage",
    )
    return {name: INPUT.sub(ANSWERED_INPUT, str(value)) for name, value in env.items()}


#: How long the started server may take to answer ``initialize`` and ``tools/list`` (a busy machine included).
START_SECONDS = 30.0


async def _listed_tools(command: str, args: list[str], env: dict[str, str]) -> list[str]:
    """Start the entry as a host does: in a folder of its own (not the notebook's), over stdio."""
    with tempfile.TemporaryDirectory(prefix="mcp-teach-host-") as folder:
        transport = StdioTransport(command, args, env=env, cwd=folder, keep_alive=False, log_file=bounded_log())
        async with Client(transport) as client:
            return [tool.name for tool in await client.list_tools()]


@exercise("14.3", answers=("HOST_CONFIG",))
def host_config_starts(check: Checker, config: Any) -> None:
    entry = _entry(check, config)
    env = _secrets_asked(check, config, entry)
    tools: list[str] = []
    try:
        tools = run_sync(_listed_tools(entry["command"], entry.get("args", []), env), timeout=START_SECONDS)
    except TimeoutError:
        failure = f"no answer to initialize on stdin within {START_SECONDS:g} s"
    except Exception as error:  # reported as feedback: the host would show the same failure
        failure = described(error)
    else:
        failure = ""
    if failure:
        check.fail(
            "starting the entry as a host does, over stdio, in a folder of its own",
            "the capstone starts and lists its tools",
            failure,
            "run the command and its args in a terminal, from another folder: it should wait for JSON-RPC on stdin "
            "(over stdio: no --transport option; paths in args absolute)",
        )
    for name in ("test_simple_text", "github_repository"):
        check.contains(tools, name, "the tools the started server lists", hint="the command must start the capstone")
    say(f"the entry starts the capstone over stdio: {len(tools)} tools, github_repository among them")
