"""mcp_teach.exercises.l10: the solved lesson's own answers pass, wrong ones fail with expected / found / hint."""

from __future__ import annotations

import hashlib
import re
import sys

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


def test_10_1_comparing_bare_tool_names_fails() -> None:
    def bare(listed: dict[str, list[str]]) -> dict[str, list[str]]:
        owners: dict[str, list[str]] = {}
        for server, tools in listed.items():
            for tool in tools:
                owners.setdefault(tool, []).append(server)
        return {tool: servers for tool, servers in owners.items() if len(servers) > 1}

    failed_with("10.1", {"find_clashes": bare}, "git_hub_search")


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


def test_10_1_a_list_of_names_fails() -> None:
    failed_with("10.1", {"find_clashes": lambda listed: ["git_hub_search"]}, "dict")


def test_10_2_an_entry_without_include_tags_fails() -> None:
    entry = {**CALCULATOR, "tools": {"calculator_divide": {"tags": ["allowed"]}}}
    failed_with("10.2", {"divide_only": entry}, "calculator_power")


def test_10_2_two_tagged_tools_fail() -> None:
    tools = {"calculator_divide": {"tags": ["allowed"]}, "calculator_add": {"tags": ["allowed"]}}
    failed_with("10.2", {"divide_only": {**CALCULATOR, "tools": tools, "include_tags": ["allowed"]}}, "calculator_add")


def test_10_2_a_denylist_lets_a_new_tool_in() -> None:
    tools = {name: {"enabled": False} for name in ("calculator_add", "calculator_subtract", "calculator_multiply")}
    failed_with("10.2", {"divide_only": {**CALCULATOR, "tools": tools}}, "calculator_power")


def test_10_3_a_plain_join_fails() -> None:
    failed_with("10.3", {"provider_name": lambda server, tool: f"{server}_{tool}"}, "^[A-Za-z0-9_-]")


def test_10_3_replacing_dots_alone_clashes() -> None:
    def dots(server: str, tool: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:64]

    failed_with("10.3", {"provider_name": dots}, "the first 55 characters of the cleaned name")


def test_10_2_an_entry_fastmcp_does_not_accept_fails() -> None:
    failed_with("10.2", {"divide_only": {"tools": {"calculator_divide": {"tags": ["allowed"]}}}}, "MCPConfig")


ALLOWED = {"tools": {"calculator_divide": {"tags": ["allowed"]}}, "include_tags": ["allowed"]}


def test_10_3_a_word_class_that_keeps_other_letters_fails() -> None:
    def word_class(server: str, tool: str) -> str:
        name = f"{server}_{tool}"
        if is_openai_name(name):
            return name
        digest = hashlib.sha256(f"{server}/{tool}".encode()).hexdigest()[:8]
        return re.sub(r"[^\w-]", "_", name)[:55] + "_" + digest

    failed_with("10.3", {"provider_name": word_class}, "provider_name('wiki', 'résumé.search')", "keeps letters like é")


def test_10_3_the_hash_of_another_string_fails() -> None:
    def other_hash(server: str, tool: str) -> str:
        name = f"{server}_{tool}"
        if is_openai_name(name):
            return name
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:55] + "_" + digest

    failed_with("10.3", {"provider_name": other_hash}, "sha256('knowledge/docs.search')")


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


def test_10_1_tool_objects_instead_of_names_is_feedback() -> None:
    def with_objects(listed):
        return {f"{server}_{tool.name}": [server] for server, tools in listed.items() for tool in tools}

    failed_with("10.1", {"find_clashes": with_objects}, "it raised AttributeError", "tool *names* (str)")


def test_10_1_sets_instead_of_lists_are_told_so() -> None:
    def as_sets(listed):
        claimed: dict[str, set[str]] = {}
        for server, tools in listed.items():
            for tool in tools:
                claimed.setdefault(f"{server}_{tool}", set()).add(server)
        return {name: owners for name, owners in claimed.items() if len(owners) > 1}

    failed_with("10.1", {"find_clashes": as_sets}, "not a set")
