"""The assistant server: tools that need the client (elicitation, sampling, roots, progress, cancellation,
logging, list changes), with real round trips on every transport in both eras, and their wire messages.

Real servers: in memory, ``python -m mcp_teach.serve --server assistant`` over stdio, SSE and streamable HTTP
on 127.0.0.1 (with sessions and stateless); fastmcp's client with scripted handlers, and raw JSON lines.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types
import pytest
from fastmcp.client.elicitation import ElicitResult
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY, ToolsListChanged
from support import CONNECTION_MODE_IDS, CONNECTION_MODES, HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.servers.assistant import LOG_LEVELS, NOTES, build_assistant_server
from mcp_teach.servers.by_name import SERVER_NAMES
from mcp_teach.transports.in_process import PLAIN_LOGS, serve_http, stdio_transport
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture

CASES, IDS = CONNECTION_MODES, CONNECTION_MODE_IDS
ROOTS = ["file:///home/student/project"]
SUMMARY = "A fixed summary from the test's sampling handler."
PYTHON_M = [sys.executable, "-m", "mcp_teach.serve"]


@contextlib.asynccontextmanager
async def target(connection: str, *, stateless: bool = False) -> AsyncIterator[Any]:
    """What a client connects to: a fresh assistant server on ``connection``."""
    if connection in ("sse", "streamable-http"):
        async with serve_http(connection, server=build_assistant_server(), stateless=stateless) as url:  # type: ignore[arg-type]
            yield url
    elif connection == "stdio":
        yield stdio_transport(server="assistant")
    else:
        yield build_assistant_server()


class ScriptedUser:
    """The client side: answers elicitations from a script, samples a fixed reply, records what arrives."""

    def __init__(self) -> None:
        self.answers: list[Any] = []  # what the next elicitations get, in order
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.logs: list[tuple[str, Any]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.notified: list[str] = []
        self.sampled: list[str] = []

    async def elicit(self, message: str, response_type: Any, params: Any, context: Any) -> Any:
        self.asked.append((message, params.requested_schema))
        return self.answers.pop(0)

    async def sample(self, messages: Any, params: Any, context: Any) -> str:
        self.sampled.append(messages[0].content.text)
        return SUMMARY

    async def log(self, message: Any) -> None:
        self.logs.append((message.level, message.data["msg"]))

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ServerNotification):
            self.notified.append(message.method)

    def client(self, connected: Any, mode: str, **kwargs: Any) -> Any:
        return teaching_client(
            connected,
            mode=mode,
            elicitation_handler=self.elicit,
            sampling_handler=self.sample,
            roots=ROOTS,
            log_handler=self.log,
            progress_handler=self.on_progress,
            message_handler=self.on_message,
            **kwargs,
        )


def text(result: Any) -> str:
    return result.content[0].text


def wires(capture: Capture, direction: str, method: str | None = None, kind: str | None = None) -> list[dict]:
    return [
        w.message
        for w in capture
        if w.direction == direction and (method is None or w.method == method) and (kind is None or w.kind == kind)
    ]


def results(capture: Capture) -> list[dict[str, Any]]:
    """The results the server sent, in order."""
    return [m["result"] for m in wires(capture, SERVER_TO_CLIENT, kind="response")]


async def every_feature(connection: str, mode: str) -> dict[str, Any]:
    user = ScriptedUser()
    outcome: dict[str, Any] = {"user": user}
    async with target(connection) as connected:
        capture = CaptureTransport(connected)
        outcome["capture"] = capture.capture
        async with user.client(capture, mode) as client:
            outcome["era"] = client.protocol_version
            await client.list_tools()
            user.answers = [{"unit": "km"}, ElicitResult(action="decline"), ElicitResult(action="cancel")]
            outcome["convert"] = [text(await client.call_tool("convert_length", {"value": 1500})) for _ in range(3)]
            user.answers = [{"confirm": True}, ElicitResult(action="decline")]
            outcome["delete"] = [
                text(await client.call_tool("delete_note", {"note_id": note})) for note in ("todo", "ideas")
            ]
            outcome["notes"] = json.loads(text(await client.call_tool("list_notes", {})))
            outcome["summary"] = text(await client.call_tool("summarize_text", {"text": "MCP " * 50}))
            outcome["roots"] = json.loads(text(await client.call_tool("list_client_roots", {})))
            outcome["counted"] = text(await client.call_tool("count_slowly", {"n": 5, "delay": 0.02}))
            await client.call_tool("log_levels", {})
            outcome["tools_before"] = [tool.name for tool in await client.list_tools()]
            if mode == "auto":
                async with listen(client.session, tools_list_changed=True) as subscription:
                    outcome["honored"] = subscription.honored
                    outcome["added"] = text(await client.call_tool("add_shout_tool", {}))
                    with anyio.fail_after(HANG_TIMEOUT):
                        outcome["event"] = await subscription.__anext__()
            else:
                outcome["added"] = text(await client.call_tool("add_shout_tool", {}))
                with anyio.fail_after(HANG_TIMEOUT):
                    while "notifications/tools/list_changed" not in user.notified:
                        await anyio.sleep(0.01)
            outcome["tools_after"] = [tool.name for tool in await client.list_tools()]
            outcome["shout"] = text(await client.call_tool("shout", {"text": "hello"}))
    return outcome


@pytest.mark.parametrize(("connection", "mode"), CASES, ids=IDS)
def test_every_feature_on_every_transport(run, connection, mode):
    outcome = run(every_feature, connection, mode)
    modern = mode == "auto" and connection != "sse"
    user, capture = outcome["user"], outcome["capture"]
    assert outcome["era"] == ("2026-07-28" if modern else "2025-11-25")

    # Elicitation: accept, decline, cancel; a confirmation accepted and declined.
    assert outcome["convert"] == [
        "1500 m = 1.5 km",
        "Not converted: you declined to choose a unit.",
        "Not converted: the question was cancelled.",
    ]
    assert outcome["delete"] == ["Deleted the note 'todo'.", "Kept the note 'ideas': you declined."]
    assert outcome["notes"] == sorted(set(NOTES) - {"todo"})
    unit_schema = user.asked[0][1]
    assert user.asked[0][0] == "Convert 1500 m to which unit?"
    assert unit_schema["properties"]["unit"]["enum"] == ["mm", "cm", "m", "km", "in", "ft", "mi"]
    assert unit_schema["required"] == ["unit"]
    assert user.asked[3][1]["properties"]["confirm"]["type"] == "boolean"
    # Sampling and roots: the client's answers come back through the tool.
    assert outcome["summary"].endswith(f": {SUMMARY}")
    assert user.sampled[0].startswith("Summarize in at most 20 words:")
    assert outcome["roots"] == [{"uri": ROOTS[0], "name": ""}]
    # Progress: every step, in order, against the request's progressToken.
    assert outcome["counted"] == "Counted to 5."
    assert user.progress == [(float(i), 5.0, f"step {i} of 5") for i in range(1, 6)]
    # Logging: fastmcp's client asks for everything (logLevel "debug" on 2026-07-28, nothing set on 2025-11-25).
    assert [level for level, _ in user.logs] == list(LOG_LEVELS)
    # List changes: the client hears of it, lists again, and the new tool is callable.
    assert "shout" not in outcome["tools_before"]
    assert outcome["added"] == "Added the tool 'shout': list the tools again to see it."
    assert outcome["tools_after"] == [*outcome["tools_before"], "shout"]
    assert outcome["shout"] == "HELLO!"

    sent = wires(capture, CLIENT_TO_SERVER)
    received = wires(capture, SERVER_TO_CLIENT)
    if modern:
        check_modern_wire(outcome, capture, sent, received)
    else:
        check_legacy_wire(capture, received)


def check_legacy_wire(capture: Capture, received: list[dict]) -> None:
    """2025-11-25: the server's own requests arrive while the tools/call is open; notifications on its stream."""
    server_requests = [m["method"] for m in received if "method" in m and "id" in m]
    assert server_requests == ["elicitation/create"] * 5 + ["sampling/createMessage", "roots/list"]
    first_call = capture.requests("tools/call")[0]
    elicit = capture.requests("elicitation/create")[0]
    order = list(capture)
    assert order.index(first_call) < order.index(elicit) < order.index(capture.response_to(first_call))
    assert elicit.message["params"]["mode"] == "form"
    assert elicit.message["params"]["requestedSchema"]["properties"]["unit"]["enum"][3] == "km"
    answers = [capture.response_to(w).message["result"] for w in capture.requests("elicitation/create")]
    assert [a["action"] for a in answers] == ["accept", "decline", "cancel", "accept", "decline"]
    assert answers[0]["content"] == {"unit": "km"}
    sampling = capture.requests("sampling/createMessage")[0].message["params"]
    assert sampling["maxTokens"] == 80 and sampling["messages"][0]["role"] == "user"
    assert capture.response_to(capture.requests("sampling/createMessage")[0]).message["result"]["content"] == {
        "type": "text",
        "text": SUMMARY,
    }
    assert not any("resultType" in r and r["resultType"] == "input_required" for r in results(capture))
    count_call = next(w for w in capture.requests("tools/call") if w.message["params"]["name"] == "count_slowly")
    token = count_call.message["params"]["_meta"]["progressToken"]
    progress = [m["params"] for m in received if m.get("method") == "notifications/progress"]
    assert [p["progressToken"] for p in progress] == [token] * 5
    assert [p["progress"] for p in progress] == [1, 2, 3, 4, 5]
    levels = [m["params"]["level"] for m in received if m.get("method") == "notifications/message"]
    assert levels == list(LOG_LEVELS)
    assert [m for m in received if m.get("method") == "notifications/tools/list_changed"] == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    ]
    assert capture.requests("subscriptions/listen") == []


def check_modern_wire(outcome: dict[str, Any], capture: Capture, sent: list[dict], received: list[dict]) -> None:
    """2026-07-28: no server requests; input_required results, retried calls with inputResponses; listen."""
    assert not [m for m in received if "method" in m and "id" in m]  # the server sends no request of its own
    required = [r for r in results(capture) if r.get("resultType") == "input_required"]
    kinds = [next(iter(r["inputRequests"].values()))["method"] for r in required]
    assert kinds == ["elicitation/create"] * 5 + ["sampling/createMessage", "roots/list"]
    first = required[0]
    assert list(first["inputRequests"]) == ["unit"]
    assert first["inputRequests"]["unit"]["params"]["requestedSchema"]["properties"]["unit"]["enum"][3] == "km"
    assert "requestState" not in first  # convert_length keeps no state between rounds
    delete = required[3]
    assert list(delete["inputRequests"]) == ["confirm"] and isinstance(delete["requestState"], str)
    assert "todo" not in delete["requestState"]  # sealed by fastmcp, not our plaintext JSON
    calls = [m for m in sent if m.get("method") == "tools/call"]
    retries = [c for c in calls if "inputResponses" in c["params"]]
    assert [list(c["params"]["inputResponses"]) for c in retries] == [["unit"]] * 3 + [["confirm"]] * 2 + [
        ["summary"],
        ["roots"],
    ]
    assert retries[0]["params"]["inputResponses"]["unit"] == {"action": "accept", "content": {"unit": "km"}}
    assert retries[0]["params"]["name"] == "convert_length" and retries[0]["params"]["arguments"] == {"value": 1500}
    assert retries[3]["params"]["requestState"] == delete["requestState"]  # echoed verbatim
    assert retries[4]["params"]["inputResponses"]["confirm"] == {"action": "decline"}
    assert retries[6]["params"]["inputResponses"]["roots"] == {"roots": [{"uri": ROOTS[0]}]}
    # Every request asks for log messages: fastmcp's client stamps logLevel "debug" into _meta.
    assert all(c["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "debug" for c in calls)
    # Change notifications only on the listen stream, stamped with its id.
    listen_request = capture.requests("subscriptions/listen")[0].message
    assert listen_request["params"]["notifications"] == {"toolsListChanged": True}
    stamp = {SUBSCRIPTION_ID_META_KEY: listen_request["id"]}
    ack = next(m for m in received if m.get("method") == "notifications/subscriptions/acknowledged")
    assert ack["params"] == {"notifications": {"toolsListChanged": True}, "_meta": stamp}
    changed = [m for m in received if m.get("method") == "notifications/tools/list_changed"]
    assert changed == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": stamp}}]
    assert outcome["event"] == ToolsListChanged()
    assert outcome["honored"].tools_list_changed is True
    discover = results(capture)[0]
    assert discover["capabilities"]["tools"] == {"listChanged": True}


# --- cancellation ------------------------------------------------------------------------------------------


async def cancel_a_slow_call(connection: str, mode: str) -> dict[str, Any]:
    async with target(connection) as connected:
        capture = CaptureTransport(connected)
        async with teaching_client(capture, mode=mode) as client:
            await client.list_tools()
            with anyio.move_on_after(0.5) as scope:  # the caller gives up: the SDK sends notifications/cancelled
                await client.call_tool("wait_for", {"seconds": 30})
            with anyio.fail_after(HANG_TIMEOUT):  # the server unwinds the call; a later request sees the board
                while (jobs := json.loads(text(await client.call_tool("active_jobs", {}))))["running"]:
                    await anyio.sleep(0.02)
            done = text(await client.call_tool("wait_for", {"seconds": 0}))
            after = json.loads(text(await client.call_tool("active_jobs", {})))
    return {"gave_up": scope.cancelled_caught, "jobs": jobs, "after": after, "done": done, "capture": capture}


@pytest.mark.parametrize(("connection", "mode"), CASES, ids=IDS)
def test_a_cancelled_call_leaves_no_job_behind(run, connection, mode):
    outcome = run(cancel_a_slow_call, connection, mode)
    capture = outcome["capture"].capture
    assert outcome["gave_up"] is True
    assert outcome["jobs"] == {"running": {}, "completed": 0, "cancelled": 1}
    assert outcome["done"] == "Waited 0 s." and outcome["after"]["completed"] == 1
    slow = capture.requests("tools/call")[0]
    assert slow.message["params"]["name"] == "wait_for"
    answer = capture.response_to(slow)
    if (connection, mode) == ("streamable-http", "legacy"):
        # The mcp SDK ends the POST's SSE stream with an error the client no longer waits for (the spec: the
        # receiver SHOULD NOT respond); everywhere else a cancelled request gets no answer at all.
        assert answer.message["error"] == {"code": -32800, "message": "Request cancelled"}
    else:
        assert answer is None
    cancelled = wires(capture, CLIENT_TO_SERVER, "notifications/cancelled")
    # Recorded where the session writes it; on 2026-07-28 streamable HTTP the transport swallows the frame and
    # closes the POST's response stream instead (the modern HTTP wire has no client notifications).
    assert [c["params"]["requestId"] for c in cancelled] == [slow.id]
    if connection == "streamable-http":
        posts = [e for e in capture.http if e.method == "POST"]
        posted = [json.loads(e.request_body or "null") for e in posts]
        sent_cancel = any(isinstance(p, dict) and p.get("method") == "notifications/cancelled" for p in posted)
        assert sent_cancel is (mode == "legacy")


# --- logging: the 2026-07-28 per-request opt-in, on the raw wire ---------------------------------------------


def raw_stdio(lines: list[dict[str, Any]], tmp_path) -> list[dict[str, Any]]:
    """Send JSON lines to ``python -m mcp_teach.serve --server assistant`` and return every line it wrote."""
    data = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run(
        [*PYTHON_M, "--server", "assistant", "--transport", "stdio"],
        input=data,
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
        env={**PLAIN_LOGS, "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def modern_call(id: int, name: str, log_level: str | None = None, **arguments: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    if log_level:
        meta["io.modelcontextprotocol/logLevel"] = log_level
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def test_modern_log_messages_only_for_requests_that_ask_and_from_their_level_up(tmp_path):
    replies = raw_stdio(
        [modern_call(1, "log_levels"), modern_call(2, "log_levels", "warning"), modern_call(3, "log_levels", "debug")],
        tmp_path,
    )
    # stdio answers requests concurrently: group the messages by the request they follow.
    answered = [r["id"] for r in replies if "id" in r]
    assert sorted(answered) == [1, 2, 3]
    levels = sorted(r["params"]["level"] for r in replies if r.get("method") == "notifications/message")
    assert levels == sorted(["warning", "error", *LOG_LEVELS])
    assert all(r.get("method") in (None, "notifications/message") for r in replies)


def test_modern_stdio_server_writes_no_request_and_the_retry_completes(tmp_path):
    """2026-07-28 stdio: one line back, the result carrying the elicitation; the retry finishes the call."""
    server = subprocess.Popen(
        [*PYTHON_M, "--server", "assistant", "--transport", "stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**PLAIN_LOGS, "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    try:
        server.stdin.write(json.dumps(modern_call(1, "delete_note", note_id="todo")) + "\n")
        server.stdin.flush()
        first = json.loads(server.stdout.readline())
        result = first["result"]
        assert first["id"] == 1 and result["resultType"] == "input_required"
        assert result["inputRequests"]["confirm"]["method"] == "elicitation/create"
        retry = modern_call(2, "delete_note", note_id="todo")
        retry["params"]["inputResponses"] = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        retry["params"]["requestState"] = result["requestState"]
        forged = modern_call(3, "delete_note", note_id="todo")
        forged["params"]["inputResponses"] = retry["params"]["inputResponses"]
        forged["params"]["requestState"] = result["requestState"][:-4] + "AAAA"
        server.stdin.write(json.dumps(forged) + "\n" + json.dumps(retry) + "\n")
        server.stdin.close()
        replies = {reply["id"]: reply for reply in map(json.loads, server.stdout.read().splitlines())}
    finally:
        server.wait(timeout=HANG_TIMEOUT)
    assert sorted(replies) == [2, 3]  # nothing but the two answers: no elicitation/create on stdout
    assert replies[2]["result"]["content"][0]["text"] == "Deleted the note 'todo'."
    assert "error" in replies[3]  # a tampered requestState is refused before the tool runs


def test_a_client_without_the_capability_is_told_what_to_pass(run):
    """2026-07-28: -32021 with ``data.requiredCapabilities`` (basic/index); 2025-11-25, without that code: a tool
    error. Either way the message names the handler to pass, and a call that needs nothing still works."""

    async def scenario() -> dict[str, list[Any]]:
        answers: dict[str, list[Any]] = {"auto": [], "legacy": []}
        for mode in answers:
            capture = CaptureTransport(build_assistant_server())
            async with teaching_client(capture, mode=mode) as client:
                for name, args in (("convert_length", {"value": 1}), ("summarize_text", {"text": "x"})):
                    try:
                        result = await client.call_tool(name, args, raise_on_error=False)
                        answers[mode].append((result.is_error, text(result)))
                    except MCPError as error:
                        answers[mode].append((error.error.code, error.error.message, error.error.data))
                result = await client.call_tool("convert_length", {"value": 1, "to_unit": "ft"})
                answers[mode].append((result.is_error, text(result)))
        return answers

    answers = run(scenario)
    elicit = (
        "This tool needs the client to answer elicitation/create: the client declared no elicitation "
        "(fastmcp: Client(..., elicitation_handler=...))."
    )
    sample = (
        "This tool needs the client to answer sampling/createMessage: the client declared no sampling "
        "(fastmcp: Client(..., sampling_handler=...))."
    )
    converted = (False, "1 m = 3.28084 ft")
    assert answers["legacy"] == [(True, elicit), (True, sample), converted]
    assert answers["auto"] == [
        (-32021, elicit, {"requiredCapabilities": {"elicitation": {}}}),
        (-32021, sample, {"requiredCapabilities": {"sampling": {}}}),
        converted,
    ]


# --- stateless streamable HTTP: no back-channel in 2025-11-25, nothing needed in 2026-07-28 -----------------


async def stateless(mode: str) -> list[Any]:
    user = ScriptedUser()
    user.answers = [{"unit": "cm"}]
    async with target("streamable-http", stateless=True) as url, user.client(url, mode) as client:
        result = await client.call_tool("convert_length", {"value": 2}, raise_on_error=False)
        counted = text(await client.call_tool("count_slowly", {"n": 3, "delay": 0}))
    return [result.is_error, text(result), counted, user.progress]


def test_stateless_http_has_no_back_channel_in_2025_but_needs_none_in_2026(run):
    legacy_error, legacy_text, _, legacy_progress = run(stateless, "legacy")
    assert legacy_error is True
    assert legacy_text.startswith(
        "This connection cannot carry elicitation/create: a stateless 2025-11-25 server keeps no session"
    )
    assert run(stateless, "auto") == [
        False,
        "2 m = 200 cm",
        "Counted to 3.",
        [(1.0, 3.0, "step 1 of 3"), (2.0, 3.0, "step 2 of 3"), (3.0, 3.0, "step 3 of 3")],
    ]
    assert len(legacy_progress) == 3  # progress rides the request's own response stream, even stateless


def test_legacy_set_level_filters_log_messages(run):
    async def scenario() -> list[str]:
        user = ScriptedUser()
        async with user.client(build_assistant_server(), "legacy") as client:
            await client.set_logging_level("warning")
            await client.call_tool("log_levels", {})
        return [level for level, _ in user.logs]

    assert run(scenario) == ["warning", "error"]


def test_served_by_name_like_the_others():
    assert "assistant" in SERVER_NAMES
    refused = subprocess.run(
        [*PYTHON_M, "--server", "assistant", "--transport", "stdio", "--token", "t" * 32],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
    )
    assert refused.returncode == 2 and "--token protects an HTTP server" in refused.stderr
