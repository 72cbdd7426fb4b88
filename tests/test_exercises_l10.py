"""mcp_teach.exercises.l10: the solved lesson's own answers pass, wrong ones fail with expected / found / hint."""

from __future__ import annotations

import hashlib
import re
import sys

import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from fastmcp import Client, FastMCP

from mcp_teach.exercises import check
from mcp_teach.lessons.l10_host import search_server
from mcp_teach.llm.openai_tools import is_openai_name

LESSON = SolvedLesson(
    "10_many_servers.ipynb",
    {
        "Client": Client,
        "FastMCP": FastMCP,
        "hashlib": hashlib,
        "is_openai_name": is_openai_name,
        "re": re,
        "search_server": search_server,
        "sys": sys,
    },
)
run_solution = LESSON.run_solution


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


def test_10_1_the_hidden_server_fails() -> None:
    failed_with("10.1", {"clash_answer": "web searched for 'mcp'"})


def test_10_2_an_entry_without_include_tags_fails() -> None:
    entry = {"command": sys.executable, "args": [], "tools": {"calculator_divide": {"tags": ["allowed"]}}}
    failed_with("10.2", {"divide_only": entry}, "include_tags")


def test_10_2_two_tagged_tools_fail() -> None:
    tools = {"calculator_divide": {"tags": ["allowed"]}, "calculator_add": {"tags": ["allowed"]}}
    entry = {"command": sys.executable, "tools": tools, "include_tags": ["allowed"]}
    failed_with("10.2", {"divide_only": entry}, "calculator_add")


def test_10_3_a_plain_join_fails() -> None:
    failed_with("10.3", {"provider_name": lambda server, tool: f"{server}_{tool}"}, "^[A-Za-z0-9_-]")


def test_10_3_replacing_dots_alone_clashes() -> None:
    def dots(server: str, tool: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:64]

    failed_with("10.3", {"provider_name": dots}, "distinct")
