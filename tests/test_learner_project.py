"""The learner's project from lessons 13 and 14, end to end, outside the repository.

The solved lessons' ``%%server_part`` and ``%%project_file`` cells are written into a temporary ``my-capstone/``
as the lessons write them (:func:`write_from_lesson`, no kernel). The folder is installed into a fresh virtual
environment that sees the test environment's packages through a ``.pth`` file (as ``tests/test_wheel.py`` does;
nothing is downloaded but the build backend, which pip takes from its index as for the course's own wheel). There
the project's dependencies hold no JupyterLab, matplotlib, openai or mcp-teach; its own pytest passes; its
``my-capstone`` command, judged by URL, passes every scenario of both revisions; MCP Inspector's CLI lists its
tools over stdio; each host entry starts it. The course's capstone, the reference solution, offers the same
tools, resources and prompts, and its GitHub tool answers as the learner's does (to a hostile upstream too:
tests/security/test_github_tool.py asks both). ``server.py`` has no undefined
or unused name, and ``pyproject.toml`` declares every package it imports.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import venv
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from fastmcp import Client
from packaging.requirements import Requirement
from support import talk_as_a_host

from mcp_teach.display.console import console_script
from mcp_teach.lessons.l13_project import PACKAGE, ServerModule, open_project, write_from_lesson
from mcp_teach.lessons.l14_ship import run_inspector
from mcp_teach.servers.capstone import build_capstone_server
from mcp_teach.servers.github_replay import SCENARIOS, GitHubReplay
from mcp_teach.wire.host_tap_recording import load_tap

ROOT = Path(__file__).resolve().parents[1]
LESSONS = [ROOT / "notebooks" / "solutions" / name for name in ("13_capstone.ipynb", "14_web_api_and_shipping.ipynb")]
UNWANTED = {"jupyterlab", "matplotlib", "openai", "mcp-teach"}
TIMEOUT = 120


def run(command: list[str], **options) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False, **options)
    assert done.returncode == 0, f"{command[:4]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def closure(requirements: list[str]) -> set[str]:
    """Every distribution the requirements pull in, by their installed metadata: markers evaluated for this Python
    and for the extras asked for (``pyjwt[crypto]`` brings ``cryptography``)."""
    seen: set[tuple[str, str]] = set()
    todo = [(Requirement(text), "") for text in requirements]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        for wanted in ("", *requirement.extras):
            if (name, wanted) in seen:
                continue
            seen.add((name, wanted))
            try:
                todo += [(Requirement(text), wanted) for text in distribution(name).requires or []]
            except PackageNotFoundError:
                continue
    return {name for name, _ in seen}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("learner") / "my-capstone"
    module = write_from_lesson(LESSONS[0], folder)
    write_from_lesson(LESSONS[1], folder, module)
    return folder


@pytest.fixture(scope="module")
def installed(project, tmp_path_factory) -> Path:
    """The ``bin`` folder of a fresh virtual environment with the project installed (no dependencies fetched)."""
    environment = tmp_path_factory.mktemp("venv") / "venv"
    venv.create(environment, with_pip=False, symlinks=os.name != "nt")
    python = environment / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    Path(purelib, "test-environment.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # The build backend comes from pip's index, as for the course's own wheel (tests/test_wheel.py): the
    # environment's setuptools is too old to build a wheel without the `wheel` package.
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(project)])
    return python.parent


def clean_env(bin_folder: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH" and not key.startswith("MCP_")}
    return env | {"PATH": f"{bin_folder}{os.pathsep}{env['PATH']}"}


def test_the_written_server_is_the_lessons_parts_in_order(project) -> None:
    source = (project / "src" / PACKAGE / "server.py").read_text()
    names = re.findall(r"^# --- part: ([\w-]+) -+$", source, re.MULTILINE)
    assert names[:4] == ["spec-errors", "asking-the-client", "subscriptions", "new-server"]
    lesson_14 = ["github-request", "github-refusals", "github-rate-limits", "github-tool", "github-plumbing"]
    assert names[-8:] == ["build-server", "main", *lesson_14, "legal-refusal"]  # build-server: lesson 14's, in place
    assert "add_github_tool(mcp, explain=explain_refusal)" in source
    assert source.endswith('if __name__ == "__main__":\n    main()\n') and "mcp_teach" not in source


def test_no_name_in_it_is_undefined_or_unused(project) -> None:
    """ruff's pyflakes rules over the folder (the lessons' ruff run skips a cell magic's body). A part may import
    again what an earlier part imported: each cell runs on its own."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--isolated",
            "--select",
            "F",
            "--ignore",
            "F811",
            str(project),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def test_every_package_it_imports_is_declared_and_none_of_the_course(project) -> None:
    import tomllib

    declared = tomllib.loads((project / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.sub(r"[-_.]+", "_", Requirement(text).name).lower() for text in declared}
    source = (project / "src" / PACKAGE / "server.py").read_text()
    imported = set(re.findall(r"^(?:from|import) (\w+)", source, re.MULTILINE)) - set(sys.stdlib_module_names)
    assert imported == names, f"imported {sorted(imported)}, declared {sorted(names)}"
    pulled = closure(declared)
    assert "fastmcp" in pulled and not pulled & UNWANTED, pulled & UNWANTED


def test_its_own_tests_pass_in_its_folder(project, installed) -> None:
    python = str(installed / "python")
    done = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, env=clean_env(installed))
    assert re.search(r"\b8 passed\b", done.stdout) and "failed" not in done.stdout, done.stdout


def test_installed_and_judged_by_url_it_passes_both_revisions(project, installed, node_folder, tmp_path) -> None:
    """``mcp-teach conformance --url``, the command the lesson gives, once per revision, both at once."""
    port = _free_port()
    command = [str(installed / "my-capstone"), "--transport", "streamable-http", "--port", str(port)]
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(command, cwd=tmp_path, env=clean_env(installed), stdout=log, stderr=log)
    try:
        _wait_for(port, server)
        judge = [console_script("mcp-teach"), "conformance", "--url", f"http://127.0.0.1:{port}/mcp", "--requirements"]
        runs = {
            revision: subprocess.Popen([*judge, revision], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for revision in ("2026-07-28", "2025-11-25")
        }
        printed = {revision: run.communicate(timeout=TIMEOUT)[0] for revision, run in runs.items()}
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()
    assert "37/37 scored scenarios passed" in printed["2026-07-28"], printed["2026-07-28"][-3000:]
    assert "30/30 scored scenarios passed" in printed["2025-11-25"], printed["2025-11-25"][-3000:]
    assert all(run.returncode == 0 for run in runs.values())


def test_the_inspector_lists_its_tools_over_stdio(installed) -> None:
    listed = run_inspector("--method", "tools/list", server=[str(installed / "my-capstone")])
    if listed.returncode != 0 and "my-capstone" not in listed.stderr:
        pytest.skip(f"MCP Inspector's CLI does not start here: {listed.stderr[-300:]}")
    assert listed.returncode == 0, listed.stderr
    names = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
    assert {"test_simple_text", "test_trigger_resource_update", "github_repository"} <= names


def host_entries(installed: Path, record: Path) -> dict[str, dict]:
    """Claude Desktop's and VS Code's entries for the installed command, plain and through the tap (absolute
    paths: a host has a PATH of its own)."""
    command = str(installed / "my-capstone")
    tap = {"command": console_script("mcp-teach"), "args": ["tap", "--out", str(record), "--", command]}
    return {
        "Claude Desktop": {"command": command, "args": [], "env": {}},
        "VS Code": {"type": "stdio", "command": command, "args": ["--transport", "stdio"], "env": {}},
        "Claude Desktop, tapped": {**tap, "env": {}},
        "VS Code, tapped": {"type": "stdio", **tap, "env": {}},
    }


@pytest.mark.parametrize("host", ["Claude Desktop", "VS Code", "Claude Desktop, tapped", "VS Code, tapped"])
def test_each_host_entry_starts_it(installed, host, tmp_path) -> None:
    record = tmp_path / "session.jsonl"
    entry = host_entries(installed, record)[host]
    minimal = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **entry["env"]}  # what a host passes, little more
    answers, returncode, stderr = talk_as_a_host([entry["command"], *entry["args"]], TIMEOUT, cwd=tmp_path, env=minimal)
    assert returncode == 0, stderr
    assert answers[0]["result"]["serverInfo"]["name"] == "my-capstone"
    assert "test_simple_text" in [tool["name"] for tool in answers[1]["result"]["tools"]]
    if "tapped" in host:
        sent = [wire.message["method"] for wire in load_tap(record).messages if "method" in wire.message]
        assert sent == ["initialize", "notifications/initialized", "tools/list"]


@pytest.fixture(scope="module")
def learners_server(project):
    """``build_server`` of the learner's module, imported from the folder."""
    sys.path.insert(0, str(project / "src"))
    try:
        from my_capstone.server import build_server
    finally:
        sys.path.remove(str(project / "src"))
    return build_server


def test_the_reference_solution_offers_what_the_learners_server_offers(learners_server, run) -> None:
    async def offers(server) -> tuple[set[str], ...]:
        async with Client(server) as client:
            tools = {tool.name for tool in await client.list_tools()}
            resources = {str(resource.uri) for resource in await client.list_resources()}
            templates = {template.uri_template for template in await client.list_resource_templates()}
            prompts = {prompt.name for prompt in await client.list_prompts()}
        return tools, resources, templates, prompts

    assert run(offers, learners_server()) == run(offers, build_capstone_server())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_github_tool_answers_as_the_reference_does(learners_server, scenario, run, monkeypatch) -> None:
    """Each of GitHub's replayed answers gives the same result from both (a legal block: the learner's own words)."""

    async def ask(server, repository: str) -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool("github_repository", {"repository": repository}, raise_on_error=False)
        return result.is_error, result.content[0].text

    with GitHubReplay(scenario) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        for repository in ("modelcontextprotocol/python-sdk", "octocat/missing", "../etc/passwd"):
            learners = run(ask, learners_server(), repository)
            reference = run(ask, build_capstone_server(), repository)
            if scenario == "blocked" and repository != "../etc/passwd":
                assert learners[0] and "legal reasons (451)" in learners[1], learners
            else:
                assert learners == reference, repository
    user_agents = {headers["User-Agent"] for _, headers in github.requests}
    assert user_agents == {"my-capstone", "mcp-teach"}, user_agents


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(port: int, server: subprocess.Popen) -> None:
    import socket
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.poll() is None, "my-capstone exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("my-capstone did not answer")


def test_lesson_14_reopens_the_project_lesson_13_wrote(project, tmp_path, capsys) -> None:
    """open_project reads server.py back part by part (writing it again changes nothing); with no folder yet, it
    starts from lesson 13's solution and says so."""
    reopened = open_project(project)
    path = project / "src" / PACKAGE / "server.py"
    assert reopened.text() == path.read_text() and capsys.readouterr().out == ""
    started = open_project(tmp_path / "my-capstone")
    assert "starts from lesson 13's solution: 21 parts" in capsys.readouterr().out
    assert list(ServerModule.read(started.path).parts) == list(started.parts)
    assert "add_github_tool" not in started.text() and "def build_server" in started.text()
