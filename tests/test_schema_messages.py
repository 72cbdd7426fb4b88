"""Every JSON-RPC message the course shows is valid against the schema of its protocol era.

The schemas are the specification's own ``schema.json`` of 2025-11-25 and 2026-07-28, copied unchanged into
``tests/schema/`` (``tests/schema/README.md`` says from where).

**Where the messages are found.** In every solved lesson (``notebooks/solutions/NN_*.ipynb``, stored outputs of a
real run): the ``text/plain`` twin of every ``show``/``show_trace``/explorer view (the ``text/html`` one if an output
has no plain text with a message), the HTML of the explorer widget's state in the notebook's metadata, printed
JSON lines and HTTP views (``stream`` outputs, bytes reprs decoded), error outputs, the markdown cells' examples,
and the one table that lists replies field by field (lesson 03's bad-input table, read back into error responses).
A message is any JSON object with a ``"jsonrpc"`` member; abbreviations (``{… 3 keys}``, ``[… 2 items]``,
``… 2 more``, a bare ``…``) and lines cut at ``…`` are parsed leniently and validated as far as they are shown
(``schema_messages_support``).

**How each message's era is decided**, first rule that applies:

1. the version the message names: ``params._meta["io.modelcontextprotocol/protocolVersion"]`` (2026-07-28's
   per-request envelope), ``params.protocolVersion`` of ``initialize``, ``protocolVersion`` of its result;
   ``server/discover`` and a result with ``resultType`` or ``supportedVersions`` are 2026-07-28's;
2. the version the request it answers names (the request with its id, sent the other way, earlier in the same
   output: the capture shown);
3. an era written beside it in the output (``2025-11-25: {...}``);
4. the ``MCP-Protocol-Version`` header of its HTTP exchange, where the view shows it;
5. the era the other messages of the same output name, if they agree;
6. :data:`CELL_ERAS`: the lesson's context, read from the cell (``mode="legacy"``, a connection the lesson says is
   of one era).

A version up to 2025-11-25 is checked against 2025-11-25, a later one (also an unknown one like ``2099-01-01``, sent
in 2026-07-28's envelope) against 2026-07-28. A message no rule places fails the test. The live captures are of a
known era: the client's mode (``legacy``: 2025-11-25; ``auto`` on an in-memory connection: 2026-07-28), which the
test checks against rule 1.

**Which definition.** A request by its method in the ``ClientRequest`` or ``ServerRequest`` union (by direction),
a notification in ``ClientNotification``/``ServerNotification``, a result by the request it answers (2026-07-28:
``<Name>ResultResponse``; 2025-11-25: ``<Name>Result``, ``EmptyResult`` for ping and the like; ``ServerResult``/
``ClientResult`` if the request is not shown and not in :data:`ANSWERED`), an error by ``JSONRPCErrorResponse`` and
the schema's definition for its code (``ParseError``, ``UnsupportedProtocolVersionError``, ...).

**Live traffic.** Every course server (calculator, also paged; the low-level calculator; knowledge; assistant; notes;
workspace; untrusted, also the rug pull) in memory in both eras through ``CaptureTransport``: every tool, resource,
template, prompt and completion once, ``ping``/``logging/setLevel`` (2025-11-25), ``subscriptions/listen``
(2026-07-28), a cancelled call, an unknown tool, resource and prompt; :data:`EXERCISED` says what must have crossed.
Then the calculator over streamable HTTP (both eras) and SSE behind a class token, six requests POSTed by hand that
the HTTP layer refuses itself, and lesson 03's nine bad lines replayed to a fresh calculator.

Invalid messages are listed, keyed by (lesson, cell, what) or ("live", "<server> <era>", what): :data:`ON_PURPOSE`
(shown or sent invalid by the lesson, with its words) and :data:`SPEC_CONFLICTS` (where the specification
contradicts itself and the course's server takes one side, which a lesson names). Anything else invalid fails,
printing where, the message, the definition, the instance path, the schema path and the validator's message; so does
an entry that no longer matches.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from fastmcp.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from schema_messages_support import (
    CLIENT_TO_SERVER,
    LEGACY,
    MODERN,
    SERVER_TO_CLIENT,
    UNREAD,
    Folded,
    PartialDict,
    Shown,
    decide_era,
    describe,
    era_of,
    era_schema,
    find_json_objects,
    is_partial,
    lesson_messages,
    message_kind,
    plain,
    protocol_version_of,
    validate_message,
)
from support import HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.wire.capture import CaptureTransport

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))

#: (lesson, cell) -> (era, why): rule 6, for outputs whose messages do not say their era.
CELL_ERAS: dict[tuple[str, str], tuple[str, str]] = {
    ("00", "b768566d"): (LEGACY, "the exercise's stdio session starts with initialize (its step 1)"),
    ("00", "347187d5"): (LEGACY, "an initialize of 2025-11-25 piped into the stdio server"),
    ("01", "c7d7f7fa"): (MODERN, "RawMemoryServer: server/discover first, so the connection speaks 2026-07-28"),
    ("02", "2b7dd08d"): (LEGACY, 'teaching_client(legacy, mode="legacy")'),
    ("03", "2afd1aec"): (
        MODERN,
        'the replies of b9075e90: "here 2026-07-28, so every request must carry the envelope"',
    ),
    ("03", "732694a2"): (LEGACY, 'teaching_client(legacy, mode="legacy")'),
    ("05", "e2d8bd18"): (MODERN, "a server/discover with the 2026-07-28 META envelope"),
    ("05", "0bb3b5bd"): (LEGACY, "the initialize of 2025-11-25 posted over SSE"),
    ("05", "d8c3c8d5"): (LEGACY, "the same initialize posted over streamable HTTP"),
    ("05", "59a8ba6d"): (MODERN, "teaching_client(capture) on streamable HTTP: mode auto, 2026-07-28"),
    ("05", "32a52726"): (LEGACY, '"talks streamable HTTP in the 2025-11-25 era"'),
    ("07", "5bd402a7"): (MODERN, "teaching_client(completing): mode auto, in memory"),
    ("07", "100d8e32"): (MODERN, "teaching_client(modern_watch): mode auto, in memory, subscriptions/listen"),
    ("07", "2ff59ae9"): (MODERN, "the listen stream of modern_watch (100d8e32)"),
    ("07", "cb07c8fc"): (MODERN, "teaching_client(closing): mode auto, in memory, subscriptions/listen"),
    ("07", "a689026b"): (LEGACY, 'teaching_client(legacy_watch, mode="legacy", ...): resources/subscribe'),
    ("09", "l09-12"): (LEGACY, 'legacy_elicit: teaching_client(..., mode="legacy") in l09-11'),
    ("09", "l09-28"): (LEGACY, 'teaching_client(legacy_sample, mode="legacy")'),
    ("09", "l09-32"): (LEGACY, 'teaching_client(legacy_roots, mode="legacy")'),
    ("09", "l09-37"): (MODERN, "progress_capture: teaching_client(progress_capture, progress_handler=...), mode auto"),
    ("09", "l09-39"): (MODERN, 'shows cancelled["auto"]'),
    ("09", "l09-43"): (LEGACY, 'shows logged["legacy"] (logging/setLevel is handshake-era only)'),
    ("09", "l09-47"): (MODERN, "teaching_client(modern_change): mode auto, subscriptions/listen"),
    ("09", "b41d6f2e"): (LEGACY, 'teaching_client(legacy_url, mode="legacy", ...): URL-mode elicitation/create'),
    ("09", "fc5e5471"): (MODERN, "teaching_client(unequipped): mode auto, in memory; -32021 is 2026-07-28's"),
    ("09", "613af6d2"): (MODERN, "teaching_client(sealed, ...): mode auto, in memory; requestState is 2026-07-28's"),
    ("12", "85d03b57"): (MODERN, "attack_host connects with teaching_client(c): mode auto, in memory"),
    ("12", "333d2ada"): (MODERN, "teaching_client(rug): mode auto, in memory, subscriptions/listen"),
    ("14", "8ece983c"): (LEGACY, "MCP Inspector's recorded session: each connection starts with initialize"),
}

#: (lesson, cell, what) -> the method a response answers whose request the output does not show.
ANSWERED: dict[tuple[str, str, str], str] = {
    ("00", "347187d5", "response id=1"): "initialize",  # request = json.dumps({..., "method": "initialize", ...})
    ("09", "l09-16", "response id=2"): "tools/call",  # answer = modern_elicit.capture.response_to(first tools/call)
    ("05", "0bb3b5bd", "response id=1"): "initialize",  # posted = await http.post(..., json=initialize)
    ("05", "d8c3c8d5", "response id=1"): "initialize",  # opened = await http.post(url, json=initialize, ...)
    ("08", "658ff46b", "error -32603 id=2"): "tools/call",  # the last message after call_tool("knowledge_search")
    ("08", "658ff46b", "error 0 id=2"): "tools/call",
}

#: Shown invalid on purpose: (lesson, cell, what) -> the lesson's reason, in its words.
ON_PURPOSE: dict[tuple[str, str, str], str] = {
    ("03", "2afd1aec", "error -32700 id=null"): (
        'line 5, not JSON: "the server could not read the `id` and answered `"id": null`" (JSON-RPC 2.0); '
        '"`"id": null` is where the specification disagrees with itself ... `"id": null` fails `schema.json`" '
        "(ee8dfb90)"
    ),
    ("03", "2afd1aec", "error -32600 id=null"): (
        'line 7, a batch: "-32600 for a *batch*, `"id": null`" — the same contradiction (ee8dfb90)'
    ),
}

#: Lesson 03's nine hand-written lines (cell b9075e90), replayed live: the malformed ones are malformed on purpose.
RAW = ("live", f"raw-calculator {MODERN}")
ON_PURPOSE.update(
    {
        (*RAW, "request tools/multiply id=2"): 'b9075e90: "a method MCP does not have"',
        (*RAW, "request tools/call id=3"): 'b9075e90: "no tool name"',
        (*RAW, "request tools/call id=4"): 'b9075e90: "no _meta envelope"',
        (*RAW, "request tools/list id=6"): 'b9075e90: "JSON, but not JSON-RPC 2.0"',
        (*RAW, "notification tools/call id=-"): 'b9075e90: "no id: a notification"',
    }
)

#: The calculator over streamable HTTP with a class token, spoken to by hand (test_live_http_traffic_is_valid).
HTTP = ("live", f"http-calculator {MODERN}")

#: Invalid by one side of a contradiction in the specification: (lesson, cell, what) or ("live", "<server> <era>",
#: what) -> the conflict. JSON-RPC 2.0 (section 5) wants ``"id": null`` for an id that could not be read; MCP's
#: schema.ts types ``JSONRPCErrorResponse.id`` as an optional string or number, and basic/index (Error Responses, both
#: revisions) lets it be left out. The course's server follows JSON-RPC 2.0, as the mcp SDK does: lesson 03 (Going
#: deeper A) and lesson 05 (Parse errors and their id) show both places and say why.
SPEC_CONFLICTS: dict[tuple[str, str, str], str] = {
    (*RAW, "error -32700 id=null"): (
        "the course's server answers an unreadable line with JSON-RPC 2.0's "
        '"id": null, which schema.json\'s JSONRPCErrorResponse.id (optional RequestId: string|integer) rejects'
    ),
    (*RAW, "error -32600 id=null"): 'the same for a batch: "id": null fails JSONRPCErrorResponse.id of schema.json',
    (*HTTP, "error -32700 id=null"): 'the same over HTTP: a POST body that is not JSON gets "id": null',
    (*HTTP, "error 401 id=null"): (
        'the same for the class token\'s 401 (class_token._unauthorized: "id null: the request was not read")'
    ),
}


# --- the solved lessons -------------------------------------------------------------------------------------------


def _shown() -> list[Shown]:
    found: list[Shown] = []
    for path in LESSONS:
        found += lesson_messages(path)
    found += _table_replies()
    decide_era(found, CELL_ERAS)
    return found


def _table_replies() -> list[Shown]:
    """Lesson 03's table of replies to ten hand-written lines (cell 2afd1aec), read back into error responses.

    Its columns: line, reply, id (``json.dumps`` of the reply's id, ``(absent)`` if none), code, message or text.
    """
    path = next(p for p in LESSONS if p.name.startswith("03_"))
    cell = next(c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c.get("id") == "2afd1aec")
    text = "".join(cell["outputs"][0]["data"]["text/plain"])
    lines = text.splitlines()
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    header = [lines[0][a:b].strip() for a, b in spans]
    assert header[:4] == ["line", "reply", "id", "code"], header
    found = []
    for line in lines[2:]:
        row = [line[a:b].strip() for a, b in spans[:-1]] + [line[spans[-1][0] :].strip()]
        if row[1] != "protocol error":
            continue
        reply: dict[str, Any] = PartialDict(jsonrpc="2.0")  # the table shows these fields, not the whole line
        if row[2] != "(absent)":
            reply["id"] = json.loads(row[2])
        reply["error"] = PartialDict(code=int(row[3]), message=row[4])
        found.append(Shown("03", "2afd1aec", "table", 0, reply, False, SERVER_TO_CLIENT))
    assert len(found) == 7, "lesson 03's table of replies changed: update _table_replies"
    return found


def _verdict(wire: Shown) -> Any:
    answered = ANSWERED.get(wire.key()) or wire.answers
    return validate_message(wire.message, wire.era, wire.direction, wire.request, answered)


def _report(where: str, message: Any, era: str, problems: list[Any]) -> str:
    text = json.dumps(plain(message), ensure_ascii=False)
    shown = " [abbreviated or cut: checked as far as shown]" if is_partial(message) else ""
    lines = [f"{where} ({era}){shown}: {text if len(text) <= 700 else text[:700] + ' …'}"]
    lines += [f"    {problem}" for problem in problems[:6]]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def shown() -> list[Shown]:
    return _shown()


def test_every_lesson_that_shows_json_rpc_is_read(shown: list[Shown]) -> None:
    """Every ``"jsonrpc": "2.0"`` in an output lies in a message that was read; a lesson that shows JSON-RPC yields
    messages. A view the reader cannot parse fails here, not silently."""
    assert not UNREAD, "JSON-RPC the reader could not parse:\n" + "\n".join(map(str, UNREAD))
    per_lesson = {path.name[:2]: 0 for path in LESSONS}
    for wire in shown:
        per_lesson[wire.lesson] += 1
    for path in LESSONS:
        outputs = json.dumps([c.get("outputs", []) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]])
        if '\\"jsonrpc\\"' in outputs:
            assert per_lesson[path.name[:2]], f"{path.name} shows JSON-RPC but no message was read from it"
    assert sum(per_lesson.values()) >= 70, per_lesson


def test_every_shown_message_has_an_era(shown: list[Shown]) -> None:
    unplaced = [f"{w.lesson} {w.cell} {describe(w.message)}" for w in shown if w.era is None]
    assert not unplaced, "no rule decides the era of (add the cell to CELL_ERAS):\n" + "\n".join(unplaced)
    stale = set(CELL_ERAS) - {(w.lesson, w.cell) for w in shown}
    assert not stale, f"CELL_ERAS names cells that show no message: {sorted(stale)}"


def test_every_shown_message_is_valid_for_its_era(shown: list[Shown]) -> None:
    listed = {**ON_PURPOSE, **SPEC_CONFLICTS}
    unexpected, seen_invalid = [], set()
    for wire in shown:
        if wire.era is None:
            continue
        verdict = _verdict(wire)
        if verdict.valid:
            continue
        seen_invalid.add(wire.key())
        if wire.key() not in listed:
            where = f"lesson {wire.lesson}, cell {wire.cell}, {wire.source} output {wire.output}"
            unexpected.append(_report(where, wire.message, wire.era, verdict.problems))
    assert not unexpected, "messages that fail their schema:\n" + "\n".join(unexpected)
    stale = {key for key in listed if key[0] != "live"} - seen_invalid
    assert not stale, f"listed as invalid but valid now (or no longer shown): {sorted(stale)}"


def test_the_on_purpose_list_says_why() -> None:
    for key, reason in {**ON_PURPOSE, **SPEC_CONFLICTS}.items():
        assert len(key) == 3 and all(key) and len(reason) > 20, key


# --- the course servers, live ---------------------------------------------------------------------------------

MODES = {LEGACY: "legacy", MODERN: "auto"}


def _calculator_args() -> dict[str, dict[str, Any]]:
    return {f"calculator_{op}": {"a": 6, "b": 3} for op in ("add", "subtract", "multiply", "divide")}


def _servers(folder: Path) -> dict[str, tuple[Callable[[], Any], dict[str, dict[str, Any]]]]:
    """name -> (what CaptureTransport wraps, built fresh per connection; arguments for its tools)."""
    from mcp_teach.lessons.l08_connect import LowLevelMemoryTransport
    from mcp_teach.servers.assistant import NOTES, build_assistant_server
    from mcp_teach.servers.calculator import build_calculator_server
    from mcp_teach.servers.knowledge import build_knowledge_server
    from mcp_teach.servers.notes import build_notes_server
    from mcp_teach.servers.untrusted import build_untrusted_server
    from mcp_teach.servers.workspace import NOTES_NAME, build_workspace_server, make_workspace

    def notes() -> Any:
        (folder / "notes").mkdir(exist_ok=True)
        return build_notes_server(notes_dir=folder / "notes")

    def workspace() -> Any:
        return build_workspace_server(make_workspace(folder / "workspace"))

    return {
        "calculator": (build_calculator_server, _calculator_args()),
        "calculator-paged": (lambda: build_calculator_server(list_page_size=2), _calculator_args()),
        "lowlevel-calculator": (LowLevelMemoryTransport, _calculator_args()),
        "knowledge": (
            build_knowledge_server,
            {"search_documents": {"query": "session", "top_k": 2}, "get_document": {"doc_id": "tools"}},
        ),
        "assistant": (
            build_assistant_server,
            {
                "convert_length": {"value": 1500},
                "delete_note": {"note_id": sorted(NOTES)[0]},
                "summarize_text": {"text": "A server can ask the client for input.", "max_words": 5},
                "count_slowly": {"n": 2, "delay": 0},
                "wait_for": {"seconds": 0},
            },
        ),
        "notes": (
            notes,
            {
                "save_note": {"title": "schema", "content": "checked"},
                "read_note": {"note_id": "schema"},
                "delete_note": {"note_id": "schema"},
            },
        ),
        "workspace": (workspace, {"read_file": {"path": NOTES_NAME}, "delete_file": {"path": NOTES_NAME}}),
        "untrusted": (build_untrusted_server, {"get_fact": {"topic": "mcp"}, "add": {"a": 2, "b": 3}}),
        "untrusted-rug-pull": (
            lambda: build_untrusted_server(rug_pull=True),
            {"get_fact": {"topic": "mcp"}, "add": {"a": 2, "b": 3}},
        ),
    }


def _sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Values for the required properties of a tool's ``inputSchema`` (a tool the table above does not know)."""
    samples = {"string": "x", "number": 1, "integer": 1, "boolean": False, "array": [], "object": {}}
    properties = schema.get("properties", {})
    return {name: samples.get(properties.get(name, {}).get("type"), "x") for name in schema.get("required", [])}


async def _elicit(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
    return {"unit": "km"} if "unit" in json.dumps(getattr(params, "requested_schema", {}) or {}) else {"confirm": True}


async def _sample(messages: Any, params: Any, context: Any) -> str:
    return "a short summary"


async def _ignore(*args: Any) -> None:
    return None


async def _quietly(call: Any) -> Any:
    """Await ``call``; a JSON-RPC error or a tool error is part of what is exercised (its message is validated)."""
    with contextlib.suppress(MCPError, ToolError):
        return await call
    return None


async def _exercise(
    name: str, target: Any, arguments: dict[str, dict[str, Any]], era: str, token: str | None = None
) -> list[Any]:
    """Connect in ``era``, use every tool, resource, template and prompt once, and a few errors; the capture."""
    capture = target if isinstance(target, CaptureTransport) else CaptureTransport(target)
    handlers: dict[str, Any] = {"auth": token} if token else {}
    handlers |= {
        "elicitation_handler": _elicit,
        "sampling_handler": _sample,
        "roots": ["file:///home/student/project"],
        "log_handler": _ignore,
        "progress_handler": _ignore,
    }
    with warnings.catch_warnings(action="ignore"):
        async with teaching_client(capture, mode=MODES[era], **handlers) as client:
            if era == LEGACY:
                await _quietly(client.ping())
                await _quietly(client.set_logging_level("warning"))
            tools = await client.list_tools()
            for tool in tools:
                args = arguments.get(tool.name, _sample_arguments(tool.input_schema))
                if tool.name == "add_shout_tool" and era == MODERN:
                    await _listen_while(client, tool.name)
                    continue
                await _quietly(client.call_tool(tool.name, args, raise_on_error=False))
            await _quietly(client.call_tool("no_such_tool", {}))  # an unknown tool: a protocol error
            if any(tool.name == "wait_for" for tool in tools):  # a cancelled call: notifications/cancelled
                with anyio.move_on_after(0.1):
                    await _quietly(client.call_tool("wait_for", {"seconds": 5}))
            resources = await _quietly(client.list_resources()) or []
            for resource in resources:
                await _quietly(client.read_resource(resource.uri))
            for template in await _quietly(client.list_resource_templates()) or []:
                uri = re.sub(r"\{[^}]+\}", "tools", template.uri_template)
                await _quietly(client.read_resource(uri))
                ref = mcp_types.ResourceTemplateReference(type="ref/resource", uri=template.uri_template)
                variable = re.search(r"\{([^}]+)\}", template.uri_template)
                if variable:
                    await _quietly(client.complete(ref, {"name": variable.group(1), "value": "t"}))
            if resources:
                await _quietly(client.read_resource("docs://no-such-document"))  # an unknown resource
            prompts = await _quietly(client.list_prompts()) or []
            for prompt in prompts:
                values = {"doc_id": "tools", "style": "bullet"}
                args = {a.name: values.get(a.name, "x") for a in prompt.arguments or [] if a.required}
                await _quietly(client.get_prompt(prompt.name, args))
            if prompts:
                await _quietly(client.get_prompt("no_such_prompt", {}))  # an unknown prompt
    return list(capture.capture)


async def _listen_while(client: Any, tool: str) -> None:
    """2026-07-28: open ``subscriptions/listen``, call ``tool`` (it changes the tool list), await the event."""
    from mcp.client.subscriptions import listen

    async with listen(client.session, tools_list_changed=True) as subscription:
        await client.call_tool(tool, {})
        with anyio.fail_after(HANG_TIMEOUT):
            await subscription.__anext__()


def _validate_capture(name: str, era: str, wires: list[Any]) -> tuple[int, list[str]]:
    """Validate a live capture in ``era``: (messages checked, reports of those invalid and not listed)."""
    failures = []
    requests: dict[tuple[str, Any], dict[str, Any]] = {}
    for wire in wires:
        message = wire.message
        named = era_of(protocol_version_of(message))
        if named and named != era:
            failures.append(f"{name} {era}: {describe(message)} names {protocol_version_of(message)}")
        if message_kind(message) == "request":
            requests[(wire.direction, message.get("id"))] = message
        answered = None
        if message_kind(message) in ("response", "error"):
            other = SERVER_TO_CLIENT if wire.direction == CLIENT_TO_SERVER else CLIENT_TO_SERVER
            answered = requests.get((other, message.get("id")))
        verdict = validate_message(message, era, wire.direction, answered)
        key = ("live", f"{name} {era}", describe(message))
        if not verdict.valid and key not in SPEC_CONFLICTS and key not in ON_PURPOSE:
            failures.append(_report(f"live {name} ({wire.direction})", message, era, verdict.problems))
    return len(wires), failures


#: What the exercise must have produced in each era, so that a broken exercise cannot pass by sending little.
EXERCISED = {
    LEGACY: {
        *("initialize", "notifications/initialized", "ping", "logging/setLevel", "tools/list", "tools/call"),
        *("resources/list", "resources/read", "resources/templates/list", "completion/complete", "prompts/list"),
        *("prompts/get", "elicitation/create", "sampling/createMessage", "roots/list", "notifications/progress"),
        *("notifications/message", "notifications/cancelled", "notifications/tools/list_changed", "(error)"),
    },
    MODERN: {
        *("server/discover", "tools/list", "tools/call", "resources/list", "resources/read", "prompts/get"),
        *("resources/templates/list", "completion/complete", "prompts/list", "subscriptions/listen"),
        *("notifications/subscriptions/acknowledged", "notifications/tools/list_changed", "notifications/progress"),
        *("notifications/message", "notifications/cancelled", "(error)", "(input_required)"),
    },
}


def _labels(wires: list[Any]) -> set[str]:
    labels = set()
    for wire in wires:
        message = wire.message
        result = message.get("result")
        labels.add(
            message.get("method")
            or ("(error)" if "error" in message else "")
            or ("(input_required)" if isinstance(result, dict) and result.get("resultType") == "input_required" else "")
        )
    return labels


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_live_traffic_of_every_course_server_is_valid(era: str, run: Callable[..., Any], tmp_path: Path) -> None:
    async def main() -> tuple[dict[str, int], list[str], set[str]]:
        counts, failures, labels = {}, [], set()
        for name, (build, arguments) in _servers(tmp_path).items():
            wires = await _exercise(name, build(), arguments, era)
            counts[name], problems = _validate_capture(name, era, wires)
            failures += problems
            labels |= _labels(wires)
        return counts, failures, labels

    counts, failures, labels = run(main)
    assert not failures, f"live messages that fail the {era} schema:\n" + "\n".join(failures)
    assert EXERCISED[era] <= labels, f"not exercised in {era}: {sorted(EXERCISED[era] - labels)}"
    print(f"{era}: {sum(counts.values())} live messages validated: {counts}")


def test_lesson_03s_bad_lines_replayed_live(run: Callable[..., Any]) -> None:
    """The nine lines of lesson 03 (b9075e90) sent to a fresh calculator in memory, read as the stdio server reads
    them (``RawMemoryServer``): every reply the course's server builds for bad input, validated."""
    from mcp_teach.wire.raw_memory import RawMemoryServer
    from mcp_teach.wire.raw_requests import raw_request

    add = {"name": "calculator_add", "arguments": {"a": 2, "b": 3}}
    lines = [
        raw_request(1, "tools/call", add),
        raw_request(2, "tools/multiply", {"name": "calculator_multiply"}),
        raw_request(3, "tools/call", {"arguments": {"a": 2, "b": 3}}),
        raw_request(4, "tools/call", add, envelope=False),
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/list"',
        raw_request(6, "tools/list", jsonrpc=None),
        '[{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}]',
        raw_request(None, "tools/call", add),
        raw_request(9, "tools/call", add),
    ]

    async def main() -> list[Any]:
        async with RawMemoryServer() as server:
            for line in lines:
                await server.exchange(line)
        return [wire for wire in server.capture if "raw" not in wire.message]  # {"raw": line}: not JSON-RPC

    wires = run(main)
    assert len(wires) == 15, [describe(w.message) for w in wires]
    _, failures = _validate_capture(RAW[1].split()[0], MODERN, wires)
    assert not failures, "live messages that fail the 2026-07-28 schema:\n" + "\n".join(failures)
    stale = {key for key in {**ON_PURPOSE, **SPEC_CONFLICTS} if key[:2] == RAW} - {
        (*RAW, describe(w.message)) for w in wires if not validate_message(w.message, MODERN, w.direction).valid
    }
    assert not stale, f"listed as invalid but valid now: {sorted(stale)}"


TOKEN = "schema-test-token-5Jq8Vw2Rx"  # made up for this test
HTTP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def test_live_http_traffic_is_valid(run: Callable[..., Any]) -> None:
    """The calculator over streamable HTTP (both eras) and SSE (2025-11-25), behind a class token, through
    ``CaptureTransport``; then requests POSTed by hand that the course's HTTP layer refuses itself."""
    from mcp_teach.transports.in_process import serve_http

    auth = {"authorization": f"Bearer {TOKEN}"}
    modern = {**HTTP_HEADERS, **auth, "mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
    by_hand = [  # (body, headers): what each probes
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, HTTP_HEADERS),  # no token: 401
        ({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, {**HTTP_HEADERS, **auth}),  # no version header
        (
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": ENVELOPE}},
            {**modern, "mcp-protocol-version": LEGACY},  # the header disagrees with _meta
        ),
        (
            {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": ENVELOPE}},
            {**modern, "mcp-method": "tools/call"},  # Mcp-Method disagrees with the body
        ),
        ({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": ENVELOPE}}, modern),  # correct
        ('{"jsonrpc": "2.0", "id": 6, "method"', modern),  # not JSON
    ]

    async def main() -> tuple[list[str], list[Any]]:
        import httpx2

        failures, replies = [], []
        async with serve_http("streamable-http", token=TOKEN) as url:
            for era in (LEGACY, MODERN):
                wires = await _exercise("http-calculator", CaptureTransport(url), _calculator_args(), era, TOKEN)
                count, problems = _validate_capture("http-calculator", era, wires)
                failures += problems
                print(f"streamable HTTP {era}: {count} live messages validated")
            async with httpx2.AsyncClient() as http:
                for body, headers in by_hand:
                    content = body if isinstance(body, str) else json.dumps(body)
                    answer = await http.post(url, content=content, headers=headers)
                    replies += [value for *_, value, _cut in find_json_objects(answer.text)]
        async with serve_http("sse", token=TOKEN) as url:
            wires = await _exercise("sse-calculator", CaptureTransport(url), _calculator_args(), LEGACY, TOKEN)
            count, problems = _validate_capture("sse-calculator", LEGACY, wires)
            failures += problems
            print(f"SSE {LEGACY}: {count} live messages validated")
        return failures, replies

    failures, replies = run(main)
    assert not failures, "live messages that fail their schema:\n" + "\n".join(failures)
    assert [message_kind(r) for r in replies] == ["error"] * 4 + ["response", "error"], replies
    invalid = set()
    for reply in replies:
        verdict = validate_message(reply, MODERN, SERVER_TO_CLIENT, answered_method="tools/list")
        if not verdict.valid:
            invalid.add((*HTTP, describe(reply)))
            if (*HTTP, describe(reply)) not in SPEC_CONFLICTS:
                failures.append(_report("live http-calculator (by hand)", reply, MODERN, verdict.problems))
    assert not failures, "replies that fail the 2026-07-28 schema:\n" + "\n".join(failures)
    stale = {key for key in SPEC_CONFLICTS if key[:2] == HTTP} - invalid
    assert not stale, f"listed as invalid but valid now: {sorted(stale)}"


# --- the test can fail ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_a_tools_call_without_a_name_is_reported(era: str) -> None:
    params: dict[str, Any] = {"arguments": {"a": 1, "b": 2}}
    if era == MODERN:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    verdict = validate_message(request, era, CLIENT_TO_SERVER)
    assert "CallToolRequest" in verdict.definitions
    assert any("'name' is a required property" in p.message for p in verdict.problems), verdict.problems
    request["params"]["name"] = "calculator_add"
    assert validate_message(request, era, CLIENT_TO_SERVER).valid


def test_other_invalid_messages_are_reported() -> None:
    null_id = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert any("None is not of type" in p.message for p in validate_message(null_id, MODERN, SERVER_TO_CLIENT).problems)
    no_result_type = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [], "ttlMs": 0, "cacheScope": "private"}}
    problems = validate_message(no_result_type, MODERN, SERVER_TO_CLIENT, answered_method="tools/list").problems
    assert any("'resultType' is a required property" in p.message for p in problems), problems
    legacy_only = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert validate_message(legacy_only, LEGACY, CLIENT_TO_SERVER).valid
    assert not validate_message(legacy_only, MODERN, CLIENT_TO_SERVER).valid
    server_request = {"jsonrpc": "2.0", "id": 1, "method": "roots/list"}
    assert validate_message(server_request, LEGACY, SERVER_TO_CLIENT).valid
    assert not validate_message(server_request, MODERN, SERVER_TO_CLIENT).valid  # 2026-07-28: no ServerRequest
    bad_version = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version"}}
    problems = validate_message(bad_version, MODERN, SERVER_TO_CLIENT).problems
    assert any(p.definition == "UnsupportedProtocolVersionError" for p in problems), problems


def test_folded_and_cut_messages_are_checked_as_far_as_shown() -> None:
    view = """#3 client → server  tools/list  (request id=2)
    {
      "jsonrpc": "2.0",
      "id": 2,
      "method": "tools/list",
      "params": {
        "_meta": {… 4 keys}
      }
    }
#4 server → client  result of #3 tools/list  (response id=2)
    {
      "jsonrpc": "2.0",
      "id": 2,
      "result": {"cacheScope": "private", "resultType": "complete", "tools": [{… 6 keys}, … 3 more], "ttlMs": …}
    }
client->server  {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilitie…
"""
    found = list(find_json_objects(view))
    assert [describe(value) for *_, value, _cut in found] == [
        "request tools/list id=2",
        "response id=2",
        "request initialize id=1",
    ]
    (_, _, request, _), (_, _, response, _), (_, _, cut, was_cut) = found
    assert isinstance(request["params"]["_meta"], Folded)
    assert validate_message(request, MODERN, CLIENT_TO_SERVER).valid
    assert validate_message(response, MODERN, SERVER_TO_CLIENT, answered_method="tools/list").valid
    assert was_cut and validate_message(cut, LEGACY, CLIENT_TO_SERVER).valid
    wrong = {**response, "result": {**response["result"], "ttlMs": -1}}
    assert not validate_message(wrong, MODERN, SERVER_TO_CLIENT, answered_method="tools/list").valid


def test_the_schemas_are_the_published_ones() -> None:
    """The copies are those tests/schema/README.md names (their SHA-256): unchanged."""
    readme = (ROOT / "tests" / "schema" / "README.md").read_text(encoding="utf-8")
    for era in (LEGACY, MODERN):
        digest = hashlib.sha256((ROOT / "tests" / "schema" / era / "schema.json").read_bytes()).hexdigest()
        assert f"{digest}  {era}/schema.json" in readme, f"tests/schema/{era}/schema.json was changed"
        schema = era_schema(era)
        assert schema.schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert "tools/call" in schema.requests[CLIENT_TO_SERVER]
    assert "initialize" in era_schema(LEGACY).requests[CLIENT_TO_SERVER]
    assert "server/discover" in era_schema(MODERN).requests[CLIENT_TO_SERVER]
    assert "initialize" not in era_schema(MODERN).requests[CLIENT_TO_SERVER]
