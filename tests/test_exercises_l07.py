"""mcp_teach.exercises.l07: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

The right answers are not retyped here: each test runs the code of the exercise's solution cell in
``notebooks/solutions/07_resources_prompts.ipynb`` (top-level ``await`` included), in a namespace holding what the
lesson defined before it. The wrong answers are small functions, each missing one rule of the task.
"""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with, passed
from fastmcp import FastMCP
from fastmcp.exceptions import ValidationError
from fastmcp.prompts import Message

from mcp_teach.client import teaching_client
from mcp_teach.exercises import check
from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.l07 import expected_context
from mcp_teach.servers.knowledge import build_knowledge_server

EXERCISES = ("07.1", "07.2", "07.3")
NOTES = {"monday": "Stand-up at 9.", "tuesday": "Review lesson 07."}


async def _resources() -> list[mcp_types.Resource]:
    async with teaching_client(build_knowledge_server()) as client:
        return await client.list_resources()


def lesson_names() -> dict[str, Any]:
    """What the lesson has defined by the time its exercises start (the names their solution cells use)."""
    notes = FastMCP("my-notes", version="0.1.0")
    notes.resource("notes://{day}", name="note", mime_type="text/plain")(lambda day: NOTES[day])
    return {
        "FastMCP": FastMCP,
        "Message": Message,
        "NOTES": NOTES,
        "ValidationError": ValidationError,
        "mcp_types": mcp_types,
        "notes": notes,
        "resources": run_sync(_resources()),
        "teaching_client": teaching_client,
    }


LESSON = SolvedLesson("07_resources_prompts.ipynb", lesson_names)
run_solution = LESSON.run_solution


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    assert LESSON.assert_answers_defined_nowhere_else() == list(EXERCISES)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_the_lesson_solution_passes(run, exercise_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(run_solution, exercise_id)
    check(exercise_id, namespace)
    passed(capsys, exercise_id)


def _completion(rule):
    def add_day_completion(mcp: FastMCP, days: list[str]) -> None:
        @mcp.completion
        def complete(ref, argument, context):
            return rule(ref, argument, days)

    return add_day_completion


def _everything(ref, argument, days):
    return [day for day in days if day.lower().startswith(argument.value.lower())]


def _for_the_day(ref, argument):
    wanted = getattr(ref, "uri", None) == "notes://{day}" or getattr(ref, "name", None) == "plan_the_day"
    return wanted and argument.name == "day"


def _the_right_references(match):
    """The task's rule, with ``match(argument_value, days)`` choosing the suggestions."""
    return lambda ref, argument, days: match(argument.value, days) if _for_the_day(ref, argument) else None


#: 07.1's wrong rules: (what the handler returns, what the feedback must say).
WRONG_COMPLETIONS = {
    "case-sensitive": (
        _the_right_references(lambda value, days: [day for day in days if day.startswith(value)]),
        ("'T'", "lower"),
    ),
    "every-reference": (_everything, ("pick_mood", "return None")),
    "template-only": (
        lambda ref, argument, days: (
            _everything(ref, argument, days) if getattr(ref, "uri", None) == "notes://{day}" else None
        ),
        ("plan_the_day", ".name"),
    ),
    "sorted": (
        _the_right_references(lambda value, days: sorted(d for d in days if d.lower().startswith(value.lower()))),
        ("day=''", "in order"),
    ),
    "substring": (
        _the_right_references(lambda value, days: [d for d in days if value.lower() in d.lower()]),
        ("day='t'", "start with what was typed"),
    ),
    "days-returned-lower-cased": (
        _the_right_references(lambda value, days: [d.lower() for d in days if d.lower().startswith(value.lower())]),
        ("day=''", "unchanged"),
    ),
    "typed-value-lowered-only": (
        _the_right_references(lambda value, days: [d for d in days if d.startswith(value.lower())]),
        ("day='sat'", "lower-case the days too"),
    ),
    "the-lessons-notes": (
        _the_right_references(lambda value, days: [d for d in NOTES if d.startswith(value.lower())]),
        ("day=''", "all the days given (days)"),
    ),
}


@pytest.mark.wrong_answer("07.1")
@pytest.mark.parametrize("mistake", list(WRONG_COMPLETIONS))
def test_07_1_case_order_matching_and_the_references_are_checked(mistake: str) -> None:
    rule, fragments = WRONG_COMPLETIONS[mistake]
    failed_with("07.1", {"add_day_completion": _completion(rule)}, *fragments)


@pytest.mark.wrong_answer("07.1")
def test_07_1_a_handler_never_registered_fails() -> None:
    failed_with("07.1", {"add_day_completion": lambda mcp, days: None}, "@mcp.completion")


def test_07_1_a_name_instead_of_a_function_fails() -> None:
    failed_with("07.1", {"add_day_completion": "complete"}, "a function")


def _review(messages, *, refuse=ValidationError):
    def add_review_prompt(mcp: FastMCP, notes: dict[str, str]) -> None:
        @mcp.prompt
        def review_note(day: str) -> list[Message]:
            if day not in notes:
                raise refuse(f"no note for {day}")
            return messages(day, notes[day])

    return add_review_prompt


def _embedded(day: str, text: str, mime: str = "text/plain") -> Message:
    contents = mcp_types.TextResourceContents(uri=f"notes://{day}", mime_type=mime, text=text)
    return Message(mcp_types.EmbeddedResource(type="resource", resource=contents))


def _refused_with_a_message(mcp: FastMCP, notes: dict[str, str]) -> None:
    @mcp.prompt
    def review_note(day: str) -> list[Message]:
        if day not in notes:
            return [Message(f"There is no note for {day}.")]
        return [Message(f"Review {day}."), _embedded(day, notes[day])]


def _day_with_a_default(mcp: FastMCP, notes: dict[str, str]) -> None:
    @mcp.prompt
    def review_note(day: str = "monday") -> list[Message]:
        if day not in notes:
            raise ValidationError(f"no note for {day}")
        return [Message(f"Review {day}."), _embedded(day, notes[day])]


def _link(day: str, note: str) -> Message:
    return Message(mcp_types.ResourceLink(type="resource_link", uri=f"notes://{day}", name=day))


def _at(uri: str, note: str) -> Message:
    contents = mcp_types.TextResourceContents(uri=uri, mime_type="text/plain", text=note)
    return Message(mcp_types.EmbeddedResource(type="resource", resource=contents))


#: 07.2's wrong prompts: (add_review_prompt, what the feedback must say).
WRONG_PROMPTS = {
    "note-in-the-text": (
        _review(lambda day, note: [Message(f"Review {day}: {note}")]),
        ("(role, content type)", "EmbeddedResource"),
    ),
    "a-resource-link": (
        _review(lambda day, note: [Message(f"Review {day}."), _link(day, note)]),
        ("(role, content type)", "resource_link would only point"),
    ),
    "note-from-the-assistant": (
        _review(lambda day, note: [Message(f"Review {day}."), Message(_embedded(day, note).content, "assistant")]),
        ("(role, content type)", "two user messages"),
    ),
    "note-first": (
        _review(lambda day, note: [_embedded(day, note), Message(f"Review {day}.")]),
        ("(role, content type)", "the text first"),
    ),
    "markdown": (
        _review(lambda day, note: [Message(f"Review {day}."), _embedded(day, note, "text/markdown")]),
        ("(uri, mimeType, text)", "text/plain", "say so in mime_type"),
    ),
    "uri-without-the-s": (
        _review(lambda day, note: [Message(f"Review {day}."), _at(f"note://{day}", note)]),
        ("(uri, mimeType, text)", "the uri names the day asked for"),
    ),
    "uri-of-the-lessons-example": (
        _review(lambda day, note: [Message(f"Review {day}."), _at("notes://monday", note)]),
        ("(uri, mimeType, text)", "the uri names the day asked for"),
    ),
    "the-day-as-text": (
        _review(lambda day, note: [Message(f"Review {day}."), _embedded(day, day)]),
        ("(uri, mimeType, text)", "that day's note from the notes your function was given"),
    ),
    "key-error": (
        _review(lambda day, note: [Message(f"Review {day}."), _embedded(day, note)], refuse=KeyError),
        ("sunday", "-32603"),
    ),
    "value-error": (
        _review(lambda day, note: [Message(f"Review {day}."), _embedded(day, note)], refuse=ValueError),
        ("sunday", "ValidationError"),
    ),
    "refused-with-a-message": (_refused_with_a_message, ("sunday", "-32602", "raise")),
    "day-with-a-default": (_day_with_a_default, ("the arguments of review_note", "day: str")),
    "no-prompt": (lambda mcp, notes: None, ("review_note",)),
}


@pytest.mark.wrong_answer("07.2")
@pytest.mark.parametrize("mistake", list(WRONG_PROMPTS))
def test_07_2_messages_the_embedded_resource_and_the_error_code_fail(mistake: str) -> None:
    add_review_prompt, fragments = WRONG_PROMPTS[mistake]
    message = failed_with("07.2", {"add_review_prompt": add_review_prompt}, *fragments)
    assert "text=notes[day]" not in message and "uri=f'notes://{day}'" not in message


def test_07_2_the_right_prompt_passes(capsys: pytest.CaptureFixture[str]) -> None:
    check("07.2", {"add_review_prompt": _review(lambda day, note: [Message(f"Review {day}."), _embedded(day, note)])})
    passed(capsys, "07.2")


def test_07_3_the_reference_rule_on_the_knowledge_server() -> None:
    resources = run_sync(_resources())
    assert expected_context(resources, 2500) == ["docs://index", "docs://mcp-overview"]
    assert expected_context(resources, 700) == ["docs://index"]
    assert "docs://images/connection.png" not in expected_context(resources, 10_000)


@pytest.mark.wrong_answer("07.3")
def test_07_3_audience_order_and_skipping_fail() -> None:
    def by_priority_no_skip(resources, budget):
        chosen, used = [], 0
        for resource in sorted(resources, key=lambda r: -(r.annotations.priority if r.annotations else 0.5)):
            if resource.size is None or used + resource.size > budget:
                break
            chosen.append(str(resource.uri))
            used += resource.size
        return chosen

    def everything_that_fits(resources, budget):
        return expected_context(resources, budget) + ["docs://images/connection.png"] * (budget >= 10_000)

    def stops_at_first_too_big(resources, budget):
        readable = expected_context(resources, 10**9)
        chosen, used = [], 0
        sizes = {str(r.uri): r.size for r in resources}
        for uri in readable:
            if used + sizes[uri] > budget:
                break
            chosen.append(uri)
            used += sizes[uri]
        return chosen

    failed_with("07.3", {"choose_context": everything_that_fits}, "10000", "priority")
    failed_with("07.3", {"choose_context": stops_at_first_too_big}, "skipped and the next taken")
    failed_with("07.3", {"choose_context": by_priority_no_skip}, "choose_context")
    failed_with("07.3", {"choose_context": lambda resources, budget: 3}, "choose_context")


@pytest.mark.wrong_answer("07.1")
def test_07_1_a_handler_that_reads_the_argument_name_only_fails() -> None:
    def by_argument_only(ref, argument, days):
        if argument.name != "day":
            return None
        return [day for day in days if day.lower().startswith(argument.value.lower())]

    failed_with("07.1", {"add_day_completion": _completion(by_argument_only)}, "plan_the_week", "ref.name")


@pytest.mark.wrong_answer("07.1")
def test_07_1_a_handler_that_raises_is_told_so() -> None:
    def reads_name_of_a_template(ref, argument, days):
        if ref.name == "plan_the_day" or ref.uri == "notes://{day}":
            return [day for day in days if day.lower().startswith(argument.value.lower())]
        return None

    failed_with("07.1", {"add_day_completion": _completion(reads_name_of_a_template)}, "-32603", "your handler raised")


@pytest.mark.wrong_answer("07.2")
def test_07_2_a_prompt_that_fails_on_a_day_with_a_note_is_feedback() -> None:
    def the_lessons_notes(mcp: FastMCP, notes: dict[str, str]) -> None:
        @mcp.prompt
        def review_note(day: str) -> list[Message]:
            if day not in NOTES:  # the lesson's notes, not the ones given
                raise ValidationError(f"No note for {day!r}")
            return [Message(f"Review {day}."), _embedded(day, NOTES[day])]

    failed_with("07.2", {"add_review_prompt": the_lessons_notes}, "a day the notes have", "not the lesson's NOTES")


def _chooser(priority_of, fits):
    """07.3's rule with one part swapped: how a priority is read, and when a size fits."""

    def choose(resources, budget):
        def readable(r):
            audience = r.annotations.audience if r.annotations else None
            mime = r.mime_type or ""
            text = mime.startswith("text/") or mime == "application/json"
            return (not audience or "assistant" in audience) and r.size is not None and text

        chosen, used = [], 0
        for r in sorted(filter(readable, resources), key=priority_of, reverse=True):
            if fits(used + r.size, budget):
                chosen.append(str(r.uri))
                used += r.size
        return chosen

    return choose


def _audience(r):
    return r.annotations.audience if r.annotations else None


def _text(r):
    return (r.mime_type or "").startswith("text/") or r.mime_type == "application/json"


def _priority(r):
    given = r.annotations.priority if r.annotations else None
    return 0.5 if given is None else given


def _choose_by(readable, priority=_priority, order=lambda found: sorted(found, key=_priority, reverse=True)):
    """07.3's rule with ``readable`` as the filter and ``order`` to sort; a ``size`` of None counts as 0."""

    def choose(resources, budget):
        chosen, used = [], 0
        for r in order([r for r in resources if readable(r)]):
            if used + (r.size or 0) <= budget:
                chosen.append(str(r.uri))
                used += r.size or 0
        return chosen

    return choose


def _full(r):
    return (not _audience(r) or "assistant" in _audience(r)) and _text(r) and r.size is not None


#: 07.3's wrong choices: (choose_context, what the feedback must say).
WRONG_CHOICES = {
    "audience-ignored": (_choose_by(lambda r: _text(r) and r.size is not None), ("audience ['user']",)),
    "size-none-as-zero": (
        _choose_by(lambda r: (not _audience(r) or "assistant" in _audience(r)) and _text(r)),
        ("no size",),
    ),
    "no-annotations-left-out": (
        _choose_by(lambda r: "assistant" in (_audience(r) or []) and _text(r) and r.size is not None),
        ("without annotations counts as for both",),
    ),
    "json-left-out": (
        _choose_by(lambda r: _full(r) and (r.mime_type or "").startswith("text/")),
        ("docs://index is application/json",),
    ),
    "lowest-priority-first": (
        _choose_by(_full, order=lambda found: sorted(found, key=_priority)),
        ("knowledge server", "highest first"),
    ),
    "missing-priority-as-0": (
        _choose_by(_full, order=lambda found: sorted(found, key=lambda r: -(_priority(r) if r.annotations else 0))),
        ("priority 0.5",),
    ),
    "ties-by-uri": (
        _choose_by(_full, order=lambda found: sorted(found, key=lambda r: (-_priority(r), str(r.uri)))),
        ("equal priorities keep the list's order",),
    ),
    "sorted-then-reversed": (
        _choose_by(_full, order=lambda found: sorted(found, key=_priority)[::-1]),
        ("knowledge server", "another order", "equal priorities in the list's order"),
    ),
}


@pytest.mark.wrong_answer("07.3")
@pytest.mark.parametrize("mistake", list(WRONG_CHOICES))
def test_07_3_the_filter_the_order_and_the_budget_are_checked(mistake: str) -> None:
    choose_context, fragments = WRONG_CHOICES[mistake]
    failed_with("07.3", {"choose_context": choose_context}, *fragments)


@pytest.mark.wrong_answer("07.3")
def test_07_3_a_size_of_none_added_to_the_total_is_told_where_it_raised() -> None:
    def adds_none(resources, budget):
        chosen, used = [], 0
        for r in sorted(filter(lambda r: _text(r), resources), key=_priority, reverse=True):
            if used + r.size <= budget:
                chosen.append(str(r.uri))
                used += r.size
        return chosen

    failed_with("07.3", {"choose_context": adds_none}, "TypeError", "adds_none")


@pytest.mark.wrong_answer("07.3")
def test_07_3_a_zero_priority_read_as_missing_fails() -> None:
    zero_as_missing = _chooser(lambda r: (r.annotations.priority if r.annotations else None) or 0.5, int.__le__)
    failed_with("07.3", {"choose_context": zero_as_missing}, "a priority of 0.0 is the lowest")


@pytest.mark.wrong_answer("07.3")
def test_07_3_a_resource_that_fills_the_budget_exactly_must_be_taken() -> None:
    def priority(r):
        given = r.annotations.priority if r.annotations else None
        return 0.5 if given is None else given

    failed_with("07.3", {"choose_context": _chooser(priority, int.__lt__)}, "choose_context(")


@pytest.mark.wrong_answer("07.3")
def test_07_3_resource_objects_instead_of_uris_are_told_so() -> None:
    failed_with("07.3", {"choose_context": lambda resources, budget: resources[:1]}, "str(resource.uri)")
