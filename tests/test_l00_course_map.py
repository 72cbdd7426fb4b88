"""Lesson 00's course map (section 6): the tour first, then every lesson, each linked, with the times it states.

The times are each notebook's own statement (``**Time:** core about C minutes, exercises about E minutes`` in its
first cell, held to ``benchmarks/lesson_size.py`` by tests/test_lesson_size.py). When a lesson's time changes,
this test names the row of the map to update, and running this file rewrites the map's times from the lessons'
statements (then rebuild the blank twin: ``mcp-teach build-lessons notebooks/solutions/00_setup.ipynb``)::

    .venv/bin/python tests/test_l00_course_map.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SETUP = NOTEBOOKS / "solutions" / "00_setup.ipynb"
STATED = re.compile(r"\*\*Time:\*\* core about (\d+) minutes, exercises about (\d+) minutes")
ROW = re.compile(r"^\| (\d\d|—) \| \[(?P<title>[^\]]+)\]\((?P<link>[^)]+)\) \| .+ \| (?P<core>\S+) \| (?P<ex>\S+) \|$")


def _cells(path: Path) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]


def _map_rows() -> list[re.Match]:
    section = next(text for text in _cells(SETUP) if text.startswith("## 6. Map of the course"))
    return [match for line in section.splitlines() if (match := ROW.match(line))]


def _stated(path: Path) -> tuple[str, str]:
    stated = STATED.search(_cells(path)[0])
    assert stated, f"{path.name} states no time in its first cell"
    return stated.group(1), stated.group(2)


def test_the_map_lists_the_tour_first_then_every_lesson_in_order():
    rows = _map_rows()
    lessons = sorted(path.name for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    assert [row["link"] for row in rows] == ["tour.ipynb", *lessons]
    assert all((NOTEBOOKS / row["link"]).is_file() for row in rows)
    tour_title = _cells(NOTEBOOKS / "tour.ipynb")[0].splitlines()[0].lstrip("# ").strip()
    assert rows[0]["title"] == tour_title


def test_the_map_gives_each_lesson_the_times_it_states():
    rows = _map_rows()
    tour_core, _ = _stated(NOTEBOOKS / "tour.ipynb")
    assert (rows[0]["core"], rows[0]["ex"]) == (tour_core, "—"), "the tour's row in lesson 00's course map"
    for row in rows[1:]:
        stated = _stated(NOTEBOOKS / "solutions" / row["link"])
        assert (row["core"], row["ex"]) == stated, f"the row of {row['link']} in lesson 00's course map"


def update_the_map() -> None:
    """Rewrite the times in lesson 00's course map from each notebook's own statement."""
    notebook = json.loads(SETUP.read_text(encoding="utf-8"))
    cell = next(cell for cell in notebook["cells"] if "".join(cell["source"]).startswith("## 6. Map of the course"))
    lines = []
    for line in "".join(cell["source"]).split("\n"):
        if row := ROW.match(line):
            tour = row["link"] == "tour.ipynb"
            core, exercises = _stated(NOTEBOOKS / row["link"] if tour else NOTEBOOKS / "solutions" / row["link"])
            line = line[: row.start("core")] + f"{core} | {'—' if tour else exercises} |"
        lines.append(line)
    cell["source"] = [line + "\n" for line in lines[:-1]] + lines[-1:]
    SETUP.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    update_the_map()
