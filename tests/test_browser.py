"""The lessons as a student meets them: JupyterLab in headless Chromium, each notebook run with Run → Run All Cells.

One JupyterLab server (loopback, generated token) serves a copy of notebooks/ without outputs, so everything on
screen comes from this run and the repository stays untouched. One Chromium (Playwright, Debian's binary) opens
each lesson in its own tab. Checked: no cell shows an error except cells tagged ``raises-exception``, captures
(``show``/``show_trace``) and sequence diagrams (``draw_sequence``) are rendered, and the explorer's Next button
changes the message shown, and elicitation forms (lesson 09) are rendered with their Accept / Decline / Cancel
buttons. Screenshots go to artifacts/browser/.

nbval runs every solved lesson on every test run; this test runs the lessons whose outputs only a browser can check
(:data:`BROWSER_LESSONS`: the first lesson, the explorer and diagrams of 01, the trace diagram of 04, the forms of 09,
and 12, the one with most cells), which between them use everything checked below (a test keeps that so).
``MCP_TEACH_BROWSER_LESSONS=all`` runs every lesson.

Without Chromium or Playwright the module is skipped, with how to install them, except in CI (``CI`` set),
where that is a failure.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser_support import (
    ARTIFACTS,
    INSTALL_HINT,
    NotebookFacts,
    click_next,
    copy_without_outputs,
    explorer_message,
    explorer_output,
    in_ci,
    lesson_notebooks,
    missing_requirements,
    open_notebook,
    running_chromium,
    running_jupyterlab,
)

BROWSER_LESSONS = ("tour", "00_setup", "01_handshake", "04_llm_tool_loop", "09_server_requests", "12_security")
ALL_LESSONS = lesson_notebooks()
#: One lesson of the Chinese edition: its text, and its checks answering in Chinese, in a real browser.
CHINESE = ALL_LESSONS[0].parent / "zh" / "00_setup.ipynb"
NOTEBOOKS = [
    *(
        ALL_LESSONS
        if os.environ.get("MCP_TEACH_BROWSER_LESSONS") == "all"
        else [path for path in ALL_LESSONS if path.stem in BROWSER_LESSONS]
    ),
    CHINESE,
]


@pytest.fixture(scope="module")
def lab_browser(tmp_path_factory: pytest.TempPathFactory):
    """(JupyterLab server, Playwright browser context, facts of each notebook copied) for the whole module."""
    if missing := missing_requirements():
        reason = f"the browser test needs {' and '.join(missing)}: {INSTALL_HINT}"
        if in_ci():
            pytest.fail(f"CI is set, so this is not skipped: {reason}")
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("lab-notebooks")
    facts = {name(path): copy_without_outputs(path, root / name(path)) for path in NOTEBOOKS}
    home = tmp_path_factory.mktemp("lab-home")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    with running_jupyterlab(root, home) as lab:
        try:
            with running_chromium(home / "chromium-profile") as context:
                yield lab, context, facts
        finally:
            lab.stop()
            (ARTIFACTS / "jupyterlab.log").write_text(lab.log_text(), encoding="utf-8")


def name(path: Path) -> str:
    """``00_setup.ipynb``, ``zh/00_setup.ipynb``: where the notebook is below ``notebooks/`` (and in JupyterLab)."""
    return path.relative_to(CHINESE.parents[1]).as_posix()


def _first_line(source: str) -> str:
    return next((line for line in source.splitlines() if line.strip()), "")[:100]


def test_lessons_exist_and_use_what_the_browser_checks():
    """The checks below are conditional on what the notebooks call; make sure none of them is silently vacuous."""
    assert sorted(p.stem for p in NOTEBOOKS if p != CHINESE and p.stem in BROWSER_LESSONS) == sorted(BROWSER_LESSONS)
    assert CHINESE.is_file(), "the Chinese lesson the browser opens"
    facts = [NotebookFacts.read(path) for path in NOTEBOOKS]
    for feature, what in [
        ("shows_captures", "calls show() or show_trace()"),
        ("draws_sequences", "calls draw_sequence()"),
        ("explores", "calls explore()"),
        ("shows_forms", "answers elicitation through a form"),
    ]:
        assert any(getattr(notebook, feature) for notebook in facts), f"no lesson run in the browser {what}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: name(path).removesuffix(".ipynb"))
def test_lesson_runs_in_jupyterlab(lab_browser, path: Path):
    lab, context, notebooks = lab_browser
    facts = notebooks[name(path)]
    run = open_notebook(context, lab, facts)
    try:
        try:
            run.run_all()
        finally:  # a screenshot also when the run did not finish: it shows where it stopped
            for shot in run.screenshot(name(path).removesuffix(".ipynb").replace("/", "-")):
                print(f"screenshot: {shot}")
        print(f"{facts.name}: opened in {run.open_seconds:.1f} s, Run All Cells took {run.seconds:.1f} s")
        cells = run.cells()
        assert len(cells) == len(facts.sources), "JupyterLab shows a different number of cells than the .ipynb has"

        unexpected = [
            f"cell {cell.index} ({_first_line(facts.sources[cell.index])!r}):\n" + "\n".join(cell.errors)[:1500]
            for cell in cells
            if cell.errors and cell.index not in facts.raises and cell.index not in facts.stored_stderr
        ]
        assert not unexpected, "cells show errors:\n\n" + "\n\n".join(unexpected)

        not_run = [index for index in facts.code_cells if not re.fullmatch(r"\[\d+\]:", cells[index].prompt)]
        assert not not_run, f"code cells did not run (prompts {[cells[i].prompt for i in not_run]}): {not_run}"

        # Tagged cells whose committed output is an error must show it too: they ran, and errors are detected.
        silent = sorted(index for index in facts.raises & facts.stored_stderr if not cells[index].errors)
        assert not silent, f"cells tagged raises-exception show no error in JupyterLab: {silent}"

        if facts.shows_captures:
            assert sum(cell.captures for cell in cells), "show()/show_trace() rendered no .mcp-teach-capture"
        if facts.draws_sequences:
            assert sum(cell.images for cell in cells), "draw_sequence() is called but no image appears in an output"
        if facts.explores:
            _check_explorer(run, path.stem)
        if path == CHINESE:  # its checks (not attempted yet in a blank lesson) answer in Chinese
            shown = "\n".join(run.page.locator(".jp-OutputArea-output").all_inner_texts())
            assert re.search("尚未|练习", shown), "the Chinese lesson's checks do not answer in Chinese"
        if facts.shows_forms:
            buttons = {label for cell in cells for label in cell.buttons}
            assert {"Accept", "Decline", "Cancel"} <= buttons, f"no elicitation form rendered (buttons: {buttons})"
    finally:
        run.page.close()
        lab.shutdown_kernels()


def _check_explorer(run, stem: str) -> None:
    """Clicking the explorer's Next button shows another message."""
    output = explorer_output(run)
    output.scroll_into_view_if_needed()
    before = explorer_message(output)
    assert before.strip(), "the explorer shows no message"
    _element_shot(output, ARTIFACTS / f"{stem}-explorer-before.png")
    after = click_next(run, output)
    _element_shot(output, ARTIFACTS / f"{stem}-explorer-after.png")
    assert after != before, f"Next did not change the message shown:\n{before[:500]}"


def _element_shot(locator, path: Path) -> None:
    locator.screenshot(path=str(path))
    print(f"screenshot: {path}")
