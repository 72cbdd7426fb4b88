"""Lesson size: how long a lesson takes a reader, computed from what they read, and how tall its outputs are.

Rules (the budget's definitions), applied to the tour ``notebooks/solutions/tour.ipynb`` and the solved lessons
``notebooks/solutions/NN_*.ipynb``:

- The **optional part** of a lesson starts at a markdown heading ``## Going deeper (optional)`` and runs to the next
  level-2 heading (``## Exercises``, say) or the end. It is not counted.
- The **exercises** are the ``## Exercises`` part, and each exercise set inside a section (lessons 13 and 14 set
  theirs in their steps): its ``### Exercise NN.K`` markdown cell and the cells up to the next markdown cell.
  Everything else outside the optional part is the **core**.
- A **Sources** list (a markdown paragraph starting with the line ``**Sources**``, to the end of its cell) is
  reference, looked up one click away, not read in the flow: its words are counted apart (``sources``).
- **Prose**: whitespace-separated words of markdown cells, fenced code blocks and Sources lists left out.
  **Code**: non-blank lines of code cells and of fenced code blocks in markdown. The first cell, which installs
  the course on a hosted Jupyter (its ``%pip install``) and does nothing elsewhere, is not counted.
- **Rendered output**: the lines a reader sees under a code cell: a stream's lines; a result's or display's
  ``text/plain`` (every display of the course has a plain-text twin with the lines its HTML shows: folded
  messages one line each); HTML with no text twin, its lines once tags are taken out; an image counts as
  ``IMAGE_LINES``.
- **Reading rates**: prose at 120 words a minute, code at 10 lines a minute, rendered output at 30 lines a minute
  (a careful first reading of technical text).
- **Core minutes** = core prose / 120 + core code / 10 + core output / 30, rounded up to a multiple of 5.
- **Exercise minutes**, each exercise: its reading by the same rates (its prose, its code except the solution,
  its output) plus its writing: 2 non-blank lines of the solution a minute (``### BEGIN SOLUTION`` to
  ``### END SOLUTION`` or the cell's end) and 2 minutes to run the check and read its answer; rounded up to a
  whole minute. A heading states its own as ``*About N minutes.*``; the lesson's exercise time is their sum.
- A lesson **states** both in its first cell as ``**Time:** core about C minutes, exercises about E minutes``;
  a stated time must equal the computed one (tests/test_lesson_size.py).
- **Inline citations**: a spec version followed within a few words by a spec page (``2025-11-25, basic/…``,
  ``2026-07-28 schema.ts``, ``changelog``) in core prose outside a Sources list. Counted, not budgeted:
  sources belong in the Sources list.

- **The Chinese edition** (``notebooks/zh/solutions/``) is measured by the same rules with its own markers:
  ``## 深入一步（选读）``, ``## 练习``, ``### 练习 NN.K``, ``约 N 分钟。`` (a line of its own), ``**出处**``,
  and the statement ``**时长**：正文约 C 分钟，练习约 E 分钟``. Its prose is read at 134 Chinese characters a
  minute, the Latin words in it (names, code) at 120: the English rate scaled by the ratio of the two languages'
  mean reading speeds in the IReST study (255 characters a minute in Chinese, 228 words in English;
  Trauzettel-Klosinski and Dietz, Investigative Ophthalmology & Visual Science 53(9), 2012). Its stated times must
  equal the computed ones; the budgets below are the English lesson's.

Budget: core prose <= 1,800 words, exercises' prose <= 600 words, core <= 45 minutes; no core output taller than
25 rendered lines or wider than 120 characters. Exit code 1 with ``--check`` when a budget is exceeded.

    python benchmarks/lesson_size.py [--check] [NOTEBOOK ...]
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "notebooks" / "solutions"
WORDS_A_MINUTE = 120
CODE_LINES_A_MINUTE = 10
OUTPUT_LINES_A_MINUTE = 30
WRITING_LINES_A_MINUTE = 2
CHECK_MINUTES = 2
IMAGE_LINES = 15
CORE_WORD_BUDGET = 1_800
EXERCISE_WORD_BUDGET = 600
MINUTE_BUDGET = 45
TALLEST = 25
WIDEST = 120
CHARACTERS_A_MINUTE = 134
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
CHINESE_PUNCTUATION = re.compile(r"[\u3000-\u303f\uff00-\uffef]")
LEVEL_2 = re.compile(r"^## ", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Markers:
    """How a lesson in one language marks its parts and states its times."""

    optional: re.Pattern[str]
    exercises: re.Pattern[str]
    exercise_heading: re.Pattern[str]
    exercise_minutes: re.Pattern[str]
    stated: re.Pattern[str]
    sources: re.Pattern[str]


ENGLISH = Markers(
    re.compile(r"^## Going deeper \(optional\)", re.MULTILINE),
    re.compile(r"^## Exercises", re.MULTILINE),
    re.compile(r"^### Exercise (\d{2}\.\d+)", re.MULTILINE),
    re.compile(r"\*About (\d+) minutes\.\*"),
    re.compile(r"\*\*Time:\*\* core about (\d+) minutes, exercises about (\d+) minutes"),
    re.compile(r"^\*\*Sources\*\*.*", re.MULTILINE | re.DOTALL),
)
CHINESE = Markers(
    re.compile(r"^## 深入一步（选读）", re.MULTILINE),
    re.compile(r"^## 练习", re.MULTILINE),
    re.compile(r"^### 练习 (\d{2}\.\d+)", re.MULTILINE),
    re.compile(r"^约 (\d+) 分钟。$", re.MULTILINE),  # a line of its own: Chinese is not set in italics
    re.compile(r"\*\*时长\*\*：正文约 (\d+) 分钟，练习约 (\d+) 分钟"),
    re.compile(r"^\*\*出处\*\*.*", re.MULTILINE | re.DOTALL),
)
INSTALL = re.compile(r"^\s*%pip install", re.MULTILINE)
SOLUTION = re.compile(r"^\s*### BEGIN SOLUTION\s*$(.*?)(?:^\s*### END SOLUTION\s*$|\Z)", re.MULTILINE | re.DOTALL)
CITATION = re.compile(
    r"\b(?:2024-11-05|2025-03-26|2025-06-18|2025-11-25|2026-07-28)\b[^\w\n]{1,4}(?:\w+[^\w\n]{1,3}){0,2}?"
    r"(?:(?:basic|server|client|docs|architecture)/|schema\.ts|changelog|deprecated\b|architecture\b)"
)
BLOCK_TAGS = re.compile(r"<(?:br|p|div|tr|li|summary|h\d|pre)\b[^>]*>", re.IGNORECASE)
TAG = re.compile(r"<[^>]+>")


@dataclass
class Reading:
    """What a reader reads in one part of a lesson."""

    words: int = 0
    code_lines: int = 0
    output_lines: int = 0
    characters: int = 0  # Chinese characters of the prose (its words are then the Latin ones)

    @property
    def minutes(self) -> float:
        return (
            self.words / WORDS_A_MINUTE
            + self.characters / CHARACTERS_A_MINUTE
            + self.code_lines / CODE_LINES_A_MINUTE
            + self.output_lines / OUTPUT_LINES_A_MINUTE
        )


@dataclass
class Exercise:
    """One exercise: what a student reads, how many lines they write, the minutes its heading states."""

    stated: int | None = None
    reading: Reading = field(default_factory=Reading)
    solution_lines: int = 0

    @property
    def minutes(self) -> int:
        writing = self.solution_lines / WRITING_LINES_A_MINUTE + CHECK_MINUTES
        return math.ceil(self.reading.minutes + writing - 1e-9)


@dataclass
class LessonSize:
    name: str
    core: Reading = field(default_factory=Reading)
    core_code_cells: int = 0
    source_words: int = 0
    inline_citations: int = 0
    exercises: dict[str, Exercise] = field(default_factory=dict)
    tallest: tuple[int, int] = (0, -1)  # (lines, nbval cell number)
    widest: tuple[int, int] = (0, -1)  # (characters, nbval cell number)
    stated: tuple[int, int] | None = None
    markers: Markers = ENGLISH

    @property
    def exercise_words(self) -> int:
        return sum(exercise.reading.words for exercise in self.exercises.values())

    @property
    def core_minutes(self) -> int:
        return 5 * math.ceil(self.core.minutes / 5 - 1e-9)

    @property
    def exercises_minutes(self) -> int:
        return sum(exercise.minutes for exercise in self.exercises.values())

    def over_budget(self) -> list[str]:
        over = []
        if self.markers is CHINESE:  # held to its statements; the budgets are the English lesson's
            return self._stated_wrong()
        if self.core.words > CORE_WORD_BUDGET:
            over.append(f"core prose {self.core.words:,} words > {CORE_WORD_BUDGET:,}")
        if self.exercise_words > EXERCISE_WORD_BUDGET:
            over.append(f"exercises' prose {self.exercise_words:,} words > {EXERCISE_WORD_BUDGET:,}")
        if self.core_minutes > MINUTE_BUDGET:
            over.append(f"core {self.core_minutes} min > {MINUTE_BUDGET}")
        if self.tallest[0] > TALLEST:
            over.append(f"cell {self.tallest[1]} output {self.tallest[0]} lines > {TALLEST}")
        if self.widest[0] > WIDEST:
            over.append(f"cell {self.widest[1]} output {self.widest[0]} characters > {WIDEST}")
        return over + self._stated_wrong()

    def _stated_wrong(self) -> list[str]:
        over = []
        for number, exercise in self.exercises.items():
            if exercise.stated is None:
                over.append(f"no '*About N minutes.*' in exercise {number}")
            elif exercise.stated != exercise.minutes:
                over.append(f"exercise {number} states {exercise.stated} min, computed {exercise.minutes}")
        if self.stated != (self.core_minutes, self.exercises_minutes):
            over.append(f"states {self.stated}, computed {(self.core_minutes, self.exercises_minutes)}")
        return over


def _code_lines(text: str) -> int:
    return len([line for line in text.splitlines() if line.strip()])


def read_markdown(markdown: str, markers: Markers = ENGLISH) -> tuple[Reading, int, int]:
    """``(reading, sources words, inline citations)`` of one markdown cell."""
    sources = markers.sources.search(markdown)
    flow = markdown[: sources.start()] if sources else markdown
    fenced = FENCE.findall(flow)
    prose = FENCE.sub(" ", flow)
    latin = CHINESE_PUNCTUATION.sub(" ", HAN.sub(" ", prose))
    reading = Reading(len(latin.split()), sum(_code_lines(block) - 2 for block in fenced), 0, len(HAN.findall(prose)))
    return reading, len(sources.group(0).split()) if sources else 0, len(CITATION.findall(prose))


def _joined(text: str | list[str]) -> str:
    return text if isinstance(text, str) else "".join(text)


def rendered_lines(output: dict) -> list[str] | None:
    """The lines a reader sees for one output; None for an image (counted as ``IMAGE_LINES``, no width)."""
    kind = output.get("output_type")
    if kind == "stream":
        return _joined(output.get("text", "")).rstrip("\n").splitlines()
    if kind == "error":
        return list(output.get("traceback", []))
    data = output.get("data", {})
    if any(kind.startswith("image/") for kind in data):  # its text/plain is only "<Figure size …>"
        return None
    if "text/plain" in data:
        return _joined(data["text/plain"]).rstrip("\n").splitlines()
    if "text/html" in data:
        text = TAG.sub("", BLOCK_TAGS.sub("\n", _joined(data["text/html"])))
        return [line for line in html.unescape(text).splitlines() if line.strip()]
    return []


def _output_lines(cell: dict) -> tuple[int, int, int]:
    """``(lines to read, tallest output, widest line)`` of a code cell's outputs."""
    total = tallest = widest = 0
    for output in cell.get("outputs", []):
        lines = rendered_lines(output)
        if lines is None:
            total += IMAGE_LINES
            continue
        total += len(lines)
        tallest = max(tallest, len(lines))
        if "text/html" not in output.get("data", {}):  # HTML wraps its lines to the page
            widest = max([widest, *(len(line) for line in lines)])
    return total, tallest, widest


def _add(total: Reading, part: Reading) -> None:
    total.words += part.words
    total.code_lines += part.code_lines
    total.output_lines += part.output_lines
    total.characters += part.characters


def measure(path: Path) -> LessonSize:
    """The size of one lesson by the rules above."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    size = LessonSize(path.stem, markers=CHINESE if "zh" in path.parts else ENGLISH)
    markers = size.markers
    optional = in_exercises = in_step_exercise = False
    current: Exercise | None = None
    code_number = -1
    for index, cell in enumerate(cells):
        source = _joined(cell["source"])
        if cell["cell_type"] == "markdown":
            if index == 0 and (stated := markers.stated.search(source)):
                size.stated = (int(stated.group(1)), int(stated.group(2)))
            for part in _parts(source):  # a level-2 heading inside a cell starts a new part of the lesson
                if LEVEL_2.match(part):
                    optional = bool(markers.optional.match(part))
                    in_exercises = bool(markers.exercises.match(part))
                in_step_exercise = not in_exercises and bool(markers.exercise_heading.search(part))
                if not optional:
                    current = _read_part(size, part, current, in_exercises or in_step_exercise)
            continue
        if cell["cell_type"] != "code":
            continue
        code_number += 1
        if optional or INSTALL.search(source):
            continue
        output_lines, tallest, widest = _output_lines(cell)
        if (in_exercises or in_step_exercise) and current is not None:
            solution = "".join(SOLUTION.findall(source))
            current.solution_lines += _code_lines(solution)
            _add(current.reading, Reading(0, _code_lines(source) - _code_lines(solution), output_lines))
            continue
        size.core_code_cells += 1
        _add(size.core, Reading(0, _code_lines(source), output_lines))
        size.tallest = max(size.tallest, (tallest, code_number))
        size.widest = max(size.widest, (widest, code_number))
    _merge_introduction(size)
    return size


def _parts(markdown: str) -> list[str]:
    """A markdown cell cut before each of its level-2 headings."""
    starts = [0, *(heading.start() for heading in LEVEL_2.finditer(markdown)), len(markdown)]
    return [markdown[start:end] for start, end in itertools.pairwise(starts) if markdown[start:end].strip()]


def _read_part(size: LessonSize, part: str, current: Exercise | None, in_exercise: bool) -> Exercise | None:
    """Count one part of a markdown cell into the core or the current exercise; returns the current exercise."""
    reading, source_words, citations = read_markdown(part, size.markers)
    size.source_words += source_words
    if number := size.markers.exercise_heading.search(part):
        minutes = size.markers.exercise_minutes.search(part)
        current = size.exercises.setdefault(number.group(1), Exercise())
        current.stated = int(minutes.group(1)) if minutes else None
    if not in_exercise:
        _add(size.core, reading)
        size.inline_citations += citations
        return current
    if current is None:  # the Exercises part's introduction: read before the first exercise
        current = size.exercises.setdefault("", Exercise(stated=0))
    _add(current.reading, reading)
    return current


def _merge_introduction(size: LessonSize) -> None:
    """The Exercises part's introduction is read with its first exercise."""
    introduction = size.exercises.pop("", None)
    if introduction and size.exercises:
        _add(next(iter(size.exercises.values())).reading, introduction.reading)


def _row(values: tuple[object, ...], widths: tuple[int, ...]) -> str:
    cells = [f"{values[0]!s:<{widths[0]}}"]
    cells += [f"{value!s:>{width}}" for value, width in zip(values[1:], widths[1:], strict=True)]
    return "".join(cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is exceeded")
    parser.add_argument("notebooks", nargs="*", type=Path, help="solved lessons (default: all)")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="the edition measured by default")
    arguments = parser.parse_args(argv)
    folder = SOLUTIONS if arguments.lang == "en" else SOLUTIONS.parent / "zh" / "solutions"
    paths = arguments.notebooks or [folder / "tour.ipynb", *sorted(folder.glob("[0-9][0-9]_*.ipynb"))]
    columns = ("lesson", "prose", "code", "output", "cites", "sources", "core min", "ex.words", "ex. min", "stated")
    widths = (24, 7, 6, 8, 7, 9, 10, 10, 9, 9)
    print(_row(columns, widths))
    over_any = False
    for path in paths:
        size = measure(path)
        stated = "-" if size.stated is None else f"{size.stated[0]}/{size.stated[1]}"
        values = (
            size.name,
            f"{size.core.words:,}" if size.markers is ENGLISH else f"{size.core.characters:,}字",
            size.core.code_lines,
            size.core.output_lines,
            size.inline_citations,
            size.source_words,
            size.core_minutes,
            size.exercise_words,
            size.exercises_minutes,
            stated,
        )
        print(_row(values, widths))
        print(f"{'':<24}tallest output {size.tallest[0]} lines (cell {size.tallest[1]}), widest {size.widest[0]}")
        exercises = ", ".join(f"{number}: {exercise.minutes}" for number, exercise in size.exercises.items())
        if exercises:
            print(f"{'':<24}exercise minutes {exercises}")
        for problem in size.over_budget():
            over_any = True
            print(f"  over budget: {problem}")
    return 1 if arguments.check and over_any else 0


if __name__ == "__main__":
    sys.exit(main())
