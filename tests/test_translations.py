"""The Chinese edition is in step with the English lessons (course.translations), and its words follow the glossary.

In step means: the same cells in the same order; markdown cells translated from the English text they record the
hash of; code cells the English ones but for comments, Chinese strings and the lesson's language. The tests on a
made-up drift show each rule fails when it should.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from mcp_teach.config import lesson_language, set_lesson_language
from mcp_teach.course.authoring import SOLUTIONS, course_notebooks
from mcp_teach.exercises.language import said

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "zh"))  # the repository's translation tool, docs/zh/translations.py
from translations import cell_hash, code_differences, export, findings, import_text, main, twin  # noqa: E402

ENGLISH = course_notebooks(REPO / SOLUTIONS)
GLOSSARY = json.loads((REPO / "docs" / "zh" / "glossary.json").read_text(encoding="utf-8"))
INLINE_CODE = re.compile(r"`[^`]+`")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _inline_code(markdown: str) -> set[str]:
    """The inline code of a markdown cell, each span on one line (an English span may break across two)."""
    return set(INLINE_CODE.findall(" ".join(FENCE.sub(" ", markdown).split())))


#: What a Chinese lesson writes for an English code span: the checks' Chinese line, the Chinese lessons' folder.
IN_CHINESE = (("✔ Exercise ", "✔ 练习 "), (" passed`", " 通过`"), ("notebooks/", "notebooks/zh/"))


def _in_chinese(span: str) -> str:
    """The span as a Chinese lesson writes it; a quoted question a check compares is the checks' Chinese one."""
    for english, chinese in IN_CHINESE:
        span = span.replace(english, chinese)
    if quoted := re.fullmatch(r'`"(.+)"`', span):
        before = lesson_language()
        set_lesson_language("zh")
        try:
            return f'`"{said(quoted[1])}"`'
        finally:
            set_lesson_language(before)
    return span


def _pairs(english: Path) -> list[tuple[nbformat.NotebookNode, nbformat.NotebookNode]]:
    ours = {cell.id: cell for cell in nbformat.read(twin(english, "zh"), as_version=4).cells}
    return [(cell, ours[cell.id]) for cell in nbformat.read(english, as_version=4).cells if cell.id in ours]


@pytest.mark.parametrize("english", ENGLISH, ids=lambda path: path.stem)
def test_every_lesson_has_a_chinese_twin_in_step(english):
    """Fails when an English cell changed after its translation: ``docs/zh/translations.py status`` lists them."""
    chinese = twin(english, "zh")
    assert chinese.is_file() and (chinese.parents[1] / english.name).is_file(), "blank twin: mcp-teach build-lessons"
    assert [str(finding) for finding in findings(english, "zh")] == []


@pytest.mark.parametrize("english", ENGLISH, ids=lambda path: path.stem)
def test_the_translation_keeps_code_names_and_links_and_avoids_what_the_glossary_rejects(english):
    avoided = [(term["source"], bad) for term in GLOSSARY["terms"] for bad in term.get("avoid", [])]
    problems = []
    for cell, ours in _pairs(english):
        if cell.cell_type != "markdown":
            continue
        shown = " ".join(ours.source.split())
        missing = {span for span in _inline_code(cell.source) if span not in shown and _in_chinese(span) not in shown}
        missing |= set(re.findall(r"\]\((https?://[^)\s]+)\)", cell.source)) - set(
            re.findall(r"https?://[^)\s]+", ours.source)
        )
        problems += [f"{cell.id}: {span} is missing" for span in sorted(missing)]
        problems += [f"{cell.id}: {bad!r} for {source!r}" for source, bad in avoided if bad in ours.source]
        if re.search(r"[A-Za-z]{3,} [a-z]{3,} [a-z]{3,}", cell.source) and not re.search(
            r"[\u4e00-\u9fff]", ours.source
        ):
            problems.append(f"{cell.id}: still in English")
    assert problems == []


def test_the_glossary_has_one_rendering_per_term_and_keeps_none_it_avoids():
    sources = [term["source"].lower() for term in GLOSSARY["terms"]]
    assert len(sources) == len(set(sources)), "a term has more than one rendering"
    for term in GLOSSARY["terms"]:
        assert term["target"] not in term.get("avoid", []), term


@pytest.mark.parametrize(
    ("english", "translated", "allowed"),
    [
        ('x = 1  # one\nprint("the sum is")', 'x = 1  # 一\nprint("和是")', True),
        ("setup_notebook()", 'setup_notebook(language="zh")', True),
        ('print(f"sum {a} of {b}")', 'print(f"{b} 和 {a} 的和")', True),
        ('print(f"sum {a}")', 'print(f"和 {b}")', False),  # another value in the sentence
        ('ask("add 2 and 3")', 'ask("add 2 and 4")', False),  # a changed string that is no translation
        ("x = 1", "x = 2", False),
        ('call_tool("add", {"a": 2})', 'call_tool("加", {"a": 2})', True),  # Chinese, so allowed: review catches data
        ('%pip install "mcp-teach"', '%pip install "mcp-teach[all]"', False),
        ("print('{name} said')", "print('{who} 说')", False),
        ("setup_notebook()", 'setup_notebook(language="en")\nimport os', False),
    ],
)
def test_a_code_cell_may_differ_only_in_comments_chinese_strings_and_its_language(english, translated, allowed):
    assert (code_differences(english, translated) == []) is allowed


@pytest.fixture
def lesson(tmp_path):
    """A copy of lesson 03 and its Chinese twin, laid out as in the repository."""
    english = tmp_path / "notebooks" / "solutions" / "03_tools_call.ipynb"
    english.parent.mkdir(parents=True)
    shutil.copy(REPO / SOLUTIONS / english.name, english)
    twin(english, "zh").parent.mkdir(parents=True)
    shutil.copy(twin(REPO / SOLUTIONS / english.name, "zh"), twin(english, "zh"))
    return english


def _edit(path: Path, index: int, change) -> nbformat.NotebookNode:
    notebook = nbformat.read(path, as_version=4)
    cell = notebook.cells[index]
    cell.source = change(cell.source)
    nbformat.write(notebook, path)
    return cell


def _first(path: Path, kind: str, where=lambda source: True) -> int:
    cells = nbformat.read(path, as_version=4).cells
    return next(i for i, cell in enumerate(cells) if cell.cell_type == kind and where(cell.source))


def test_a_changed_english_paragraph_puts_its_translation_behind_until_it_is_translated_again(lesson):
    assert findings(lesson, "zh") == []
    changed = _edit(lesson, 3, lambda source: source + "\n\nOne more sentence.")
    [finding] = findings(lesson, "zh")
    assert (finding.cell, "behind" in finding.problem) == (changed.id, True)
    text = export(lesson, "zh")
    assert text.count("%%% ") == 1 and "One more sentence." in text
    assert import_text(lesson, "zh", text.replace("One more sentence.", "再多一句。")) == []
    ours = {cell.id: cell for cell in nbformat.read(twin(lesson, "zh"), as_version=4).cells}[changed.id]
    assert ours.metadata["translation"]["source"] == cell_hash(changed.source) and "再多一句。" in ours.source


def test_a_changed_english_comment_puts_a_translated_code_cell_behind(lesson):
    chinese = {cell.id: cell for cell in nbformat.read(twin(lesson, "zh"), as_version=4).cells}
    english = nbformat.read(lesson, as_version=4).cells
    index = next(i for i, cell in enumerate(english) if chinese[cell.id].source != cell.source)
    _edit(lesson, index, lambda source: "# a new first comment\n" + source)
    assert [(f.cell, "behind" in f.problem) for f in findings(lesson, "zh")] == [(english[index].id, True)]


def test_a_changed_line_of_code_in_the_translation_is_found(lesson):
    index = _first(lesson, "code", lambda source: "call_tool" in source)
    _edit(twin(lesson, "zh"), index, lambda source: source.replace('"a": 2', '"a": 20', 1))
    problem, unrecorded = [f.problem for f in findings(lesson, "zh")]
    assert unrecorded == "differs from its English cell but records no translation"
    assert problem.startswith("the code at line ") and problem.endswith("only comments and strings may be translated")


def test_a_new_english_cell_is_listed_as_not_translated_and_exported(lesson):
    notebook = nbformat.read(lesson, as_version=4)
    notebook.cells.insert(4, nbformat.v4.new_markdown_cell("A new paragraph for the reader."))
    nbformat.write(notebook, lesson)
    assert [(f.cell, f.problem) for f in findings(lesson, "zh")] == [
        (notebook.cells[4].id, "new in the English lesson: not translated yet")
    ]
    text = export(lesson, "zh")
    assert "A new paragraph for the reader." in text
    assert import_text(lesson, "zh", text.replace("A new paragraph for the reader.", "给读者的新段落。")) == []


def test_the_chinese_readme_has_each_english_section_translated_from_its_current_text():
    """README.zh-CN.md: the English README's sections in order, each recording the hash of the text it reflects."""
    english = re.split(r"(?m)^(?=## )", (REPO / "README.md").read_text(encoding="utf-8"))
    chinese = re.split(r"(?m)^(?=## )", (REPO / "README.zh-CN.md").read_text(encoding="utf-8"))
    assert len(chinese) == len(english), "README.zh-CN.md has other sections than README.md"
    recorded = [re.search(r"<!-- source: ([0-9a-f]{16}) -->", part) for part in chinese]
    behind = [
        part.splitlines()[0]
        for part, found in zip(english, recorded, strict=True)
        if not found or found[1] != cell_hash(part)
    ]
    assert behind == [], "English sections changed since their translation"


def test_the_chinese_quick_start_is_the_same_two_commands_opening_the_chinese_lessons():
    def commands(readme: str) -> list[str]:
        quick_start = re.split(r"(?m)^(?=## )", (REPO / readme).read_text(encoding="utf-8"))[1]
        return [line for line in quick_start.splitlines() if line.startswith("python3 -m venv")]

    english = commands("README.md")
    assert len(english) == 2 and commands("README.zh-CN.md") == [f"{english[0]} --lang zh", english[1]]


def test_the_status_command_names_what_is_behind_and_fails_until_it_is_translated(lesson, capsys):
    assert main(["status", str(lesson)]) == 0
    assert capsys.readouterr().out == "the zh edition is in step with the English lessons\n"
    _edit(lesson, 0, lambda source: source + "\n\nA new closing sentence.")
    assert main(["status", str(lesson)]) == 1
    assert "behind: its English cell changed" in capsys.readouterr().out
