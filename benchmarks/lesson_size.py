"""Lesson size: how long a lesson's core takes to work through, by a stated rule, and how big its outputs are.

Rules (the budget's definitions), applied to the solved lessons ``notebooks/solutions/NN_*.ipynb``:

- The **optional part** of a lesson starts at a markdown heading ``## Going deeper (optional)`` and runs to the next
  level-2 heading (``## Exercises``, say) or the end. Everything else is the **core**, the exercises included.
- The **exercises** are the ``## Exercises`` part, and each exercise set inside a section (lessons 13 and 14 set
  theirs in their steps): its ``### Exercise NN.K`` markdown cell and the code cells up to the next markdown cell.
- **Words**: whitespace-separated words of the core's markdown cells, fenced code blocks left out.
- **Core minutes** = words outside the exercises / 150 (technical prose read with care) + 1 minute per core code
  cell outside the exercises, rounded up to a multiple of 5. The first cell, which installs the course on a hosted
  Jupyter (its ``%pip install``) and does nothing elsewhere, is not counted.
- **Exercise minutes**: each exercise states its own, as ``*About N minutes.*`` in its heading cell; their sum.
- A lesson **states** its estimate in its first cell as ``**Time:** core about C minutes, exercises about E
  minutes`` (the numbers this script computes); a test holds the statement to the script.
- **Outputs**: the tallest (lines) and widest (characters) text output of a core code cell: a stream, or the
  ``text/plain`` of a result or display that has no HTML twin (an HTML twin is what a reader sees: folded JSON,
  the explorer).

Budget: core <= 2,400 words and <= 45 minutes; no core output taller than 40 lines or wider than 120 characters.
Exit code 1 with ``--check`` when a budget is exceeded.

    python benchmarks/lesson_size.py [--check] [NOTEBOOK ...]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "notebooks" / "solutions"
WORDS_A_MINUTE = 150
MINUTES_A_CODE_CELL = 1
WORD_BUDGET = 2_400
MINUTE_BUDGET = 45
TALLEST = 40
WIDEST = 120
OPTIONAL = re.compile(r"^## Going deeper \(optional\)", re.MULTILINE)
LEVEL_2 = re.compile(r"^## ", re.MULTILINE)
EXERCISES = re.compile(r"^## Exercises", re.MULTILINE)
EXERCISE_HEADING = re.compile(r"^### Exercise (\d{2}\.\d+)", re.MULTILINE)
EXERCISE_MINUTES = re.compile(r"\*About (\d+) minutes\.\*")
STATED = re.compile(r"\*\*Time:\*\* core about (\d+) minutes, exercises about (\d+) minutes")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INSTALL = re.compile(r"^\s*%pip install", re.MULTILINE)


@dataclass
class LessonSize:
    name: str
    core_words: int = 0
    exercise_words: int = 0
    core_code_cells: int = 0
    core_code_lines: int = 0
    exercise_minutes: dict[str, int | None] = field(default_factory=dict)
    tallest: tuple[int, int] = (0, -1)  # (lines, nbval cell number)
    widest: tuple[int, int] = (0, -1)  # (characters, nbval cell number)
    stated: tuple[int, int] | None = None

    @property
    def words(self) -> int:
        return self.core_words + self.exercise_words

    @property
    def core_minutes(self) -> int:
        minutes = self.core_words / WORDS_A_MINUTE + MINUTES_A_CODE_CELL * self.core_code_cells
        return 5 * math.ceil(minutes / 5)

    @property
    def exercises_minutes(self) -> int:
        return sum(minutes or 0 for minutes in self.exercise_minutes.values())

    def over_budget(self) -> list[str]:
        over = []
        if self.words > WORD_BUDGET:
            over.append(f"{self.words:,} words > {WORD_BUDGET:,}")
        if self.core_minutes > MINUTE_BUDGET:
            over.append(f"core {self.core_minutes} min > {MINUTE_BUDGET}")
        if self.tallest[0] > TALLEST:
            over.append(f"cell {self.tallest[1]} output {self.tallest[0]} lines > {TALLEST}")
        if self.widest[0] > WIDEST:
            over.append(f"cell {self.widest[1]} output {self.widest[0]} characters > {WIDEST}")
        missing = [number for number, minutes in self.exercise_minutes.items() if minutes is None]
        if missing:
            over.append("no '*About N minutes.*' in exercise " + ", ".join(missing))
        if self.stated != (self.core_minutes, self.exercises_minutes):
            over.append(f"states {self.stated}, computed {(self.core_minutes, self.exercises_minutes)}")
        return over


def _words(markdown: str) -> int:
    return len(FENCE.sub(" ", markdown).split())


def _texts(output: dict) -> list[str]:
    if output.get("output_type") == "stream":
        return [output.get("text", "") if isinstance(output.get("text"), str) else "".join(output["text"])]
    data = output.get("data", {})
    if "text/plain" in data and "text/html" not in data:
        text = data["text/plain"]
        return [text if isinstance(text, str) else "".join(text)]
    return []


def measure(path: Path) -> LessonSize:
    """The size of one lesson by the rules above."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    size = LessonSize(path.stem)
    optional = in_exercises = in_step_exercise = False
    current_exercise: str | None = None
    code_number = -1
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            if index == 0 and (stated := STATED.search(source)):
                size.stated = (int(stated.group(1)), int(stated.group(2)))
            for heading in LEVEL_2.finditer(source):
                line = source[heading.start() :].splitlines()[0]
                optional = bool(OPTIONAL.match(line))
                in_exercises = bool(EXERCISES.match(line))
            in_step_exercise = not in_exercises and bool(EXERCISE_HEADING.search(source))
            if optional:
                continue
            if in_exercises or in_step_exercise:
                size.exercise_words += _words(source)
                if number := EXERCISE_HEADING.search(source):
                    current_exercise = number.group(1)
                    minutes = EXERCISE_MINUTES.search(source)
                    size.exercise_minutes[current_exercise] = int(minutes.group(1)) if minutes else None
            else:
                size.core_words += _words(source)
            continue
        if cell["cell_type"] != "code":
            continue
        code_number += 1
        if optional:
            continue
        if not (in_exercises or in_step_exercise) and not INSTALL.search(source):
            size.core_code_cells += 1
            size.core_code_lines += len([line for line in source.splitlines() if line.strip()])
        for output in cell.get("outputs", []):
            for text in _texts(output):
                lines = text.rstrip("\n").splitlines()
                size.tallest = max(size.tallest, (len(lines), code_number))
                size.widest = max(size.widest, (max((len(line) for line in lines), default=0), code_number))
    return size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is exceeded")
    parser.add_argument("notebooks", nargs="*", type=Path, help="solved lessons (default: all)")
    arguments = parser.parse_args(argv)
    paths = arguments.notebooks or sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
    header = f"{'lesson':<24}{'words':>7}{'code cells':>11}{'code lines':>11}{'core min':>9}{'exercises':>10}"
    print(header + f"{'ex. min':>8}{'stated':>10}{'tallest':>9}{'widest':>8}")
    over_any = False
    for path in paths:
        size = measure(path)
        stated = "-" if size.stated is None else f"{size.stated[0]}/{size.stated[1]}"
        print(
            f"{size.name:<24}{size.words:>7,}{size.core_code_cells:>11}{size.core_code_lines:>11}{size.core_minutes:>9}"
            f"{len(size.exercise_minutes):>10}{size.exercises_minutes:>8}{stated:>10}{size.tallest[0]:>9}{size.widest[0]:>8}"
        )
        for problem in size.over_budget():
            over_any = True
            print(f"  over budget: {problem}")
    return 1 if arguments.check and over_any else 0


if __name__ == "__main__":
    sys.exit(main())
