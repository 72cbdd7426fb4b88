"""mcp_teach.exercises.l10: the solved lesson's own answers pass, wrong ones fail with expected / found / hint."""

from __future__ import annotations

import hashlib
import re
import sys
from typing import Any

import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with

from mcp_teach.exercises import check
from mcp_teach.llm.openai_tools import is_openai_name

DEFINED = {"hashlib": hashlib, "is_openai_name": is_openai_name, "re": re, "sys": sys}
LESSON = SolvedLesson("10_many_servers.ipynb", DEFINED)
run_solution = LESSON.run_solution

CALCULATOR = {"command": sys.executable, "args": ["-m", "mcp_teach.serve"]}


@pytest.mark.parametrize("exercise_id", ["10.1", "10.2", "10.3"])
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    LESSON.assert_answers_defined_nowhere_else()


@pytest.mark.parametrize("exercise_id", ["10.1", "10.2", "10.3"])
def test_the_lesson_solution_passes(exercise_id: str, run, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(run_solution, exercise_id)
    check(exercise_id, namespace)
    assert f"✔ Exercise {exercise_id} passed" in capsys.readouterr().out


@pytest.mark.wrong_answer("10.1")
def test_10_1_comparing_bare_tool_names_fails() -> None:
    def bare(listed: dict[str, list[str]]) -> dict[str, list[str]]:
        owners: dict[str, list[str]] = {}
        for server, tools in listed.items():
            for tool in tools:
                owners.setdefault(tool, []).append(server)
        return {tool: servers for tool, servers in owners.items() if len(servers) > 1}

    failed_with("10.1", {"find_clashes": bare}, "git_hub_search")


@pytest.mark.wrong_answer("10.1")
def test_10_1_keeping_only_the_first_two_claimants_fails() -> None:
    def pairs(listed: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[str, str] = {}
        clashes: dict[str, list[str]] = {}
        for server, tools in listed.items():
            for tool in tools:
                name = f"{server}_{tool}"
                if name in seen:
                    clashes[name] = [seen[name], server]
                else:
                    seen[name] = server
        return clashes

    failed_with("10.1", {"find_clashes": pairs}, "a_b_c")


@pytest.mark.wrong_answer("10.1")
def test_10_1_a_list_of_names_fails() -> None:
    failed_with("10.1", {"find_clashes": lambda listed: ["git_hub_search"]}, "dict")


@pytest.mark.wrong_answer("10.2")
def test_10_2_an_entry_without_include_tags_fails() -> None:
    entry = {**CALCULATOR, "tools": {"calculator_divide": {"tags": ["allowed"]}}}
    failed_with("10.2", {"divide_only": entry}, "calculator_power")


@pytest.mark.wrong_answer("10.2")
def test_10_2_two_tagged_tools_fail() -> None:
    tools = {"calculator_divide": {"tags": ["allowed"]}, "calculator_add": {"tags": ["allowed"]}}
    failed_with("10.2", {"divide_only": {**CALCULATOR, "tools": tools, "include_tags": ["allowed"]}}, "calculator_add")


@pytest.mark.wrong_answer("10.2")
def test_10_2_a_denylist_lets_a_new_tool_in() -> None:
    tools = {name: {"enabled": False} for name in ("calculator_add", "calculator_subtract", "calculator_multiply")}
    failed_with("10.2", {"divide_only": {**CALCULATOR, "tools": tools}}, "calculator_power")


@pytest.mark.wrong_answer("10.3")
def test_10_3_a_plain_join_fails() -> None:
    failed_with("10.3", {"provider_name": lambda server, tool: f"{server}_{tool}"}, "^[A-Za-z0-9_-]")


@pytest.mark.wrong_answer("10.3")
def test_10_3_replacing_dots_alone_clashes() -> None:
    def dots(server: str, tool: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:64]

    failed_with("10.3", {"provider_name": dots}, "the first 55 characters of the cleaned name")


@pytest.mark.wrong_answer("10.2")
def test_10_2_an_entry_fastmcp_does_not_accept_fails() -> None:
    failed_with("10.2", {"divide_only": {"tools": {"calculator_divide": {"tags": ["allowed"]}}}}, "MCPConfig")


ALLOWED = {"tools": {"calculator_divide": {"tags": ["allowed"]}}, "include_tags": ["allowed"]}


@pytest.mark.wrong_answer("10.3")
def test_10_3_a_word_class_that_keeps_other_letters_fails() -> None:
    def word_class(server: str, tool: str) -> str:
        name = f"{server}_{tool}"
        if is_openai_name(name):
            return name
        digest = hashlib.sha256(f"{server}/{tool}".encode()).hexdigest()[:8]
        return re.sub(r"[^\w-]", "_", name)[:55] + "_" + digest

    failed_with("10.3", {"provider_name": word_class}, "provider_name('wiki', 'résumé.search')", "keeps letters like é")


@pytest.mark.wrong_answer("10.3")
def test_10_3_the_hash_of_another_string_fails() -> None:
    def other_hash(server: str, tool: str) -> str:
        name = f"{server}_{tool}"
        if is_openai_name(name):
            return name
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:55] + "_" + digest

    failed_with("10.3", {"provider_name": other_hash}, "sha256('knowledge/docs.search')")


@pytest.mark.wrong_answer("10.2")
@pytest.mark.parametrize(
    ("entry", "fragments"),
    [
        ({"command": "python3", "args": ["mcp_teach/serve.py"], **ALLOWED}, ("command and args", "sys.executable")),
        ({"mcpServers": {"calc": {**CALCULATOR, **ALLOWED}}}, ("write only the entry",)),
        (
            {**CALCULATOR, "tools": {"calculator_divide": {"tags": "allowed"}}, "include_tags": ["allowed"]},
            ("a list of strings",),
        ),
        ({**CALCULATOR, **ALLOWED, "include_tags": ["allow"]}, ("exactly the one in tools",)),
    ],
    ids=["wrong-command", "whole-config", "tags-a-string", "tags-differ"],
)
def test_10_2_wrong_entries_get_the_hint_that_fits(entry, fragments) -> None:
    failed_with("10.2", {"divide_only": entry}, *fragments)


@pytest.mark.wrong_answer("10.1")
def test_10_1_tool_objects_instead_of_names_is_feedback() -> None:
    def with_objects(listed):
        return {f"{server}_{tool.name}": [server] for server, tools in listed.items() for tool in tools}

    failed_with("10.1", {"find_clashes": with_objects}, "it raised AttributeError", "tool *names* (str)")


@pytest.mark.wrong_answer("10.1")
def test_10_1_sets_instead_of_lists_are_told_so() -> None:
    def as_sets(listed):
        claimed: dict[str, set[str]] = {}
        for server, tools in listed.items():
            for tool in tools:
                claimed.setdefault(f"{server}_{tool}", set()).add(server)
        return {name: owners for name, owners in claimed.items() if len(owners) > 1}

    failed_with("10.1", {"find_clashes": as_sets}, "not a set")


def _claimed(listed: dict[str, list[str]]) -> dict[str, list[str]]:
    claimed: dict[str, list[str]] = {}
    for server, tools in listed.items():
        for tool in tools:
            claimed.setdefault(f"{server}_{tool}", []).append(server)
    return claimed


@pytest.mark.wrong_answer("10.1")
@pytest.mark.parametrize(
    ("find_clashes", "fragments"),
    [
        (
            lambda listed: {name: sorted(owners) for name, owners in _claimed(listed).items() if len(owners) > 1},
            ("'git_hub_search': ['git_hub', 'git']", "in config order (the order of listed), not sorted"),
        ),
        (lambda listed: {"git_hub_search": ["git", "git_hub"]}, ("'a_b_c_d'", "every server that claims them")),
        (  # the check's own answer, typed in from its feedback
            lambda listed: {"git_hub_search": ["git", "git_hub"], "a_b_c_d": ["a", "a_b", "a_b_c"]},
            ("find_clashes({'notes': ['search'], 'git': ['hub_search', 'log']})", "only a prefixed name two servers"),
        ),
    ],
    ids=["owners-sorted", "the-lesson-example-typed-in", "the-answer-typed-in"],
)
def test_10_1_wrong_clash_checks_fail_with_the_hint_that_fits(find_clashes: Any, fragments: tuple[str, ...]) -> None:
    failed_with("10.1", {"find_clashes": find_clashes}, *fragments)


def _scheme(
    kept: int = 55, digest: object = lambda server, tool: hashlib.sha256(f"{server}/{tool}".encode())
) -> object:
    """provider_name as the task says, with another cut or another hash."""

    def provider_name(server: str, tool: str) -> str:
        name = f"{server}_{tool}"
        if is_openai_name(name):
            return name
        return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:kept] + "_" + digest(server, tool).hexdigest()[:8]

    return provider_name


def _always_hashed(server: str, tool: str) -> str:
    digest = hashlib.sha256(f"{server}/{tool}".encode()).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:55] + "_" + digest


@pytest.mark.wrong_answer("10.3")
@pytest.mark.parametrize(
    ("provider_name", "fragments"),
    [
        (_always_hashed, ("provider_name('calc', 'calculator_add')", "already fits is returned as it is")),
        (_scheme(kept=56), ("^[A-Za-z0-9_-]{1,64}$", "at most 64 characters: 55 kept")),
        (_scheme(digest=lambda server, tool: hashlib.md5(f"{server}/{tool}".encode())), ("sha256('knowledge/docs",)),
        (_scheme(digest=lambda server, tool: hashlib.sha256(tool.encode())), ("sha256('knowledge/docs.search')",)),
    ],
    ids=["a-fitting-name-hashed", "56-characters-kept", "md5", "the-tool-hashed-alone"],
)  # fmt: skip
def test_10_3_wrong_schemes_fail_with_the_hint_that_fits(provider_name: Any, fragments: tuple[str, ...]) -> None:
    message = failed_with("10.3", {"provider_name": provider_name}, *fragments)
    assert "hexdigest" not in message and "re.sub" not in message
