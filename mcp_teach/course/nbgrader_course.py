"""An nbgrader course folder made from the solved lessons, so an instructor on a hub starts from a working setup.

nbgrader reads an assignment's source from ``source/<assignment>/`` and its settings from ``nbgrader_config.py``
(nbgrader docs, "Managing assignment files"); the lessons already carry its cell metadata. The one setting the
course needs is the stub that replaces a solution: the course's does not raise, so Run All works on a released
lesson. Files already in the folder are kept (an instructor may have edited them), and said so.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from mcp_teach.config import LANGUAGES
from mcp_teach.exercises.convention import PLACEHOLDER


def nbgrader_config(course_id: str, exchange: Path | None) -> str:
    """The text of ``nbgrader_config.py``: the course's id, solution stub and (on a hub) the shared exchange."""
    lines = [
        "c = get_config()  # noqa: F821",
        f"c.CourseDirectory.course_id = {course_id!r}",
        f"c.ClearSolutions.code_stub = {{'python': {chr(10).join(PLACEHOLDER)!r}}}",
    ]
    if exchange is not None:
        lines.append(f"c.Exchange.root = {str(exchange)!r}")
    return "\n".join(lines) + "\n"


def write_course(
    folder: Path, lessons: list[Path], *, course_id: str = "mcp-teach", exchange: Path | None = None
) -> tuple[list[Path], list[Path]]:
    """Write the config and one assignment per lesson (named by the lesson's file); return (written, kept)."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file: name a folder for the nbgrader course")
    if not lessons:
        raise ValueError("no solved lessons to put in the course (expected NN_*.ipynb files)")
    written, kept = [], []
    # The config first (None: written from nbgrader_config), then each lesson as its own assignment.
    assignments = {folder / "source" / lesson.stem / lesson.name: lesson for lesson in lessons}
    sources = {folder / "nbgrader_config.py": None, **assignments}
    for target, lesson in sources.items():
        if target.exists():
            kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if lesson is None:
            target.write_text(nbgrader_config(course_id, exchange), encoding="utf-8")
        else:
            shutil.copyfile(lesson, target)
        written.append(target)
    return written, kept


def nbgrader_course_command(args: argparse.Namespace) -> int:
    """``mcp-teach nbgrader-course DIR``: print what was written and what was kept."""
    from mcp_teach.course.authoring import lesson_notebooks
    from mcp_teach.course.course_folder import SOLUTIONS, SOURCES, CourseFolderError, course_source, edition

    try:
        lessons = lesson_notebooks(args.lessons or course_source(edition(SOURCES, args.lang)) / SOLUTIONS)
        written, kept = write_course(args.folder, lessons, course_id=args.course_id, exchange=args.exchange)
    except (CourseFolderError, ValueError, OSError) as error:
        print(f"mcp-teach nbgrader-course: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    for path in kept:
        print(f"kept  {path} (already there; delete it to get the course's copy)")
    print(f"next: cd {args.folder} && nbgrader generate_assignment {lessons[0].stem}  (one assignment per lesson)")
    return 0


def add_nbgrader_course_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "nbgrader-course", help="make an nbgrader course folder from the solved lessons (config + source/)"
    )
    parser.add_argument("folder", type=Path, help="the course folder (made if missing; files in it are kept)")
    parser.add_argument("--course-id", default="mcp-teach", help="nbgrader's course id (default: mcp-teach)")
    parser.add_argument(
        "--exchange", type=Path, help="the shared exchange folder on a hub (nbgrader's default: /srv/nbgrader/exchange)"
    )
    parser.add_argument(
        "--lessons", type=Path, help="the solved lessons' folder (default: the ones this install carries)"
    )
    parser.add_argument("--lang", choices=LANGUAGES, default="en", help="the lessons' language (zh: Chinese)")
    parser.set_defaults(handler=nbgrader_course_command)
