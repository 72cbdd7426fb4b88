"""Attacks on the subscriptions the lessons write themselves, over real streamable HTTP on 127.0.0.1.

Lesson 07's knowledge server with ``add_errata`` took any number of corrections of any length (30 of 2 MB grew it
by 102 MB, and a reader of ``docs://errata`` got all 60 MB back), and its ``resources/subscribe`` kept every URI
after the session that asked had ended (30 URIs of 2 MB: 60 MB held for as long as the server ran). Lesson 13's
learner's server, ``my-capstone``, had the same subscriptions and no bounds at all. Now lesson 07 caps the errata
and forgets a session's subscriptions when it ends; the learner's server also refuses a long or unknown URI and
more than so many subscriptions per session, as the course's capstone does
(``tests/security/test_security_subscriptions.py``).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import anyio
import mcp_types
import psutil
import pytest
from fastmcp import Client
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from support import HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l13_project import PACKAGE, READY, write_from_lesson
from mcp_teach.servers.explained_errors import short_repr
from mcp_teach.servers.knowledge import (
    ERRATA_URI,
    MAX_CORRECTION,
    MAX_ERRATA,
    add_errata,
    build_knowledge_server,
    serve_subscriptions,
)
from mcp_teach.transports.in_process import serve_http

LESSON_13 = Path(__file__).resolve().parents[2] / "notebooks" / "solutions" / "13_capstone.ipynb"
HUGE = "a" * 2_000_000
#: What the attack's growth stays under now (the allocator keeps some of the 60 MB of bodies it parsed).
TOLERATED_GROWTH = 50_000_000


async def subscribe(client: Client, uri: str, *, unsubscribe: bool = False) -> dict:
    """``resources/subscribe`` (or ``unsubscribe``) to ``uri``: ``{}``, or the error's code and message."""
    if unsubscribe:
        request = mcp_types.UnsubscribeRequest(params=mcp_types.UnsubscribeRequestParams(uri=uri))
    else:
        request = mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=uri))
    try:
        await client.session.send_request(request, mcp_types.EmptyResult)
    except MCPError as error:
        return {"code": error.error.code, "message": error.error.message}
    return {}


async def until(done: Callable[[], bool]) -> None:
    """Wait until ``done()``: a session's teardown runs in its own task, just after its ``DELETE`` is answered."""
    with anyio.fail_after(HANG_TIMEOUT):
        while not done():
            await anyio.sleep(0.01)


def test_the_errata_page_takes_neither_a_huge_correction_nor_a_flood(run):
    server = build_knowledge_server()
    add_errata(server)

    async def flood() -> tuple[list, str]:
        async with serve_http("streamable-http", server=server) as url, teaching_client(url) as client:

            async def report(correction: str) -> tuple[bool, str]:
                arguments = {"doc_id": "tools", "correction": correction}
                result = await client.call_tool("report_erratum", arguments, raise_on_error=False)
                return result.is_error, result.content[0].text

            answers = [await report(HUGE)] + [await report(f"correction {n}") for n in range(MAX_ERRATA + 1)]
            page = (await client.read_resource(ERRATA_URI))[0].text
        return answers, page

    (huge, *accepted, full), page = run(flood)
    too_long = f"String should have at most {MAX_CORRECTION} characters (got {short_repr(HUGE)})"
    assert huge == (True, f"Invalid arguments for report_erratum: argument 'correction': {too_long}.")
    assert accepted[-1] == (False, f"Erratum {MAX_ERRATA} added to {ERRATA_URI}.")
    assert not any(is_error for is_error, _ in accepted)
    assert full == (True, f"{ERRATA_URI} is full ({MAX_ERRATA} corrections): read it, yours may be there already.")
    assert page == "# Errata\n" + "".join(f"\n- tools: correction {n}" for n in range(MAX_ERRATA))


def test_lesson_07s_subscriptions_go_when_their_session_ends(run):
    server = build_knowledge_server()
    watchers, _ = serve_subscriptions(server, InMemorySubscriptionBus())

    async def scenario() -> dict[str, object]:
        seen = {}
        async with serve_http("streamable-http", server=server) as url:
            async with teaching_client(url, mode="legacy") as staying:
                await subscribe(staying, ERRATA_URI)
                async with teaching_client(url, mode="legacy") as leaving:
                    for number in range(30):
                        await subscribe(leaving, f"docs://x/{number:02}/{HUGE}")
                    await subscribe(leaving, ERRATA_URI)
                    await subscribe(leaving, "docs://tools")
                    await subscribe(leaving, "docs://tools", unsubscribe=True)
                    seen["during"] = sorted(map(len, watchers.values()))
                await until(lambda: len(watchers) == 1)
                seen["one left"] = [list(watched) for watched in watchers.values()]
            await until(lambda: not watchers)
        return seen

    assert run(scenario) == {"during": [1, 31], "one left": [[ERRATA_URI]]}


@pytest.fixture(scope="module")
def learners_project(tmp_path_factory) -> Path:
    """The folder ``my-capstone/`` that lesson 13's cells write."""
    folder = tmp_path_factory.mktemp("learner") / "my-capstone"
    write_from_lesson(LESSON_13, folder)
    return folder


@pytest.fixture(scope="module")
def learners_module(learners_project) -> ModuleType:
    """The learner's ``server.py``, imported under a name of its own."""
    path = learners_project / "src" / PACKAGE / "server.py"
    spec = importlib.util.spec_from_file_location("learners_capstone_server", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_learners_server_refuses_huge_unknown_uris_and_keeps_no_memory(learners_project, cli_server, run):
    command = [sys.executable, "-m", f"{PACKAGE}.server", "--transport", "streamable-http", "--port", "0"]
    server = cli_server(command, PYTHONPATH=str(learners_project / "src"))
    process, url = psutil.Process(server.process.pid), server.matches(READY)[0][1] + "/mcp"

    async def attack() -> tuple[list[dict], int, int]:
        async with teaching_client(url, mode="legacy") as client:
            before = process.memory_info().rss
            answers = [await subscribe(client, f"test://x/{number:02}/{HUGE}") for number in range(30)]
        return answers, before, process.memory_info().rss

    answers, before, after = run(attack)
    assert after - before < TOLERATED_GROWTH, f"grew by {(after - before) / 1e6:.0f} MB"
    assert answers == [{"code": -32602, "message": "A resource URI has at most 2048 characters, not 2000012."}] * 30


def test_the_learners_server_bounds_a_session_and_forgets_it_when_it_ends(learners_module, run):
    server = learners_module.build_server()
    # The handlers this registers replace those build_server registered: these watchers are the ones in use.
    watchers, _ = learners_module.serve_subscriptions(server, InMemorySubscriptionBus())
    limit = learners_module.SUBSCRIPTIONS_PER_SESSION

    async def scenario() -> dict[str, object]:
        seen = {}
        async with serve_http("streamable-http", server=server) as url:
            async with teaching_client(url, mode="legacy") as client:
                seen["unknown"] = await subscribe(client, "file:///etc/passwd")
                answers = [await subscribe(client, f"test://template/{number}/data") for number in range(limit)]
                seen["within"] = set(map(str, answers))
                seen["again"] = await subscribe(client, "test://template/0/data")
                seen["over"] = await subscribe(client, learners_module.WATCHED_URI)
                await subscribe(client, "test://template/0/data", unsubscribe=True)
                seen["after unsubscribe"] = await subscribe(client, learners_module.WATCHED_URI)
                seen["watched"] = sorted(map(len, watchers.values()))
            await until(lambda: not watchers)
        return seen

    assert run(scenario) == {
        "unknown": {"code": -32002, "message": "Resource not found: file:///etc/passwd"},
        "within": {"{}"},
        "again": {},
        "over": {"code": -32603, "message": f"At most {limit} subscriptions per session: unsubscribe one."},
        "after unsubscribe": {},
        "watched": [limit],
    }
