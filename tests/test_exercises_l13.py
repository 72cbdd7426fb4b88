"""mcp_teach.exercises.l13: the solved lesson's own answers pass the conformance suite's scenarios, and a blank or
wrong step fails naming each failing scenario with the suite's own message and a hint.

The right answers are not retyped here: each test runs the code of the exercise's solution cell in
``notebooks/solutions/13_capstone.ipynb``, in a namespace holding what the lesson defined before it. The checks run
the pinned official suite (Node 22+); without Node they are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

from mcp_teach.exercises import check
from mcp_teach.exercises.catalogue import GRADING_VARIABLE
from mcp_teach.exercises.check import ExerciseNotAttempted
from mcp_teach.exercises.l13 import EXERCISES, is_placeholder
from mcp_teach.servers import capstone

LESSON = SolvedLesson(
    "13_capstone.ipynb",
    # By the exercises every step's imports and data are defined: the lesson's cells are the module's statements.
    lambda: dict(vars(capstone)),
)


def blank(mcp: FastMCP, bus: object = None) -> None:
    """What a blank exercise cell defines: a step that adds nothing."""


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    assert LESSON.assert_answers_defined_nowhere_else() == [*EXERCISES]


def test_each_answer_is_the_package_step_it_replaces() -> None:
    assert [step.answer for step in EXERCISES.values()] == [
        "add_content_tools",
        "add_more_input_required",
        "add_watched_resources",
        "add_rich_prompts",
    ]
    assert all(callable(getattr(capstone, step.answer)) for step in EXERCISES.values())


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_the_lesson_solution_passes(exercise_id: str, node_folder: Path, run, capsys) -> None:
    namespace = run(LESSON.run_solution, exercise_id)
    check(exercise_id, namespace)
    out = capsys.readouterr().out
    wanted = [name for names in EXERCISES[exercise_id].wanted.values() for name in names]
    assert out.startswith("PASS ") and f"✔ Exercise {exercise_id} passed" in out
    assert all(name in out.replace("\n  ", " ") for name in wanted)
    assert ("a client that declared no capability gets -32021" in out) == (exercise_id == "13.2")


def test_a_blank_step_names_each_failing_scenario_with_the_suites_words(node_folder: Path) -> None:
    message = failed_with(
        "13.1",
        {"add_content_tools": blank},
        "0 of 4 pass",
        "tools-call-audio (2026-07-28) FAIL: failure tools-call-audio: Failed: Unknown tool: 'test_audio_content'",
        "tools-call-mixed-content (2026-07-28) FAIL",
        "Audio(data=WAV_TINY",
    )
    assert "tools-call-error (2026-07-28) FAIL" in message  # an unknown tool is -32602, no isError result


def test_a_tool_error_sent_as_a_normal_result_fails_tools_call_error(node_folder: Path) -> None:
    def without_is_error(mcp: FastMCP) -> None:
        capstone.add_content_tools(mcp)
        mcp.local_provider.remove_tool("test_error_handling")

        @mcp.tool(output_schema=None)
        def test_error_handling() -> str:
            """Says it failed, but in a normal result."""
            return "This tool intentionally returns an error for testing"

    failed_with(
        "13.1", {"add_content_tools": without_is_error}, "3 of 4 pass", "tools-call-error (2026-07-28) FAIL", "isError"
    )


def test_asking_a_client_for_what_it_did_not_declare_fails_13_2(node_folder: Path, monkeypatch) -> None:
    """The suite's client declares every capability, so it passes such a server: the check's own client does not."""
    monkeypatch.setattr(capstone, "answerable", lambda ctx, *requests: None)  # every question sent, declared or not
    failed_with(
        "13.2",
        {"add_more_input_required": capstone.add_more_input_required},
        "test_input_required_result_sampling, called by a client that declared no capability",
        "expected the JSON-RPC error -32021 (MissingRequiredClientCapability, 2026-07-28 basic/index), no request",
        "found an InputRequiredResult asking sampling/createMessage (keys: capital_question)",
        "answerable(ctx, ...)",
    )


def test_a_multi_round_tool_that_starts_over_on_a_missing_answer_fails_13_2(node_folder: Path) -> None:
    def starting_over(mcp: FastMCP) -> None:
        capstone.add_more_input_required(mcp)
        mcp.local_provider.remove_tool("test_input_required_result_multi_round")

        @mcp.tool(name="test_input_required_result_multi_round", output_schema=None)
        async def multi_round(ctx: Context) -> Any:
            """Three rounds, but anything unexpected starts again at round 1."""
            state = json.loads(ctx.request_state) if ctx.request_state else {"round": 0}
            answers = ctx.input_responses or {}
            if state["round"] == 1 and "step1" in answers:
                color = capstone.elicit_form(
                    "Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"]
                )
                next_state = json.dumps({"round": 2, "name": capstone.answered(answers["step1"], "name")})
                capstone.answerable(ctx, color)
                return mcp_types.InputRequiredResult(input_requests={"step2": color}, request_state=next_state)
            if state["round"] == 2 and "step2" in answers:
                return f"{state.get('name')} likes {capstone.answered(answers['step2'], 'color')}."
            first = capstone.name_question("Step 1: What is your name?")
            capstone.answerable(ctx, first)
            return mcp_types.InputRequiredResult(input_requests={"step1": first}, request_state='{"round": 1}')

    failed_with(
        "13.2",
        {"add_more_input_required": starting_over},
        "test_input_required_result_multi_round round 2 retried without its answer",
        "expected the round-2 question (step2) again",
        "found an InputRequiredResult asking elicitation/create (keys: step1)",
        "start at round 1 only when the state is missing",
    )


def test_while_grading_a_blank_step_is_not_attempted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GRADING_VARIABLE, "autograde")
    with pytest.raises(ExerciseNotAttempted, match=r"13\.2 — not attempted yet: write the body of add_more_input"):
        check("13.2", {"add_more_input_required": blank})
    assert not is_placeholder(capstone.add_more_input_required)


def test_a_step_that_raises_is_reported_before_the_suite_runs() -> None:
    def broken(mcp: FastMCP, bus: object) -> None:
        raise ToolError("typo in a decorator")

    failed_with("13.3", {"add_watched_resources": broken}, "building the server", "ToolError: typo in a decorator")


def test_an_answer_that_is_not_a_function_fails() -> None:
    failed_with("13.4", {"add_rich_prompts": "add_rich_prompts"}, "add_rich_prompts", "a function")
