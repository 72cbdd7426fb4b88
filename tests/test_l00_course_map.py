"""Lesson 00's course map (section 6): the tour first, then every lesson, each linked, with the times it states.

The times are each notebook's own statement (``**Time:** core about C minutes, exercises about E minutes`` in its
first cell, held to ``benchmarks/lesson_size.py`` by tests/test_lesson_size.py). When a lesson's time changes,
this test names the row of the map to update, and running this file rewrites the map's times from the lessons'
statements, in both editions (then rebuild the blank twins: ``mcp-teach build-lessons
notebooks/solutions/00_setup.ipynb notebooks/zh/solutions/00_setup.ipynb``)::

    .venv/bin/python tests/test_l00_course_map.py
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (\d\d|—) \| \[(?P<title>[^\]]+)\]\((?P<link>[^)]+)\) \| .+ \| (?P<core>\S+) \| (?P<ex>\S+) \|$")


@dataclass(frozen=True)
class Edition:
    """One language's lessons, the heading of lesson 00's course map and how a lesson states its times."""

    notebooks: Path
    heading: str
    stated: re.Pattern[str]

    @property
    def setup(self) -> Path:
        return self.notebooks / "solutions" / "00_setup.ipynb"


ENGLISH = Edition(
    ROOT / "notebooks",
    "## 6. Map of the course",
    re.compile(r"\*\*Time:\*\* core about (\d+) minutes, exercises about (\d+) minutes"),
)
CHINESE = Edition(
    ROOT / "notebooks" / "zh", "## 6. 课程地图", re.compile(r"\*\*时长\*\*：正文约 (\d+) 分钟，练习约 (\d+) 分钟")
)
EDITIONS = pytest.mark.parametrize("edition", [ENGLISH, CHINESE], ids=["en", "zh"])


def _cells(path: Path) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]


def _map_rows(edition: Edition) -> list[re.Match]:
    section = next(text for text in _cells(edition.setup) if text.startswith(edition.heading))
    return [match for line in section.splitlines() if (match := ROW.match(line))]


def _stated(edition: Edition, path: Path) -> tuple[str, str]:
    stated = edition.stated.search(_cells(path)[0])
    assert stated, f"{path.name} states no time in its first cell"
    return stated.group(1), stated.group(2)


@EDITIONS
def test_the_map_lists_the_tour_first_then_every_lesson_in_order(edition):
    rows = _map_rows(edition)
    lessons = sorted(path.name for path in edition.notebooks.glob("[0-9][0-9]_*.ipynb"))
    assert [row["link"] for row in rows] == ["tour.ipynb", *lessons]
    assert all((edition.notebooks / row["link"]).is_file() for row in rows)
    tour_title = _cells(edition.notebooks / "tour.ipynb")[0].splitlines()[0].lstrip("# ").strip()
    assert rows[0]["title"] == tour_title


@EDITIONS
def test_the_map_gives_each_lesson_the_times_it_states(edition):
    rows = _map_rows(edition)
    tour_core, _ = _stated(edition, edition.notebooks / "tour.ipynb")
    assert (rows[0]["core"], rows[0]["ex"]) == (tour_core, "—"), "the tour's row in lesson 00's course map"
    for row in rows[1:]:
        stated = _stated(edition, edition.notebooks / "solutions" / row["link"])
        assert (row["core"], row["ex"]) == stated, f"the row of {row['link']} in lesson 00's course map"


def test_each_map_links_to_the_other_language():
    english, chinese = (next(t for t in _cells(e.setup) if t.startswith(e.heading)) for e in (ENGLISH, CHINESE))
    assert "(https://github.com/mcp-teach/mcp-teach/tree/main/notebooks/zh)" in english
    assert "(https://github.com/mcp-teach/mcp-teach/tree/main/notebooks)" in chinese


def update_the_map(edition: Edition) -> None:
    """Rewrite the times in lesson 00's course map from each notebook's own statement."""
    notebook = json.loads(edition.setup.read_text(encoding="utf-8"))
    cell = next(cell for cell in notebook["cells"] if "".join(cell["source"]).startswith(edition.heading))
    lines = []
    for line in "".join(cell["source"]).split("\n"):
        if row := ROW.match(line):
            tour = row["link"] == "tour.ipynb"
            folder = edition.notebooks if tour else edition.notebooks / "solutions"
            core, exercises = _stated(edition, folder / row["link"])
            line = line[: row.start("core")] + f"{core} | {'—' if tour else exercises} |"
        lines.append(line)
    cell["source"] = [line + "\n" for line in lines[:-1]] + lines[-1:]
    edition.setup.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    update_the_map(ENGLISH)
    update_the_map(CHINESE)
