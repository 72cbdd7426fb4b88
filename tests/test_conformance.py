"""The conformance runner (:mod:`mcp_teach.course.conformance`) and the servers it checks.

The runner's table and its errors need no Node (or only its start-up); the rest run the pinned official suite
(npm ``@modelcontextprotocol/conformance``, Node 22+ from the ``capstone`` extra) against servers on streamable
HTTP in this process: the capstone server must pass every required scenario of both revisions, and each other
course server every required scenario that needs no fixture (:data:`~mcp_teach.course.conformance.FIXTURE_FREE`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from fastmcp import Client
from support import HANG_TIMEOUT

from mcp_teach import cli
from mcp_teach.course import conformance
from mcp_teach.course.conformance import (
    FIXTURE_FREE,
    NODE_WHEEL,
    WIDTH,
    Check,
    ConformanceError,
    ScenarioResult,
    SuiteReport,
    check_server,
    check_server_at,
    find_node,
    how_to_get_node,
    render_table,
    run_suite,
)
from mcp_teach.servers.capstone import STATIC_TEXT, build_capstone_server
from mcp_teach.transports.in_process import serve_http, stdio_transport

#: How many scenarios each revision requires of a server (``conformance list --requirements REV``).
REPO = Path(__file__).resolve().parent.parent
MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
REQUIRED = {"2025-11-25": 30, "2026-07-28": 37}
#: Long enough for a first run that downloads the suite; a cached run takes a few seconds.
RUN_TIMEOUT = 240


@pytest.fixture
def suite(run: Callable[..., Any]) -> Callable[..., Any]:
    """``suite(run_suite or check_server, *args, timeout=...)``: the suite gets ``timeout``, the test a bit more."""

    def call(function: Callable[..., Any], *args: Any, timeout: float = RUN_TIMEOUT) -> Any:
        return run(functools.partial(function, timeout=timeout), *args, timeout=timeout + 30)

    return call


@pytest.fixture
def own_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The runner's temporary folders, and node's (``TMPDIR``), go here, so a test can see that none is left."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def no_children_left() -> list[str]:
    """This process's descendants still alive (npx, node): there should be none once a run is over."""
    deadline = time.monotonic() + HANG_TIMEOUT  # returns as soon as they are gone
    while True:
        alive = [child for child in psutil.Process().children(recursive=True) if child.is_running()]
        alive = [child for child in alive if child.status() != psutil.STATUS_ZOMBIE]
        if not alive or time.monotonic() > deadline:
            return [" ".join(child.cmdline()[:3]) for child in alive]
        time.sleep(0.1)


# --- the table and the errors -----------------------------------------------------------------------------


def test_the_table_shows_each_scenario_and_each_failing_checks_message():
    long = "Expected HTTP 400 and JSON-RPC error -32020, got status 200 " * 4
    report = SuiteReport(
        "http://127.0.0.1:1234/mcp",
        "2026-07-28",
        [
            ScenarioResult("tools-list", (Check("tools-list", "SUCCESS"), Check("tools-name-format", "SUCCESS"))),
            ScenarioResult("server-stateless", (Check("a", "SUCCESS"), Check("sep-2575-header", "FAILURE", long))),
            ScenarioResult("caching", (Check("hints", "WARNING", "no ttlMs"), Check("b", "SUCCESS"))),
            ScenarioResult("tasks-lifecycle", (Check("t", "FAILURE", "tasks are an extension"),), scored=False),
        ],
        seconds=2.5,
    )
    table = render_table(report)
    lines = table.splitlines()
    assert max(map(len, lines)) <= WIDTH
    assert any(line.startswith("tools-list") and "PASS" in line and "2/2" in line for line in lines)
    assert any(line.startswith("server-stateless") and "FAIL" in line and "1/2" in line for line in lines)
    assert any(line.startswith("caching") and "WARN" in line for line in lines)
    assert "failure sep-2575-header: Expected HTTP 400" in table
    assert "got status 200" in lines[lines.index(next(x for x in lines if "sep-2575-header" in x)) + 1]
    assert "warning hints: no ttlMs" in table
    assert "(not scored)" in table and "tasks are an extension" not in table  # the suite's previews: a row only
    assert lines[-1] == "2/3 scored scenarios passed; failed: server-stateless (2.5 s)."
    assert report.failed == ["server-stateless"] and not report.passed and str(report) == table


def test_the_table_of_problems_only_leaves_out_what_passed_and_the_previews():
    report = SuiteReport(
        "http://127.0.0.1:1234/mcp",
        "2026-07-28",
        [
            ScenarioResult("tools-list", (Check("tools-list", "SUCCESS"),)),
            ScenarioResult("caching", (Check("hints", "WARNING", "no ttlMs"), Check("b", "SUCCESS"))),
            ScenarioResult("tasks-lifecycle", (Check("t", "FAILURE", "tasks are an extension"),), scored=False),
        ],
        seconds=1.0,
    )
    lines = render_table(report, problems_only=True).splitlines()
    assert [line.split()[0] for line in lines[3:]] == ["caching", "warning", "2/2"]
    assert lines[-1] == "2/2 scored scenarios passed (1.0 s)."


def test_without_node_the_error_names_the_fix(tmp_path: Path):
    with pytest.raises(ConformanceError) as error:
        find_node([tmp_path])
    assert how_to_get_node() in str(error.value) and 'pip install -e ".[capstone]"' in str(error.value)


def test_outside_a_clone_the_fix_is_the_package_the_extra_brings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An installed wheel has no pyproject.toml above it: ``pip install -e ".[capstone]"`` would fail there."""
    installed = tmp_path / "site-packages" / "mcp_teach" / "course" / "conformance.py"
    monkeypatch.setattr(conformance, "__file__", str(installed))
    advice = how_to_get_node()
    assert advice.startswith(f'pip install "{NODE_WHEEL}"') and "-e" not in advice
    extra = re.search(r"capstone = \[\s*\"([^\"]+)\"", (REPO / "pyproject.toml").read_text())
    assert extra and extra.group(1) == NODE_WHEEL, "the advice installs what the capstone extra declares"


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for an old node")
def test_an_old_node_is_named_and_refused(tmp_path: Path):
    for name, text in (("node", "echo v20.19.5"), ("npx", "exit 1")):
        (tmp_path / name).write_text(f"#!/bin/sh\n{text}\n")
        (tmp_path / name).chmod(0o755)
    with pytest.raises(ConformanceError, match=r"needs Node 22 or newer\. Found only: .*node \(v20\.19\.5\)"):
        find_node([tmp_path])


def test_an_unknown_revision_is_refused_before_npx_runs(run):
    with pytest.raises(ConformanceError, match="choose one of 2025-11-25, 2026-07-28"):
        run(run_suite, "http://127.0.0.1:9/mcp", "2024-01-01")


def test_an_unknown_scenario_is_named(suite, node_folder: Path, own_temp: Path):
    with pytest.raises(ConformanceError, match="The suite has no scenario 'no-such-scenario'"):
        suite(run_suite, "http://127.0.0.1:9/mcp", "2026-07-28", ["no-such-scenario"])
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


def test_when_the_registry_is_unreachable_the_error_says_so(
    suite, node_folder: Path, own_temp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # An empty npm cache and a registry on a closed port: npx has to download the suite and cannot.
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    with pytest.raises(ConformanceError, match=r"could not download .* network"):
        suite(run_suite, "http://127.0.0.1:9/mcp", "2026-07-28", ["tools-list"])
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


def test_a_run_past_its_timeout_is_stopped_and_leaves_nothing(suite, node_folder: Path, own_temp: Path):
    with pytest.raises(ConformanceError, match=r"did not finish within 0\.3 s"):
        suite(run_suite, "http://127.0.0.1:9/mcp", "2026-07-28", timeout=0.3)
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


def test_a_cancelled_run_leaves_no_process_and_no_folder(run, node_folder: Path, own_temp: Path):
    """A notebook's interrupt (or a timeout round the call) cancels the run: npx and node are killed too."""

    def node_runs() -> bool:
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):  # a child may end between the listing and the look
                if "node" in child.name():
                    return True
        return False

    async def cancel_once_node_runs(scope: anyio.CancelScope) -> None:
        while not node_runs():
            await anyio.sleep(0.01)
        scope.cancel()  # the suite is running: an interrupt now must stop it and its processes

    async def cancelled_soon() -> bool:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(cancel_once_node_runs, scope)
                await check_server("calculator", "2026-07-28")
                tasks.cancel_scope.cancel()  # the run ended before it was cancelled: the test fails below
        return scope.cancelled_caught

    assert run(cancelled_soon) is True
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


def test_a_scenario_that_does_not_apply_at_the_revision_is_skipped(suite, node_folder: Path):
    report = suite(check_server, "calculator", "2026-07-28", ["tools-call-sampling"])
    assert [result.status for result in report.results] == ["SKIP"]
    assert "not applicable at spec version 2026-07-28" in report.results[0].checks[0].message


def test_the_command_serves_a_course_server_and_prints_the_table(node_folder: Path, capsys):
    assert cli.main(["conformance", "--scenario", "tools-list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Judging the course's calculator server at 2026-07-28, served on 127.0.0.1 for this run")
    assert "tools-list" in out and "PASS" in out and "1/1 scored scenarios passed" in out


def test_the_command_judges_a_running_server_by_its_url(node_folder: Path, cli_server, capsys):
    """A server started in a terminal of its own, reached only through its address, as a learner's would be."""
    server = cli_server([MCP_TEACH, "serve", "--server", "capstone", "--transport", "streamable-http", "--port", "0"])
    argv = ["conformance", "--url", server.url, "--scenario", "tools-list", "--scenario", "dns-rebinding-protection"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Judging the server at {server.url} at 2026-07-28.")
    assert f"against {server.url}" in out and "2/2 scored scenarios passed" in out
    server.stop()


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("127.0.0.1:8000/mcp", "is not an http(s) address: give the server's full URL"),
        ("ftp://127.0.0.1/mcp", "is not an http(s) address"),
        ("http://127.0.0.1:{port}/mcp", "start your server over streamable HTTP first"),
    ],
)
def test_a_url_nothing_answers_at_is_named_before_the_suite_runs(url: str, fragment: str, capsys):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed below: nothing listens there
    assert cli.main(["conformance", "--url", url.format(port=port)]) == 1
    captured = capsys.readouterr()
    assert fragment in captured.err and "Traceback" not in captured.err


def _counting_processes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Wrap the runner's process starter: how many suite processes (node on the suite's program) ran at once."""
    seen = {"now": 0, "most": 0}
    real_run = conformance._run

    async def counted(command: list[str], node_folder: Path, timeout: float) -> tuple[int | None, str]:
        scenario = command[0] == "node"
        seen["now"] += scenario
        seen["most"] = max(seen["most"], seen["now"])
        try:
            return await real_run(command, node_folder, timeout)
        finally:
            seen["now"] -= scenario

    monkeypatch.setattr(conformance, "_run", counted)
    return seen


FIVE = ["tools-list", "resources-list", "prompts-list", "caching", "dns-rebinding-protection"]


@pytest.mark.parametrize(("concurrency", "at_once"), [(1, 1), (4, 4)])
def test_scenarios_run_at_once_up_to_the_limit_and_are_reported_in_the_order_given(
    suite, node_folder: Path, own_temp: Path, monkeypatch: pytest.MonkeyPatch, concurrency: int, at_once: int
):
    seen = _counting_processes(monkeypatch)

    async def five(timeout: float) -> SuiteReport:
        return await check_server("calculator", "2026-07-28", FIVE, timeout=timeout, concurrency=concurrency)

    report = suite(five)
    assert [result.scenario for result in report.results] == FIVE
    assert report.passed and seen["most"] == at_once
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


def test_one_failing_scenario_stops_the_others_and_leaves_nothing(suite, node_folder: Path, own_temp: Path):
    with pytest.raises(ConformanceError, match="The suite has no scenario 'no-such-scenario'"):
        suite(check_server, "calculator", "2026-07-28", ["tools-list", "no-such-scenario", "caching", "ping"])
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


def test_a_cancelled_run_of_several_scenarios_kills_every_process(run, node_folder: Path, own_temp: Path):
    async def cancelled_soon() -> bool:
        with anyio.move_on_after(1.0) as scope:
            await check_server("calculator", "2026-07-28", FIVE * 2)
        return scope.cancelled_caught

    assert run(cancelled_soon) is True
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


def test_one_server_is_checked_at_both_revisions_at_once(suite, node_folder: Path, own_temp: Path):
    async def both(timeout: float) -> list[SuiteReport]:
        wanted = {"2025-11-25": ["ping", "tools-list"], "2026-07-28": ["tools-list", "caching"]}
        return await check_server_at("calculator", wanted, timeout=timeout)

    reports = suite(both)
    assert [(r.revision, [x.scenario for x in r.results], r.passed) for r in reports] == [
        ("2025-11-25", ["ping", "tools-list"], True),
        ("2026-07-28", ["tools-list", "caching"], True),
    ]
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


# --- the servers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("kind", ["memory", "stdio", "sse", "streamable-http"])
def test_the_capstone_server_is_served_on_every_transport(run, kind: str, mode: str, tmp_path: Path):
    """``mcp-teach serve --server capstone``: the same fixtures over each transport, in both eras (SSE: legacy only)."""

    async def main() -> tuple[str, str]:
        async with contextlib.AsyncExitStack() as stack:
            if kind == "memory":
                target: Any = build_capstone_server()
            elif kind == "stdio":
                target = stdio_transport(server="capstone", log_file=tmp_path / "stdio.log")
            else:
                target = await stack.enter_async_context(serve_http(kind, server=build_capstone_server()))
            client = await stack.enter_async_context(Client(target, mode=mode))
            result = await client.call_tool("test_simple_text", {})
            contents = await client.read_resource("test://static-text")
            return result.content[0].text, contents[0].text

    assert run(main) == ("This is a simple text response for testing.", STATIC_TEXT)


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
@pytest.mark.parametrize("revision", sorted(REQUIRED))
def test_the_capstone_server_passes_every_required_scenario(suite, node_folder: Path, own_temp: Path, revision: str):
    report = suite(check_server, "capstone", revision)
    assert len(report.scored) == REQUIRED[revision], render_table(report)
    assert report.passed, render_table(report)
    assert [r.scenario for r in report.scored if r.status != "PASS"] == [], render_table(report)  # no warnings
    assert report.seconds < 60, f"the {revision} run took {report.seconds:.0f} s: too slow for CI"
    assert list(own_temp.iterdir()) == [] and no_children_left() == []


@pytest.mark.parametrize("revision", sorted(FIXTURE_FREE))
@pytest.mark.parametrize(
    "server",
    [
        "calculator",
        "knowledge",
        "assistant",
        pytest.param(
            "notes",
            marks=pytest.mark.xfail(
                raises=AssertionError,
                strict=True,
                reason="bearer tokens on HTTP: every request without one gets 401; the suite sends none",
            ),
        ),
    ],
)
def test_each_course_server_passes_the_scenarios_that_need_no_fixture(
    suite, node_folder: Path, server: str, revision: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("MCP_TEACH_NOTES_DIR", str(tmp_path / "notes"))
    # One run of the whole requirement set (about 3 s) is quicker than a run per scenario (about 1 s each).
    report = suite(check_server, server, revision)
    results = {result.scenario: result for result in report.results}
    assert set(FIXTURE_FREE[revision]) <= set(results)
    failing = {name: results[name] for name in FIXTURE_FREE[revision] if not results[name].passed}
    assert failing == {}, render_table(SuiteReport(report.url, revision, list(failing.values())))
