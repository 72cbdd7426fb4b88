"""What tests/test_browser.py needs: a JupyterLab server on loopback, Chromium driven by Playwright, and the
UI actions and DOM reading a student's "Run All Cells" amounts to.

Playwright is imported lazily, so this module (and a skipped test module) imports without it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = REPO / "artifacts" / "browser"

#: Debian's package; MCP_TEACH_CHROMIUM names another Chromium (or Chrome) binary.
DEFAULT_CHROMIUM = "/usr/bin/chromium"
#: The flags that work on CI machines (root, no GPU, closed network): no sandbox, no background connections.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
INSTALL_HINT = (
    "install the test extra (.venv/bin/pip install -e '.[test]', which brings playwright) and Chromium "
    "(Debian/Ubuntu: sudo apt-get install chromium; or set MCP_TEACH_CHROMIUM to a Chromium or Chrome binary); "
    "Playwright's own browser download is not needed"
)

SERVER_START_TIMEOUT = 120  # s; JupyterLab usually answers within 3 s
PAGE_TIMEOUT = 120  # s; loading JupyterLab and starting a kernel
NOTEBOOK_TIMEOUT = 300  # s; a whole notebook usually runs in under 60 s
STOP_TIMEOUT = 60  # s; the server shuts its kernels down on SIGTERM
MAX_SHOT_HEIGHT = 8000  # px; longer notebooks are saved in several screenshots

#: Settings a fresh JupyterLab user would have, minus the network: no news or update checks (the toast would
#: also cover part of every screenshot).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # No empty screen below the last cell: screenshots end with the notebook.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"scrollPastEnd": False},
}

ERROR_MIME = "application/vnd.jupyter.stderr"  # JupyterLab renders error outputs (tracebacks) and stderr with it


def chromium_path() -> str | None:
    """The Chromium binary to drive, or None if there is none."""
    candidates = [os.environ.get("MCP_TEACH_CHROMIUM"), DEFAULT_CHROMIUM]
    candidates += [shutil.which(name) for name in ("chromium", "chromium-browser")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and Path(candidate).is_file():
            return candidate
    return None


def missing_requirements() -> list[str]:
    """What the browser test cannot run without (empty if everything is there)."""
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the Python package playwright")
    if chromium_path() is None:
        missing.append(f"Chromium ({DEFAULT_CHROMIUM})")
    return missing


def in_ci() -> bool:
    """CI sets CI=true; there a missing browser is a failure, not a skip."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


# --- what a notebook should show, read from the committed .ipynb ----------------------------------------------------


@dataclass(frozen=True)
class NotebookFacts:
    """The parts of a lesson notebook the browser checks depend on."""

    path: Path
    sources: list[str]
    cell_types: list[str]
    raises: frozenset[int]  # cells tagged raises-exception: an error output is expected there
    stored_stderr: frozenset[int]  # cells whose committed outputs include stderr or an error

    @classmethod
    def read(cls, path: Path) -> NotebookFacts:
        return cls.from_json(path, json.loads(path.read_text(encoding="utf-8")))

    @classmethod
    def from_json(cls, path: Path, notebook: dict[str, Any]) -> NotebookFacts:
        cells = notebook["cells"]
        sources = ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"] for cell in cells]
        raises, stored_stderr = set(), set()
        for index, cell in enumerate(cells):
            if "raises-exception" in (cell.get("metadata", {}).get("tags") or []):
                raises.add(index)
            for output in cell.get("outputs", []):
                if output["output_type"] == "error" or (
                    output["output_type"] == "stream" and output.get("name") == "stderr"
                ):
                    stored_stderr.add(index)
        return cls(path, sources, [cell["cell_type"] for cell in cells], frozenset(raises), frozenset(stored_stderr))

    @property
    def name(self) -> str:
        """The notebook's path below ``notebooks/`` (``zh/00_setup.ipynb`` for a Chinese lesson)."""
        return self.path.relative_to(NOTEBOOKS).as_posix() if self.path.is_relative_to(NOTEBOOKS) else self.path.name

    def _code_calls(self, function: str) -> bool:
        call = re.compile(rf"(?<![\w.]){re.escape(function)}\(")
        return any(
            kind == "code" and call.search(source) for kind, source in zip(self.cell_types, self.sources, strict=True)
        )

    @property
    def shows_captures(self) -> bool:
        """Calls show() or show_trace(), which render `.mcp-teach-capture` HTML."""
        return self._code_calls("show") or self._code_calls("show_trace")

    @property
    def draws_sequences(self) -> bool:
        return self._code_calls("draw_sequence")

    @property
    def explores(self) -> bool:
        return self._code_calls("explore")

    @property
    def shows_forms(self) -> bool:
        """Answers elicitation through an ipywidgets form (lesson 09's ``FormUser``)."""
        return self._code_calls("FormUser") or self._code_calls("schema_form")

    @property
    def code_cells(self) -> list[int]:
        """Indexes of code cells with something to run (JupyterLab does not execute empty ones)."""
        return [
            index
            for index, (kind, source) in enumerate(zip(self.cell_types, self.sources, strict=True))
            if kind == "code" and source.strip()
        ]


def lesson_notebooks() -> list[Path]:
    """The tour and the lesson notebooks that exist now, in course order."""
    return [NOTEBOOKS / "tour.ipynb", *sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]


def copy_without_outputs(source: Path, target: Path) -> NotebookFacts:
    """Copy a notebook with outputs and execution counts removed, so everything on screen comes from the run.

    Returns the facts of exactly the version copied (notebooks may be edited while the tests run).
    """
    notebook = json.loads(source.read_text(encoding="utf-8"))
    facts = NotebookFacts.from_json(source, notebook)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return facts


# --- the JupyterLab server ------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _clean_env(home: Path) -> dict[str, str]:
    """The server's environment: no course settings (the lessons run offline), Jupyter and IPython state in ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "OPENAI_", "LLM_"))}
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),  # a user's own kernel specs must not replace the venv's python3
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        PYTHONUNBUFFERED="1",
    )
    return env


class JupyterLab:
    """``jupyter lab`` from this venv on 127.0.0.1, serving ``root_dir`` with a generated token."""

    def __init__(self, root_dir: Path, home: Path) -> None:
        self.root_dir = root_dir
        self.home = home
        self.token = secrets.token_hex(24)
        self.port = _free_port()
        self.log_path = home / "jupyterlab.log"
        settings_dir = home / "lab-settings"
        for relative, values in LAB_SETTINGS.items():
            path = settings_dir / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf-8")
        argv = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.allow_root=True",  # CI runs as root
            f"--ServerApp.root_dir={root_dir}",
            f"--IdentityProvider.token={self.token}",
            f"--LabApp.user_settings_dir={settings_dir}",
            f"--LabApp.workspaces_dir={home / 'lab-workspaces'}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        self._log = self.log_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=root_dir,
            env=_clean_env(home),
        )
        self._descendants: dict[int, psutil.Process] = {}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        """The server's log with the token blanked out."""
        return self.log_path.read_text(encoding="utf-8", errors="replace").replace(self.token, "<token>")

    def api(self, method: str, path: str) -> Any:
        request = urllib.request.Request(
            f"{self.base_url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def wait_until_ready(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"jupyter lab exited with {self.process.returncode}:\n{self.log_text()[-4000:]}")
            with contextlib.suppress(OSError, urllib.error.URLError):
                self.api("GET", "/api/status")
                return
            time.sleep(0.2)
        raise AssertionError(f"jupyter lab did not answer within {SERVER_START_TIMEOUT} s:\n{self.log_text()[-4000:]}")

    def _remember_descendants(self) -> None:
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in psutil.Process(self.process.pid).children(recursive=True):
                self._descendants.setdefault(child.pid, child)

    def shutdown_kernels(self) -> None:
        """Shut down every running kernel (through the REST API, as the Running panel does)."""
        self._remember_descendants()
        for kernel in self.api("GET", "/api/kernels"):
            with contextlib.suppress(urllib.error.HTTPError):  # already gone
                self.api("DELETE", f"/api/kernels/{kernel['id']}")

    def stop(self) -> None:
        """SIGTERM (the server then shuts its kernels down); anything the server started that outlives it is killed."""
        if self.process.poll() is None:
            self._remember_descendants()
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_TIMEOUT)
        self._log.close()
        survivors = [proc for proc in self._descendants.values() if proc.is_running()]
        for proc in survivors:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        psutil.wait_procs(survivors, timeout=STOP_TIMEOUT)


@contextlib.contextmanager
def running_jupyterlab(root_dir: Path, home: Path) -> Iterator[JupyterLab]:
    lab = JupyterLab(root_dir, home)
    try:
        lab.wait_until_ready()
        yield lab
    finally:
        lab.stop()


# --- the browser ----------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def running_chromium(user_data_dir: Path) -> Iterator[Any]:
    """A Playwright browser context in headless Chromium with a fresh profile in ``user_data_dir``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=chromium_path(),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1400, "height": 900},
        )
        try:
            context.set_default_timeout(PAGE_TIMEOUT * 1000)
            yield context
        finally:
            context.close()


# JavaScript run in the page. The notebook panel is the only one: each notebook gets its own tab and workspace.
_PANEL = "document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)')"

#: The kernel is connected and idle. The toolbar's indicator alone also says idle before any kernel exists.
_KERNEL_IDLE_JS = f"""() => {{
  const panel = {_PANEL};
  const indicator = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const name = panel && panel.querySelector('.jp-KernelName [aria-label]');
  const statusBar = [...document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-Item')].map(e => e.innerText);
  return !!indicator && indicator.dataset.status === 'idle'
    && !!name && !['', 'No Kernel'].includes(name.getAttribute('aria-label'))
    && statusBar.some(text => /\\|\\s*Idle\\s*$/.test(text));
}}"""

#: Run All Cells took effect: a cell is running, queued or done.
_RUN_STARTED_JS = f"""() => [...{_PANEL}.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
  .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""

#: Done: the kernel is idle, no cell is running or queued ([*]), and at least one cell ran.
_RUN_FINISHED_JS = f"""() => {{
  const panel = {_PANEL};
  const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent);
  return indicator.dataset.status === 'idle' && !prompts.some(p => p.includes('*'))
    && prompts.some(p => /\\[\\d+\\]/.test(p));
}}"""

_NEXT_FRAME_JS = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done())))"

#: One entry per cell, in notebook order (cell indexes match the .ipynb).
_CELLS_JS = f"""() => {{
  const panel = {_PANEL};
  return [...panel.querySelectorAll('.jp-Notebook .jp-Cell')].map((cell, index) => {{
    const prompt = cell.querySelector('.jp-InputArea-prompt');
    const errors = [...cell.querySelectorAll('.jp-OutputArea-output[data-mime-type="{ERROR_MIME}"]')];
    const images = [...cell.querySelectorAll('.jp-OutputArea-output img')];
    return {{
      index,
      prompt: prompt ? prompt.textContent.trim() : '',
      errors: errors.map(e => e.textContent.trim().slice(0, 2000)),
      captures: cell.querySelectorAll('.jp-OutputArea-output .mcp-teach-capture').length,
      images: images.filter(img => img.complete && img.naturalWidth > 0).length,
      buttons: [...cell.querySelectorAll('.jp-OutputArea-output button')].map(b => b.textContent.trim()),
    }};
  }});
}}"""


@dataclass
class CellView:
    """What one cell shows after the run."""

    index: int
    prompt: str  # [3]: ran, [*]: running or queued, [ ]: not run
    errors: list[str]  # text of outputs rendered as errors/stderr
    captures: int  # .mcp-teach-capture elements (show, show_trace)
    images: int  # loaded images (draw_sequence figures)
    buttons: list[str]  # labels of buttons in the outputs (ipywidgets, e.g. lesson 09's elicitation forms)


@dataclass
class NotebookRun:
    """A lesson notebook opened in its own JupyterLab tab and run through the menu."""

    facts: NotebookFacts
    page: Any
    open_seconds: float = 0.0  # loading JupyterLab and starting the kernel
    seconds: float = 0.0  # Run All Cells

    def cells(self) -> list[CellView]:
        return [CellView(**cell) for cell in self.page.evaluate(_CELLS_JS)]

    def click_menu(self, menu: str, item: str) -> None:
        """A real menu click: the menu bar entry, then the item."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(menu)}$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")).click()

    def run_all(self) -> None:
        """Run → Run All Cells, then wait until every cell has finished."""
        started = time.monotonic()
        self.click_menu("Run", "Run All Cells")
        self.page.wait_for_function(_RUN_STARTED_JS, timeout=30_000, polling=100)
        self.page.wait_for_function(_RUN_FINISHED_JS, timeout=NOTEBOOK_TIMEOUT * 1000, polling=250)
        self.seconds = time.monotonic() - started

    def screenshot(self, stem: str) -> list[Path]:
        """The whole notebook in ARTIFACTS: ``stem.png``, or ``stem-1of3.png``, ... if it is very long.

        The window is made as tall as the notebook (at most MAX_SHOT_HEIGHT) for the shots, then restored.
        """
        scroller = self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer").element_handle()
        size = self.page.viewport_size
        chrome = size["height"] - scroller.evaluate("node => node.clientHeight")  # menu, toolbars, status bar
        try:
            # Cells out of view have estimated heights until they are laid out: grow the window until it fits.
            for _ in range(3):
                total = scroller.evaluate("node => node.scrollHeight")
                height = min(chrome + total, MAX_SHOT_HEIGHT)
                if height == self.page.viewport_size["height"]:
                    break
                self.page.set_viewport_size({"width": size["width"], "height": height})
                self.page.wait_for_function(  # JupyterLab lays its panels out again after the resize event
                    "([node, wanted]) => Math.abs(node.clientHeight - wanted) <= 1", arg=[scroller, height - chrome]
                )
                self.page.evaluate(_NEXT_FRAME_JS)
            self.page.evaluate("() => document.fonts.ready.then(() => undefined)")
            visible, total = scroller.evaluate("node => [node.clientHeight, node.scrollHeight]")
            parts = max(1, math.ceil((total - 1) / visible))
            paths = []
            for part in range(parts):
                scroller.evaluate("(node, top) => node.scrollTo(0, top)", part * visible)
                self.page.evaluate(_NEXT_FRAME_JS)  # cells scrolled into view are laid out and painted
                path = ARTIFACTS / (f"{stem}.png" if parts == 1 else f"{stem}-{part + 1}of{parts}.png")
                self.page.screenshot(path=str(path))
                paths.append(path)
        finally:
            self.page.set_viewport_size(size)
        return paths


def open_notebook(context: Any, lab: JupyterLab, facts: NotebookFacts) -> NotebookRun:
    """Open ``facts.name`` in a new tab with a fresh workspace and wait for its kernel to be idle."""
    started = time.monotonic()
    page = context.new_page()
    page.goto(f"{lab.base_url}/lab/tree/{facts.name}?reset&token={lab.token}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    page.wait_for_function(_KERNEL_IDLE_JS, timeout=PAGE_TIMEOUT * 1000, polling=250)
    # Collapse the file browser (a click on its active tab): the notebook gets the whole width in screenshots.
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
    return NotebookRun(facts, page, open_seconds=time.monotonic() - started)


#: The explorer's header and body (its HTML widgets), as text.
_EXPLORER_TEXT_JS = """(output) => [...output.querySelectorAll('.widget-html')].map(e => e.textContent).join('\\n')"""


def explorer_output(run: NotebookRun) -> Any:
    """The output area showing the first explorer widget (found by its Next button)."""
    return run.page.locator(".jp-OutputArea-output").filter(has=_next_button(run.page)).first


def _next_button(scope: Any) -> Any:
    return scope.locator("button.jupyter-button", has_text=re.compile(r"^\s*Next\s*$"))


def explorer_message(output: Any) -> str:
    """The header and body the explorer shows for the selected message."""
    return output.evaluate(_EXPLORER_TEXT_JS)


def click_next(run: NotebookRun, output: Any) -> str:
    """Click the explorer's Next button; returns the message then shown (waits until it differs, at most 30 s)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    before = explorer_message(output)
    _next_button(output).click()
    changed = f"([output, before]) => ({_EXPLORER_TEXT_JS})(output) !== before"
    with contextlib.suppress(PlaywrightTimeoutError):  # the caller's assertion says what went wrong
        run.page.wait_for_function(changed, arg=[output.element_handle(), before], timeout=30_000, polling=100)
    return explorer_message(output)
