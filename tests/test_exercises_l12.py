"""mcp_teach.exercises.l12: the solved lesson's own answers pass, wrong ones fail with expected / found / hint.

The right answers are not retyped here: each test runs the code of the exercise's solution cell in
``notebooks/solutions/12_security.ipynb`` (top-level ``await`` included), in a namespace holding what the lesson
defined before it.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import ToolResult

from mcp_teach.client import teaching_client
from mcp_teach.exercises import check
from mcp_teach.llm.host_guard import definition_hash
from mcp_teach.servers.notes import build_notes_server

EXERCISES = ("12.1", "12.2", "12.3")
LESSON = SolvedLesson(
    "12_security.ipynb",
    {
        "Path": Path,
        "build_notes_server": build_notes_server,
        "os": os,
        "teaching_client": teaching_client,
        "tempfile": tempfile,
    },
)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    assert LESSON.assert_answers_defined_nowhere_else() == list(EXERCISES)


@pytest.mark.parametrize(
    ("exercise_id", "found"),
    [
        ("12.1", "20 characters saved, 21 refused"),
        ("12.2", "1 planted symlink raised ValueError"),
        ("12.3", "rug pull: ['add']"),
    ],
)
def test_the_lesson_solution_passes(exercise_id: str, found: str, run, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(LESSON.run_solution, exercise_id)
    check(exercise_id, namespace)
    out = capsys.readouterr().out
    assert found in out and f"✔ Exercise {exercise_id} passed" in out


# 12.1 ---------------------------------------------------------------------------------------------------------


def _gate(
    limit_check,
    *,
    passes_on: bool = True,
    fixed_text: str | None = None,
    size: Any = len,
    field: str = "content",
    refusal: Any = lambda text: ToolResult(content=text, is_error=True),
) -> type:
    """A ShortNotes measuring ``size(arguments[field])``, answering ``refusal(text)`` when ``limit_check`` says so."""

    class Gate(Middleware):
        def __init__(self, max_characters: int) -> None:
            self.max_characters = max_characters

        async def on_call_tool(self, context, call_next):
            content = (context.message.arguments or {}).get(field, "")
            if context.message.name == "save_note" and limit_check(size(content), self.max_characters):
                text = fixed_text or f"at most {self.max_characters} characters, got {size(content)}"
                return refusal(text)
            if not passes_on:
                return ToolResult(content="no", is_error=True)
            return await call_next(context)

    return Gate


@pytest.mark.wrong_answer("12.1")
def test_12_1_refusing_the_limit_itself_fails() -> None:
    failed_with("12.1", {"ShortNotes": _gate(lambda n, m: n >= m)}, "with exactly 20 characters", "longer")


@pytest.mark.wrong_answer("12.1")
def test_12_1_a_gate_that_never_refuses_fails() -> None:
    failed_with("12.1", {"ShortNotes": _gate(lambda n, m: False)}, "with 21 characters", "is_error=True")


@pytest.mark.wrong_answer("12.1")
def test_12_1_a_fixed_message_fails() -> None:
    gate = _gate(lambda n, m: n > m, fixed_text="Too long: at most 280 characters.")
    failed_with("12.1", {"ShortNotes": gate}, "the refusal's text", "self.max_characters")


@pytest.mark.wrong_answer("12.1")
def test_12_1_a_gate_that_blocks_other_tools_fails() -> None:
    failed_with("12.1", {"ShortNotes": _gate(lambda n, m: n > m, passes_on=False)}, "with exactly 20 characters")


@pytest.mark.wrong_answer("12.1")
def test_12_1_a_gate_that_writes_anyway_fails() -> None:
    class Late(Middleware):
        def __init__(self, max_characters: int) -> None:
            self.max_characters = max_characters

        async def on_call_tool(self, context, call_next):
            result = await call_next(context)  # the note is written before the check
            content = (context.message.arguments or {}).get("content", "")
            if len(content) > self.max_characters:
                return ToolResult(content=f"at most {self.max_characters}, got {len(content)}", is_error=True)
            return result

    failed_with("12.1", {"ShortNotes": Late}, "the files in the notes folder", "call_next")


@pytest.mark.wrong_answer("12.1")
def test_12_1_not_a_middleware_fails() -> None:
    failed_with("12.1", {"ShortNotes": object}, "subclasses fastmcp's Middleware")


# 12.2 ---------------------------------------------------------------------------------------------------------


def naive_note_path(folder: Path, title: str) -> Path:
    return folder / (title + ".txt")


def resolving_only(folder: Path, title: str) -> Path:
    """Refuses what resolves outside the folder: passes '../x' checks, misses 'sub/x' and the link."""
    path = folder / (title + ".txt")
    if not path.resolve().is_relative_to(folder.resolve()):
        raise ValueError("outside")
    return path


def allowlist_only(folder: Path, title: str) -> Path:
    """A good allowlist without the symbolic-link check."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}", title) or ".." in title:
        raise ValueError("not allowed")
    return folder / (title + ".txt")


@pytest.mark.wrong_answer("12.2")
def test_12_2_the_naive_function_fails() -> None:
    failed_with("12.2", {"safe_note_path": naive_note_path}, "safe_note_path(folder, '../escape')", "allowlist")


@pytest.mark.wrong_answer("12.2")
def test_12_2_resolving_without_an_allowlist_fails() -> None:
    failed_with("12.2", {"safe_note_path": resolving_only}, "safe_note_path(folder, 'sub/note')")


@pytest.mark.wrong_answer("12.2")
def test_12_2_an_allowlist_without_the_link_check_fails() -> None:
    failed_with("12.2", {"safe_note_path": allowlist_only}, "symbolic link", "is_symlink")


@pytest.mark.wrong_answer("12.2")
def test_12_2_refusing_valid_titles_fails() -> None:
    def nothing(folder: Path, title: str) -> Path:
        raise ValueError("never")

    failed_with("12.2", {"safe_note_path": nothing}, "safe_note_path(folder, 'shopping list')", "a path in the folder")


@pytest.mark.wrong_answer("12.2")
def test_12_2_creating_files_fails() -> None:
    def touching(folder: Path, title: str) -> Path:
        path = allowlist_only(folder, title)
        if path.is_symlink():
            raise ValueError("link")
        path.touch()
        return path

    failed_with("12.2", {"safe_note_path": touching}, "the files in the check's folder", "must not create")


# 12.3 ---------------------------------------------------------------------------------------------------------


@pytest.mark.wrong_answer("12.3")
def test_12_3_comparing_descriptions_only_fails() -> None:
    def descriptions(before: list[Any], after: list[Any]) -> list[str]:
        old = {tool.name: tool.description for tool in before}
        return sorted(tool.name for tool in after if old.get(tool.name) != tool.description)

    failed_with("12.3", {"changed_tools": descriptions}, "only two's inputSchema changed", "input_schema")


@pytest.mark.wrong_answer("12.3")
def test_12_3_comparing_by_position_fails() -> None:
    def by_position(before: list[Any], after: list[Any]) -> list[str]:
        return sorted(
            b.name
            for a, b in zip(before, after, strict=False)
            if a.name != b.name or definition_hash(a) != definition_hash(b)
        )

    failed_with("12.3", {"changed_tools": by_position}, "[two, one]", "by name")


@pytest.mark.wrong_answer("12.3")
def test_12_3_ignoring_new_tools_fails() -> None:
    def known_only(before: list[Any], after: list[Any]) -> list[str]:
        old = {tool.name: definition_hash(tool) for tool in before}
        return sorted(t.name for t in after if t.name in old and old[t.name] != definition_hash(t))

    failed_with("12.3", {"changed_tools": known_only}, "'three' is new", "never approved")


@pytest.mark.wrong_answer("12.3")
def test_12_3_unsorted_fails() -> None:
    def unsorted(before: list[Any], after: list[Any]) -> list[str]:
        old = {tool.name: definition_hash(tool) for tool in before}
        return [t.name for t in after if old.get(t.name) != definition_hash(t)]

    failed_with("12.3", {"changed_tools": unsorted}, "several changes", "sorted")


@pytest.mark.wrong_answer("12.1")
def test_12_1_a_gate_that_raises_is_feedback_not_a_traceback() -> None:
    class Crashes(Middleware):
        def __init__(self, max_characters: int) -> None:
            self.max_characters = max_characters

        async def on_call_tool(self, context, call_next):
            if len(context.message.arguments["content"]) > self.max_characters:  # read_note has no content
                return ToolResult(content="too long", is_error=True)
            return await call_next(context)

    failed_with("12.1", {"ShortNotes": Crashes}, "called through ShortNotes(20)", "your gate raised")


@pytest.mark.wrong_answer("12.3")
def test_12_3_tools_read_as_dicts_are_feedback() -> None:
    def as_dicts(before: list[Any], after: list[Any]) -> list[str]:
        return sorted(tool["name"] for tool in after)

    failed_with("12.3", {"changed_tools": as_dicts}, "it raised TypeError", "not dicts")


@pytest.mark.wrong_answer("12.3")
def test_12_3_a_set_is_not_a_list() -> None:
    def as_set(before: list[Any], after: list[Any]) -> set[str]:
        old = {tool.name: definition_hash(tool) for tool in before}
        return {t.name for t in after if old.get(t.name) != definition_hash(t)}

    failed_with("12.3", {"changed_tools": as_set}, "what changed_tools returned", "sorted(")


def hint_of(message: str) -> str:
    """The hint of a failed check's feedback: the part that must name the mistake and never hold the answer."""
    return message.split("Hint:", 1)[1]


@pytest.mark.wrong_answer("12.1")
@pytest.mark.parametrize(
    ("gate", "fragments"),
    [
        (_gate(lambda n, m: n > 280), ("with 21 characters", "not a fixed number")),
        (_gate(lambda n, m: n > m, size=lambda text: len(text.encode())), ("exactly 20 characters", "got 40")),
        (_gate(lambda n, m: n > m, field="title"), ("with 21 characters", "the content in context.message.arguments")),
        (_gate(lambda n, m: n > m, refusal=lambda text: text), ("Internal server error", "a ToolResult (not a str)")),
        (_gate(lambda n, m: n > m, fixed_text="Too long: at most 20 characters."), ("found 'Too long", "len(content)")),
    ],
    ids=["the-lessons-280-typed-in", "bytes-not-characters", "the-title-measured", "a-str-refusal",
         "the-length-left-out"],
)  # fmt: skip
def test_12_1_wrong_gates_fail_with_the_hint_that_fits(gate: type, fragments: tuple[str, ...]) -> None:
    failed_with("12.1", {"ShortNotes": gate}, *fragments)


TITLE_RULE = r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}"


def _checked(allowed: Any, *, resolved_folder: bool = True) -> Any:
    """safe_note_path with the title test ``allowed(title)``, the link check and the folder check."""

    def safe_note_path(folder: Path, title: str) -> Path:
        if not allowed(title) or ".." in title:
            raise ValueError("not an allowed title")
        path = folder / (title + ".txt")
        if path.is_symlink() or path.resolve().parent != (folder.resolve() if resolved_folder else folder):
            raise ValueError("not in the folder")
        return path

    return safe_note_path


def _string_prefix(folder: Path, title: str) -> Path:
    """Compares strings: a resolved path that starts with the folder's text passes."""
    path = folder / (title + ".txt")
    if path.is_symlink() or not str(path.resolve()).startswith(str(folder.resolve())):
        raise ValueError("outside")
    return path


@pytest.mark.wrong_answer("12.2")
@pytest.mark.parametrize(
    ("safe_note_path", "fragments"),
    [
        (_checked(lambda title: re.match(TITLE_RULE, title)), ("safe_note_path(folder, 'x' * 65)", "re.fullmatch")),
        (_checked(lambda title: re.match(f"^{TITLE_RULE}$", title)), ("(folder, 'note\\n')", "re.fullmatch")),
        (
            _checked(lambda title: re.fullmatch(TITLE_RULE.replace("63", "62"), title)),
            ("'v1.2 notesxxx", "expected a path in the folder", "1 to 64"),
        ),
        (
            _checked(lambda title: re.fullmatch(TITLE_RULE, title), resolved_folder=False),
            ("safe_note_path(folder, 'shopping list')", "found ValueError", "resolved paths on both sides"),
        ),
        (_string_prefix, ("safe_note_path(folder, 'sub/note')", "allowlist with re.fullmatch")),
    ],
    ids=["re-match-a-prefix", "dollar-before-a-newline", "63-characters-at-most", "the-folder-not-resolved",
         "a-string-prefix-check"],
)  # fmt: skip
def test_12_2_wrong_path_checks_fail_with_the_hint_that_fits(safe_note_path: Any, fragments: tuple[str, ...]) -> None:
    message = failed_with("12.2", {"safe_note_path": safe_note_path}, *fragments)
    assert "{0,63}" not in hint_of(message)


def _names_only(before: list[Any], after: list[Any]) -> list[str]:
    return sorted({tool.name for tool in after} - {tool.name for tool in before})


def _schemas_only(before: list[Any], after: list[Any]) -> list[str]:
    approved = {tool.name: tool.input_schema for tool in before}
    return sorted(tool.name for tool in after if approved.get(tool.name) != tool.input_schema)


def _the_tools(before: list[Any], after: list[Any]) -> list[Any]:
    approved = {tool.name: definition_hash(tool) for tool in before}
    return sorted((t for t in after if approved.get(t.name) != definition_hash(t)), key=lambda tool: tool.name)


def _removed_too(before: list[Any], after: list[Any]) -> list[str]:
    old, new = ({tool.name: definition_hash(tool) for tool in tools} for tools in (before, after))
    return sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))


@pytest.mark.wrong_answer("12.3")
@pytest.mark.parametrize(
    ("changed_tools", "fragments"),
    [
        (_names_only, ("the untrusted server's rug pull", "found []", "the tool of the same name")),
        (_schemas_only, ("only one's description changed", "compare the description too")),
        (_the_tools, ("a list of tool names (str)", "tool.name, not the tools")),
        (_removed_too, ("when 'two' disappeared", "only tools that are in after")),
        (lambda before, after: ["add"], ("changed_tools(tools, tools)", "nothing changed")),
    ],
    ids=["names-only", "schemas-only", "tools-not-names", "removed-tools-too", "the-rug-pull-typed-in"],
)
def test_12_3_wrong_detectors_fail_with_the_hint_that_fits(changed_tools: Any, fragments: tuple[str, ...]) -> None:
    message = failed_with("12.3", {"changed_tools": changed_tools}, *fragments)
    assert "definition_hash(tool) for" not in hint_of(message)
