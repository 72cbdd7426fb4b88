"""The exercise checks answer in the lesson's language: ``setup_notebook(language="zh")`` makes every sentence of a
check Chinese, from a gettext catalog Babel keeps in step with the checks (docs/zh/checks-catalog.md).

The catalog holds exactly the messages Babel extracts from ``mcp_teach/exercises`` (``docs/zh/babel.cfg``), each
translated, not fuzzy, with the same placeholders; real failing checks of lessons 01, 03 and 05, and the summary a
passed check prints, speak Chinese in a Chinese lesson and are unchanged in an English one; grading scores a Chinese
lesson as it scores an English one.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from mcp_teach.config import ConfigError, lesson_language, set_lesson_language
from mcp_teach.exercises import ExerciseFailed, check
from mcp_teach.exercises.catalogue import GRADING_VARIABLE
from mcp_teach.exercises.convention import find_exercises
from mcp_teach.exercises.grading import FAIL, NOT_ATTEMPTED, PASS, grade_notebook
from mcp_teach.exercises.kernel import Limits
from mcp_teach.exercises.l01 import kinds, legacy_handshake, modern_opening
from mcp_teach.exercises.student_copy import student_notebook
from mcp_teach.notebook_setup import setup_notebook
from mcp_teach.wire.raw_requests import raw_request

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "mcp_teach" / "locale" / "zh" / "LC_MESSAGES" / "checks.po"
EXERCISES = ROOT / "mcp_teach" / "exercises"
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
CHINESE = re.compile(r"[\u4e00-\u9fff]")
#: 03.2's first request: a method MCP does not define.
METHOD_NOT_FOUND = raw_request(1, "tools/run")


def extracted(folder: Path, template: Path) -> set[str]:
    """The msgids ``pybabel extract -F docs/zh/babel.cfg`` finds in ``folder`` (run as a contributor runs it)."""
    command = [sys.executable, "-c", "from babel.messages.frontend import main; main()", "-q", "extract"]
    command += ["-F", str(ROOT / "docs" / "zh" / "babel.cfg"), "--no-wrap", "-o", str(template), str(folder)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "docs" / "zh")}  # where the extraction method is
    subprocess.run(command, check=True, cwd=ROOT, env=environment, timeout=120)
    with template.open("rb") as pot:
        return {message.id for message in read_po(pot) if message.id}


def problems(messages: set[str], catalog: Catalog) -> list[str]:
    """What keeps ``catalog`` from being the translation of exactly ``messages``: each problem in a sentence."""
    translated = {message.id: message for message in catalog if message.id}
    found = [f"not in the catalog: {text!r}" for text in sorted(messages - translated.keys())]
    found += [f"no longer extracted: {text!r}" for text in sorted(translated.keys() - messages)]
    for text, message in sorted(translated.items()):
        if not message.string or message.fuzzy:
            found.append(f"not translated (or fuzzy): {text!r}")
        elif sorted(PLACEHOLDER.findall(text)) != sorted(PLACEHOLDER.findall(message.string)):
            found.append(f"other placeholders in the translation of {text!r}: {message.string!r}")
        elif "您" in message.string:
            found.append(f"您 where the course says 你: {message.string!r}")
    return found


def read_catalog() -> Catalog:
    with CATALOG.open("rb") as po:
        return read_po(po)


@pytest.fixture(scope="module")
def messages(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    return extracted(EXERCISES, tmp_path_factory.mktemp("pot") / "checks.pot")


@pytest.fixture
def chinese():
    """A Chinese lesson's kernel for the test's duration."""
    set_lesson_language("zh")
    yield
    set_lesson_language("en")


def failure(exercise_id: str, namespace: dict) -> ExerciseFailed:
    with pytest.raises(ExerciseFailed) as failed:
        check(exercise_id, namespace)
    return failed.value


# The catalog


def test_every_message_the_checks_show_has_its_chinese_translation(messages):
    assert len(messages) > 900
    assert problems(messages, read_catalog()) == []


def test_a_hint_without_a_translation_fails_the_catalog_test_and_so_does_a_stale_one(messages, tmp_path):
    copied = tmp_path / "exercises"
    shutil.copytree(EXERCISES, copied, ignore=shutil.ignore_patterns("__pycache__"))
    new_hint = "a hint written today that nobody has translated yet"
    new_summary = "{x} summaries printed today: {', '.join(names)}"
    with (copied / "l01.py").open("a", encoding="utf-8") as module:
        module.write(
            f'\n\ndef _extra(check: Checker, x: Any) -> None:\n    check.equal(x, 1, "my_x", hint="{new_hint}")\n'
            "    names = sorted(x)\n"
            '    say(x, "summaries printed today:", ", ".join(names))\n'
        )
    found = extracted(copied, tmp_path / "checks.pot")
    assert found == messages | {new_hint, new_summary}
    assert problems(found, read_catalog()) == [f"not in the catalog: {s!r}" for s in sorted({new_hint, new_summary})]
    stale = "the ids of the two replies"
    assert problems(messages - {stale}, read_catalog()) == [f"no longer extracted: {stale!r}"]
    catalog = read_catalog()
    catalog[stale].string = ""
    assert problems(messages, catalog) == [f"not translated (or fuzzy): {stale!r}"]


def test_the_extraction_follows_tables_helpers_and_f_strings(messages):
    assert "an id of 0 is still an id: test 'id' in message, not whether the id is truthy" in messages  # a table
    assert "the object {made_by} gave you (it records every message in .capture)" in messages  # a helper's f-string
    assert "store the object itself in {name}, not one of its messages or replies" in messages
    assert "'none of that name'" in messages  # Checker.true shows its found as a value
    assert "the task above says what {what} should be" in messages  # the fallback hint
    assert "✔ Exercise {id} passed" in messages
    assert "legacy: {dict(legacy_counts)}  modern: {dict(modern_counts)}" in messages  # say's values, joined
    assert "found: {len(sent)} lines sent, {len(received)} received\n       tools {tool_names}" in messages
    assert not any(text in messages for text in ("http_capture", "samples_on[{number}]", "{', '.join(names)}"))


# The language of a lesson


def test_setup_notebook_records_the_language_and_refuses_an_unknown_one():
    """Recorded in a fresh interpreter, as in a kernel: ``setup_notebook`` changes asyncio for its whole process, which
    would leak into the tests that run after it here. A refused language changes nothing, so that part runs here."""
    code = "from mcp_teach.notebook_setup import setup_notebook as s; from mcp_teach.config import lesson_language as l"
    code += "; s(language='zh'); print(l())"
    recorded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert recorded.stdout == "zh\n"
    with pytest.raises(ConfigError, match=r"language='fr' is not known: the checks speak 'en', 'zh'"):
        setup_notebook(language="fr")
    assert lesson_language() == "en"


# Real checks, wrong answers


def unknown_tool() -> dict:
    """03.2 with a tool name lesson 03 already showed (-32602 for an unknown tool)."""
    return {
        "method_not_found": METHOD_NOT_FOUND,
        "invalid_params": raw_request(2, "tools/call", {"name": "calculator_power", "arguments": {}}),
        "error_server": None,
        "codes": [-32601, -32602],
    }


def truthy_classify(message: dict) -> str:
    if "method" in message:
        return "request" if message.get("id") else "notification"
    return "response"


def raising_header_value(value: str) -> str:
    raise ValueError("not written yet")


WRONG = {
    "01.2": {"classify": truthy_classify, "legacy_counts": {}, "modern_counts": {}},
    "03.2": unknown_tool(),
    "05.3": {"header_value": raising_header_value},
}


def test_a_failed_check_is_unchanged_in_an_english_lesson():
    message = str(failure("03.2", WRONG["03.2"]))
    assert message.startswith(
        "Exercise 03.2 — the tool name in invalid_params: expected one of the calculator's tools: "
    )
    assert ", found 'calculator_power'. Hint: section 4 already showed an unknown tool (-32602 too)" in message
    lines = failure("01.2", WRONG["01.2"]).lines
    assert lines[0] == "Exercise 01.2 — classify({'jsonrpc': '2.0', 'id': 0, 'method': 'ping'})"
    assert lines[1:3] == ("  expected: 'request'", "  found:    'notification'")
    assert lines[3] == "  hint:     an id of 0 is still an id: test 'id' in message, not whether the id is truthy"
    lines = failure("05.3", WRONG["05.3"]).lines
    assert lines[1] == "  expected: a str"
    assert re.fullmatch(
        r"  found:    it raised ValueError: not written yet in raising_header_value, line \d+: .*", lines[2]
    )


def test_a_failed_check_speaks_chinese_in_a_chinese_lesson(chinese):
    failed = failure("03.2", WRONG["03.2"])
    assert str(failed).startswith("练习 03.2 — invalid_params 里的工具名：期望 计算器的工具之一：calculator_add, ")
    assert failed.lines[2] == "  实际：'calculator_power'"  # data as it is
    assert failed.lines[3].startswith("  提示：第 4 节已经展示过未知工具（也是 -32602）")
    lines = failure("01.2", WRONG["01.2"]).lines
    assert lines == (
        "练习 01.2 — classify({'jsonrpc': '2.0', 'id': 0, 'method': 'ping'})",
        "  期望：'request'",
        "  实际：'notification'",
        "  提示：id 为 0 也是 id：要测试 'id' in message，而不是 id 是否为真值",
    )
    lines = failure("05.3", WRONG["05.3"]).lines
    assert lines[1] == "  期望：一个 str"
    assert re.fullmatch(r"  实际：它在 raising_header_value 第 \d+ 行抛出了 ValueError: not written yet：.*", lines[2])
    assert lines[3] == "  提示：它必须对任何 str 都能工作"


def test_every_failed_line_a_chinese_check_shows_is_chinese_but_its_data(chinese):
    for exercise_id, namespace in WRONG.items():
        failed = failure(exercise_id, namespace)
        for line in (str(failed), *failed.lines):
            assert CHINESE.search(line), line
            assert not re.search(r"\b(expected|found|hint|Exercise)\b", line), line


def test_the_fallback_hint_and_the_words_of_found_speak_chinese(chinese):
    from mcp_teach.exercises.check import Checker

    with pytest.raises(ExerciseFailed) as failed:
        Checker("03.2").raises(lambda: None, ValueError, "the message of that ValueError")
    assert failed.value.lines[1:] == (
        "  期望：抛出 ValueError",
        "  实际：没有异常",
        "  提示：上面的任务写明了那个 ValueError 的消息应该是什么",
    )
    with pytest.raises(ExerciseFailed) as failed:
        Checker("01.1").true(
            False,
            "the headers of the server's first HTTP response",
            expected="a header named 'x'",
            found="none of that name",
        )
    assert failed.value.lines[1:3] == ("  期望：一个名为 'x' 的头", "  实际：'没有这个名字的头'")


def classified(message: dict) -> str:
    """01.2's answer: an id of 0 is still an id."""
    return truthy_classify({**message, "id": True} if "id" in message else message)


def test_passed_and_not_attempted_speak_chinese(chinese, capsys):
    counts = {"legacy_counts": kinds(legacy_handshake()), "modern_counts": kinds(modern_opening())}
    check("01.2", {"classify": classified, **counts})
    assert "✔ 练习 01.2 通过" in capsys.readouterr().out
    check("01.3", {})
    printed = capsys.readouterr().out
    assert printed.startswith(
        "练习 01.3 — 尚未作答：在上面的单元格里写下你的答案，让它定义 `my_version`, `raw`, `negotiated`，"
    )


def test_a_passed_check_prints_its_summary_in_the_lesson_language(capsys):
    """01.2's summary, two dicts between two words: data as it is, the words in the lesson's language."""
    counts = {"legacy_counts": kinds(legacy_handshake()), "modern_counts": kinds(modern_opening())}
    legacy, modern = "{'request': 1, 'response': 1, 'notification': 1}", "{'request': 2, 'response': 2}"
    check("01.2", {"classify": classified, **counts})
    assert capsys.readouterr().out == f"legacy: {legacy}  modern: {modern}\n✔ Exercise 01.2 passed\n"  # as stored
    set_lesson_language("zh")
    try:
        check("01.2", {"classify": classified, **counts})
    finally:
        set_lesson_language("en")
    assert capsys.readouterr().out == f"旧式：{legacy}  新式：{modern}\n✔ 练习 01.2 通过\n"


def test_say_prints_as_print_does_in_an_english_lesson(capsys):
    from mcp_teach.exercises.language import say

    for values, sep in [(("found: 3 lines sent,", 2, "received\n       tools", ["a"]), " "), (("x", None, 1.5), "\n")]:
        print(*values, sep=sep)
        expected = capsys.readouterr().out
        say(*values, sep=sep)
        assert capsys.readouterr().out == expected


def test_an_english_lesson_never_reads_the_catalog(monkeypatch):
    from mcp_teach.exercises import language

    language._catalog.cache_clear()
    failure("03.2", WRONG["03.2"])
    assert language._catalog.cache_info().currsize == 0


# Grading


def lesson_01(language: str, folder: Path) -> Path:
    """Lesson 01 as a student hands it in, the English lesson or its Chinese twin: 01.1 solved, 01.2 wrong (an id of
    0 is no id), 01.3 and 01.4 blank."""
    edition = ROOT / "notebooks" / ("zh" if language == "zh" else "")
    solved = nbformat.read(edition / "solutions" / "01_handshake.ipynb", as_version=4)
    student, _ = student_notebook(solved)
    exercises = {exercise.id: exercise for exercise in find_exercises(student)}
    student.cells[exercises["01.1"].solution].source = solved.cells[exercises["01.1"].solution].source
    wrong = solved.cells[exercises["01.2"].solution].source.replace('"id" in message', 'message.get("id")')
    student.cells[exercises["01.2"].solution].source = wrong
    path = folder / language / "01_handshake.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(copy.deepcopy(student), path)
    return path


def test_grading_scores_a_chinese_lesson_as_an_english_one(tmp_path, monkeypatch):
    monkeypatch.delenv(GRADING_VARIABLE, raising=False)
    limits = Limits(cell_timeout=120, time_limit=600)
    english, chinese = (grade_notebook(lesson_01(language, tmp_path), language, limits) for language in ("en", "zh"))
    scores = [(grade.exercise, grade.result) for grade in english.grades]
    assert scores == [("01.1", PASS), ("01.2", FAIL), ("01.3", NOT_ATTEMPTED), ("01.4", NOT_ATTEMPTED)]
    assert [(grade.exercise, grade.result) for grade in chinese.grades] == scores
    assert not english.notes and not chinese.notes
    messages = {grade.exercise: grade.message for grade in chinese.grades}
    assert messages["01.2"].startswith("练习 01.2 — ") and "期望" in messages["01.2"]
    assert "尚未作答" in messages["01.3"]
    assert english.grades[1].message.startswith("Exercise 01.2 — ")


# A question a check compares, in the lesson's language


def by_hand(question: str) -> dict:
    """Exercise 11.2's answer, right but for the question it sends."""
    use = {"type": "tool_use", "id": "toolu_1_0", "name": "calculator_multiply", "input": {"a": 6, "b": 7}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "42.0"}
    messages = [{"role": "user", "content": question}, {"role": "assistant", "content": [use]}]
    reply = {"stop_reason": "end_turn", "content": [{"type": "text", "text": "6 × 7 = 42."}]}
    return {"by_hand_messages": [*messages, {"role": "user", "content": [result]}], "by_hand": reply}


@pytest.mark.wrong_answer("11.2")
@pytest.mark.parametrize("asked", ["What is 6 times 7?", "6 乘以 7 是多少？", "6 乘以 7 等于几"])
def test_a_chinese_lesson_expects_its_own_question_word_for_word(chinese, capsys, asked):
    """Exercise 11.2 in Chinese asks 6 乘以 7 等于几？: the English question, or a near one, fails and says which."""
    lines = failure("11.2", by_hand(asked)).lines
    assert lines[0] == "练习 11.2 — by_hand_messages[0]" and "6 乘以 7 等于几？" in lines[1], lines
    check("11.2", by_hand("6 乘以 7 等于几？"))
    assert "✔ 练习 11.2 通过" in capsys.readouterr().out
