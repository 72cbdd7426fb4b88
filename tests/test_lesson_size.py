"""benchmarks/lesson_size.py: its rules on a made-up lesson, and every solved lesson held to its size budget."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "lesson_size.py"
SOLVED = sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))
TOUR = ROOT / "notebooks" / "solutions" / "tour.ipynb"
CHINESE = [ROOT / "notebooks" / "zh" / "solutions" / path.name for path in [TOUR, *SOLVED]]


@pytest.fixture(scope="module")
def sizes():
    """The benchmark script, imported as a module."""
    spec = importlib.util.spec_from_file_location("lesson_size", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def _lesson(tmp_path: Path, cells: list) -> Path:
    path = tmp_path / "99_made_up.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_rules_on_a_made_up_lesson(sizes, tmp_path: Path) -> None:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    wide = code("print('x' * 130)")
    wide.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 130 + "\n")]
    folded = code("show(capture)")  # an HTML view counts by its plain-text twin
    folded.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": "<p>a</p>" * 50, "text/plain": "one\ntwo\nthree"})
    ]
    path = _lesson(
        tmp_path,
        [
            md("# 99\n\n**Time:** core about 5 minutes, exercises about 10 minutes\n\n" + "word " * 290),
            code("a = 1\n\nb = 2"),
            wide,
            folded,
            md("Cited (2025-11-25, basic/lifecycle).\n\n```python\nx = 1\n```\n\n**Sources**\n- ¹ " + "s " * 40),
            md("## Going deeper (optional)\n\n" + "deep " * 5000),
            code("not_counted = 1"),
            md("## Exercises\n\n### Exercise 99.1 — Build it\n\n*About 10 minutes.*\n\n```python\nnot words\n```"),
            code("setup = 1\n### BEGIN SOLUTION\n" + "answer = 1\n" * 10 + "### END SOLUTION\nprint(answer)"),
        ],
    )
    size = sizes.measure(path)
    assert size.core_code_cells == 3  # the optional part's and the exercise's cells are not core
    assert size.core.words == 2 + 9 + 290 + 3  # the Sources list and the fenced code are not prose
    assert size.core.code_lines == 2 + 1 + 1 + 1  # the fenced line counts as code
    assert size.core.output_lines == 1 + 3
    assert size.source_words == 1 + 2 + 40 and size.inline_citations == 1
    assert size.core_minutes == 5  # 304 / 120 + 5 / 10 + 4 / 30 = 3.17 → 5
    exercise = size.exercises["99.1"]
    assert (exercise.reading.words, exercise.reading.code_lines, exercise.solution_lines) == (11, 1 + 4, 10)
    assert exercise.minutes == 8  # 11 / 120 + 5 / 10 + 10 lines written / 2 + 2 for the check = 7.6 → 8
    assert size.widest == (130, 1)
    assert size.over_budget() == [
        "cell 1 output 130 characters > 120",
        "exercise 99.1 states 10 min, computed 8",
        "states (5, 10), computed (5, 8)",
    ]


def test_a_lesson_that_states_the_wrong_time_is_over(sizes, tmp_path: Path) -> None:
    md = nbformat.v4.new_markdown_cell
    path = _lesson(tmp_path, [md("# 99\n\n**Time:** core about 45 minutes, exercises about 0 minutes")])
    assert sizes.measure(path).over_budget() == ["states (45, 0), computed (5, 0)"]


def test_a_tall_folded_view_and_long_prose_are_over(sizes, tmp_path: Path) -> None:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    tall = code("show(capture, expand=True)")
    tall.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": "<pre>x</pre>", "text/plain": "x\n" * 26})
    ]
    html_only = code("HTML(...)")
    html_only.outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<tr><td>1</td></tr>" * 3})]
    figure = code("plot()")  # an image is read as IMAGE_LINES, whatever its text/plain says
    figure.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure size 900x450>"})
    ]
    path = _lesson(tmp_path, [md("# 99\n\n" + "word " * 1_900), tall, html_only, figure])
    size = sizes.measure(path)
    assert size.core.output_lines == 26 + 3 + sizes.IMAGE_LINES
    assert "cell 0 output 26 lines > 25" in size.over_budget()
    assert "core prose 1,902 words > 1,800" in size.over_budget()


@pytest.mark.parametrize("notebook", [TOUR, *SOLVED], ids=[path.stem for path in [TOUR, *SOLVED]])
def test_every_lesson_is_a_sitting(sizes, notebook: Path) -> None:
    assert sizes.measure(notebook).over_budget() == []


@pytest.mark.parametrize("notebook", CHINESE, ids=[path.stem for path in CHINESE])
def test_every_chinese_lesson_states_the_times_computed_from_its_chinese_text(sizes, notebook: Path) -> None:
    size = sizes.measure(notebook)
    assert size.stated is not None and size.core.characters > 1000, "states its time and is read as Chinese"
    assert size.over_budget() == []


def test_chinese_prose_is_read_by_the_character(sizes, tmp_path: Path) -> None:
    """134 Chinese characters a minute, the Latin words among them at 120; the Chinese markers cut the parts."""
    md = nbformat.v4.new_markdown_cell
    folder = tmp_path / "zh" / "solutions"
    folder.mkdir(parents=True)
    cells = [
        md("# 99 — 测试\n\n**时长**：正文约 5 分钟，练习约 3 分钟\n\n" + "读" * 530 + " `tools/call` 和 `id`。"),
        md("## 深入一步（选读）\n\n" + "深" * 5000),
        md("## 练习\n\n### 练习 99.1 — 一个\n\n约 3 分钟。\n\n" + "写" * 100 + "\n\n**出处**\n- " + "源" * 900),
    ]
    path = _lesson(folder, cells)
    size = sizes.measure(path)
    # Latin words: "#", "99", "—", the bold's two "**", 5, 3 and the two code spans.
    assert (size.core.characters, size.core.words) == (2 + 12 + 530 + 1, 9)
    assert (size.core_minutes, size.exercises_minutes, size.over_budget()) == (5, 3, [])


def test_the_instructors_outline_states_each_lessons_times(sizes) -> None:
    """docs/INSTRUCTORS.md's outline gives every lesson the core and exercise minutes the lesson itself states."""
    outline = (ROOT / "docs" / "INSTRUCTORS.md").read_text(encoding="utf-8")
    rows = {}
    for line in outline.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 5 and cells[0].isdigit():
            rows[cells[0]] = tuple(int(cell) for cell in cells[2:])
    for notebook in SOLVED:
        stated = sizes.measure(notebook).stated
        if stated is None:
            continue
        core, exercises = stated
        assert rows[notebook.stem[:2]] == (core, exercises, core + exercises), notebook.stem


def test_a_heading_inside_a_cell_starts_a_new_part(sizes, tmp_path: Path) -> None:
    """Core words before a Going-deeper heading in the same cell are core; the words after it are not."""
    md = nbformat.v4.new_markdown_cell
    path = _lesson(tmp_path, [md("# 99\n\n" + "core " * 100 + "\n\n## Going deeper (optional)\n\n" + "deep " * 900)])
    assert sizes.measure(path).core.words == 2 + 100
