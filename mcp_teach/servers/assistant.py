"""The assistant MCP server: tools that need something back from the client, in both protocol eras.

Every tool here stops in the middle to ask the client for something (the user's answer, the host's LLM, its
roots) or sends something on its own while it runs (progress, log messages, a change of its tool list). Run it
with ``python -m mcp_teach.serve --server assistant``. Lesson 09 writes :func:`ask_client`, :func:`elicit_form`
and the tools without state (``convert_length``, ``summarize_text``, ``list_client_roots``, ``count_slowly``,
``log_levels``) in its cells; the tools that keep state per server (notes, the job board, the listen bus, the
``requestState`` already used) are made by :func:`build_assistant_server`.

Which feature works where (S = stdio, SSE = HTTP+SSE (deprecated), H = streamable HTTP with sessions,
HL = stateless streamable HTTP):

===================  ==========================================  ==========================================
feature              2025-11-25 (legacy)                         2026-07-28 (modern)
===================  ==========================================  ==========================================
elicitation          S, SSE, H: ``elicitation/create``           S, H, HL: ``input_required`` + retry
sampling             S, SSE, H: ``sampling/createMessage``       S, H, HL: ``input_required`` (deprecated)
roots                S, SSE, H: ``roots/list``                   S, H, HL: ``input_required`` (deprecated)
progress             S, SSE, H, HL: ``notifications/progress``   S, H, HL: same, on the request's stream
cancellation         S, SSE, H: ``notifications/cancelled``      S: ``notifications/cancelled``; H: the
                                                                 client closes the POST's stream instead
logging              S, SSE, H: every level, or from             S, H, HL: only for requests whose ``_meta``
                     ``logging/setLevel``'s level up             has ``io.modelcontextprotocol/logLevel``
list changes         S, SSE, H: ``notifications/tools/           S, H: only on a ``subscriptions/listen``
                     list_changed`` on the calling request's     stream the client opened; HL: the tool is
                     stream                                      added, a listen stream on another worker
                                                                 does not hear of it
===================  ==========================================  ==========================================

Why not elsewhere: stateless streamable HTTP keeps no session, so a 2025-11-25 server has no channel for a
request of its own (here the tool says so); 2026-07-28 needs none. On 2026-07-28 stdio "the server MUST NOT write
JSON-RPC requests to stdout" (basic/transports/stdio), and :func:`ask_client` never tries. fastmcp 4 has no
``ctx.sample`` or ``ctx.list_roots`` (and its ``ctx.elicit`` raises on 2026-07-28): this module builds the
requests itself.
"""

from __future__ import annotations

import json
import math
import secrets
import time
import warnings
from typing import Any

import anyio
import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from mcp.server.request_state import RequestStateSecurity
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_teach.servers.explained_errors import ExplainingFastMCP
from mcp_teach.servers.listen_limits import serve_listen

SERVER_NAME = "mcp-teach-assistant"
#: Fixed by the package, not by fastmcp, so captured ``serverInfo`` stays stable.
SERVER_VERSION = "1.0.0"
SERVER_INSTRUCTIONS = (
    "Tools that need the client: they ask the user (elicitation), the host's model (sampling) or for roots, "
    "report progress, can be cancelled, log, and add a tool at run time."
)

#: Metres per unit, for ``convert_length``.
UNITS = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "mi": 1609.344}
#: The notes ``delete_note`` can delete (each server starts with these).
NOTES = {"groceries": "Milk, bread, coffee.", "ideas": "A lesson on sampling.", "todo": "Write the tests first."}
#: The levels ``log_levels`` logs at, lowest first (RFC 5424, as in server/utilities/logging).
LOG_LEVELS: tuple[mcp_types.LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error")
#: The name of the tool ``add_shout_tool`` adds.
ADDED_TOOL = "shout"
#: Longest a slow tool may be asked to run, and most steps ``count_slowly`` counts.
MAX_SECONDS = 60.0
MAX_STEPS = 100
#: How long a sealed ``requestState`` stays valid (the SDK's default is 600 s): "a short expiry (TTL)"
#: (2026-07-28, basic/patterns/mrtr), long enough for a user to answer a form.
STATE_TTL = 300.0
#: What a replayed ``requestState`` is answered with (a tool error: the spec says "reject", not how).
STATE_USED = "This requestState was used already: call delete_note again to be asked again."

# ctx.log() calls the SDK's send_log_message, which warns that logging is deprecated in 2026-07-28 on every
# first call; this server serves logging on purpose (and says so in log_levels' description).
warnings.filterwarnings(
    "ignore", "The logging capability is deprecated", MCPDeprecationWarning, module="fastmcp.server.context"
)

InputResponse = mcp_types.ElicitResult | mcp_types.CreateMessageResult | mcp_types.ListRootsResult


def is_modern(ctx: Context) -> bool:
    """True on a 2026-07-28 request (no session, no server requests), False on a 2025-11-25 one."""
    rc = ctx.request_context
    return rc is not None and rc.protocol_version in MODERN_PROTOCOL_VERSIONS


# --- asking the client: one request object, two envelopes ---------------------------------------------------

#: Request -> (the client capability it needs, its result type, how a fastmcp client declares that capability).
_KINDS: dict[type, tuple[str, type[Any], str]] = {
    mcp_types.ElicitRequest: ("elicitation", mcp_types.ElicitResult, "Client(..., elicitation_handler=...)"),
    mcp_types.CreateMessageRequest: ("sampling", mcp_types.CreateMessageResult, "Client(..., sampling_handler=...)"),
    mcp_types.ListRootsRequest: ("roots", mcp_types.ListRootsResult, "Client(..., roots=[...])"),
}


def answerable(ctx: Context, request: mcp_types.InputRequest, *more: mcp_types.InputRequest) -> type[Any]:
    """The result type of ``request``, once sure this client can answer it (and every request in ``more``); else
    the error each era prescribes.

    2026-07-28: a request needing an undeclared capability gets -32021 ``MissingRequiredClientCapability`` whose
    ``data.requiredCapabilities`` lists every missing one (basic/index), which fastmcp sends as a JSON-RPC error.
    2025-11-25 has no such code: a tool error. A stateless 2025-11-25 server has no channel for a request of its
    own: a tool error too.
    """
    kinds = {asked.method: _KINDS[type(asked)] for asked in (request, *more)}
    modern = is_modern(ctx)
    if not modern and not ctx.session.can_send_request:
        raise ToolError(
            f"This connection cannot carry {request.method}: a stateless 2025-11-25 server keeps no session, so "
            "it has no channel for requests of its own. Connect to a server with sessions, or speak 2026-07-28."
        )
    missing = {
        method: (name, how)
        for method, (name, _, how) in kinds.items()
        if not ctx.session.check_client_capability(mcp_types.ClientCapabilities.model_validate({name: {}}))
    }
    if missing:
        needs = ", ".join(f"{name} (fastmcp: {how})" for name, how in missing.values())
        message = f"This tool needs the client to answer {', '.join(missing)}: the client declared no {needs}."
        if modern:
            capability = mcp_types.ClientCapabilities.model_validate({name: {} for name, _ in missing.values()})
            data = mcp_types.MissingRequiredClientCapabilityErrorData(required_capabilities=capability)
            required = data.model_dump(by_alias=True, mode="json", exclude_none=True)
            raise MCPError(MISSING_REQUIRED_CLIENT_CAPABILITY, message, required)
        raise ToolError(message)
    return kinds[request.method][1]


def elicit_form(message: str, properties: dict[str, Any], required: list[str]) -> mcp_types.ElicitRequest:
    """An ``elicitation/create`` request in form mode: flat properties of primitive types (client/elicitation)."""
    schema = {"type": "object", "properties": properties, "required": required}
    return mcp_types.ElicitRequest(params=mcp_types.ElicitRequestFormParams(message=message, requested_schema=schema))


async def ask_client(
    ctx: Context, key: str, request: mcp_types.InputRequest, *, state: str | None = None
) -> InputResponse | mcp_types.InputRequiredResult:
    """The client's answer to ``request``, or (2026-07-28, first round) the ``InputRequiredResult`` to return."""
    result_type = answerable(ctx, request)  # a tool error, or -32021, if the client cannot answer
    if not is_modern(ctx):
        # 2025-11-25: a request of the server's own, sent while the client's tools/call is still open.
        related = ServerMessageMetadata(related_request_id=ctx.request_id)
        return await ctx.session.send_request(request, result_type, metadata=related)
    answers = ctx.input_responses or {}
    if key in answers and ctx.request_state == state:
        # 2026-07-28, the retry: the answer came inside the call, next to the echoed requestState.
        return result_type.model_validate(answers[key].model_dump(by_alias=True, exclude_unset=True))
    # 2026-07-28, the first round: no request of our own, but a result that asks.
    return mcp_types.InputRequiredResult(input_requests={key: request}, request_state=state)


# --- the tools without state (written in lesson 09) ------------------------------------------------------------


def check_length(value: float, *units: str | None) -> None:
    """A tool error for a value that is not a finite number or a unit that is not in :data:`UNITS`."""
    if not math.isfinite(value):
        raise ToolError(f"The value must be a finite number, got {value}.")
    for unit in units:
        if unit is not None and unit not in UNITS:
            raise ToolError(f"Unknown unit {unit!r}: use one of {', '.join(UNITS)}.")


async def convert_length(
    value: float, ctx: Context, from_unit: str = "m", to_unit: str | None = None
) -> str | mcp_types.InputRequiredResult:
    """Elicitation, a choice: convert a length; without ``to_unit`` the server asks the user which unit."""
    check_length(value, from_unit, to_unit)
    if to_unit is None:
        unit = {"type": "string", "title": "Target unit", "description": "The unit to convert to.", "enum": list(UNITS)}
        request = elicit_form(f"Convert {value:g} {from_unit} to which unit?", {"unit": unit}, ["unit"])
        answer = await ask_client(ctx, "unit", request)
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer  # 2026-07-28, first round: the question is the call's result
        if answer.action == "decline":
            return "Not converted: you declined to choose a unit."
        if answer.action == "cancel":
            return "Not converted: the question was cancelled."
        to_unit = str((answer.content or {}).get("unit"))
        check_length(value, to_unit)  # what a client sends is input like any other
    return f"{value:g} {from_unit} = {value * UNITS[from_unit] / UNITS[to_unit]:.6g} {to_unit}"


async def summarize_text(text: str, ctx: Context, max_words: int = 20) -> str | mcp_types.InputRequiredResult:
    """Sampling: ask the client's LLM to summarize ``text``. The server has no model of its own."""
    if not text.strip() or not 1 <= max_words <= 200:
        raise ToolError(f"Give a non-empty text and 1 <= max_words <= 200 (got {max_words}).")
    prompt = mcp_types.TextContent(type="text", text=f"Summarize in at most {max_words} words:\n\n{text}")
    request = mcp_types.CreateMessageRequest(
        params=mcp_types.CreateMessageRequestParams(
            messages=[mcp_types.SamplingMessage(role="user", content=prompt)],
            system_prompt="You write short, plain summaries.",
            max_tokens=4 * max_words,
        )
    )
    answer = await ask_client(ctx, "summary", request)
    if isinstance(answer, mcp_types.InputRequiredResult):
        return answer
    said = answer.content.text if isinstance(answer.content, mcp_types.TextContent) else "[not text]"
    return f"Summary by {answer.model}: {said}"


async def list_client_roots(ctx: Context) -> list[dict[str, str]] | mcp_types.InputRequiredResult:
    """Roots: ask the client which directories it lets the server work in."""
    answer = await ask_client(ctx, "roots", mcp_types.ListRootsRequest())
    if isinstance(answer, mcp_types.InputRequiredResult):
        return answer
    return [{"uri": str(root.uri), "name": root.name or ""} for root in answer.roots]


async def count_slowly(ctx: Context, n: int = 5, delay: float = 0.05) -> str:
    """Progress: count to ``n``, one step every ``delay`` seconds, reporting each step."""
    if not 1 <= n <= MAX_STEPS or not 0 <= delay <= 1:
        raise ToolError(f"Use 1 <= n <= {MAX_STEPS} and 0 <= delay <= 1 (seconds), got n={n}, delay={delay}.")
    for step in range(1, n + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(step, n, f"step {step} of {n}")  # sent only if the request has a progressToken
    return f"Counted to {n}."


async def log_levels(ctx: Context) -> str:
    """Logging: send one log message at each of debug, info, notice, warning and error."""
    for level in LOG_LEVELS:
        await ctx.log(f"{level}, from log_levels", level=level, logger_name="assistant")
    return f"Logged at {', '.join(LOG_LEVELS)}; the client receives those its level lets through."


# --- the tools with state, made per server ------------------------------------------------------------------


async def announce_tools_changed(ctx: Context, bus: InMemorySubscriptionBus) -> None:
    """Tell clients the tool list changed: 2025-11-25 with ``notifications/tools/list_changed`` on the calling
    request's stream, 2026-07-28 with an event on the server's ``subscriptions/listen`` bus."""
    if is_modern(ctx):
        await bus.publish(ToolsListChanged())
    else:
        await ctx.send_notification(mcp_types.ToolListChangedNotification())


def shout(text: str) -> str:
    """Say ``text`` loudly (the tool ``add_shout_tool`` adds at run time)."""
    return text.upper() + "!"


def build_assistant_server() -> FastMCP:
    """Create a fresh assistant server: its own notes, job board, ``subscriptions/listen`` bus and state key."""
    # requestState (2026-07-28) is sealed by the mcp SDK's RequestStateBoundary, which fastmcp installs: AES-GCM
    # under a key made here for this server alone, an expiry, the method, the tool and a digest of its arguments,
    # all checked on the way back in (-32602 if any fails). Single use is this server's part (``spent``): a tool
    # error, as fastmcp makes of any error a tool raises (-32021 alone passes through).
    security = RequestStateSecurity.ephemeral(ttl=STATE_TTL)
    server = ExplainingFastMCP(
        SERVER_NAME, instructions=SERVER_INSTRUCTIONS, version=SERVER_VERSION, request_state_security=security
    )
    # What this server remembers: its notes, its running slow calls (request id -> tool), the listen bus, and the
    # asks whose answer was used (ask id -> when its state expires anyway; forgotten after that).
    notes = dict(NOTES)
    running: dict[str, str] = {}
    finished = {"completed": 0, "cancelled": 0}
    bus = InMemorySubscriptionBus()
    spent: dict[str, float] = {}

    def unspent(state: str | None) -> str | None:
        """The ask id in an echoed (SDK-verified) state; a tool error if its answer was used already. A replay is
        refused before anything else, so an old consent can never delete a later note of the same name."""
        if state is None:
            return None
        now = time.time()
        for ask in [ask for ask, until in spent.items() if until <= now]:
            del spent[ask]
        ask = str(json.loads(state)["ask"])
        if ask in spent:
            raise ToolError(STATE_USED)
        return ask

    async def delete_note(note_id: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Elicitation, a confirmation: delete a note only once the user confirms (a boolean field).
        ``requestState`` (2026-07-28) carries which note was asked about and a one-time ask id."""
        echoed = ctx.request_state if is_modern(ctx) else None  # the plaintext the SDK unsealed and verified
        ask = unspent(echoed)  # a tool error if this ask was answered already: checked before anything else
        if note_id not in notes:
            raise ToolError(f"Unknown note {note_id!r}: the notes are {', '.join(sorted(notes)) or 'none left'}.")
        confirm = {"type": "boolean", "title": "Delete it?", "description": "Tick to delete.", "default": False}
        request = elicit_form(f"Delete the note {note_id!r}? This cannot be undone.", {"confirm": confirm}, ["confirm"])
        if echoed is not None and json.loads(echoed)["delete"] == note_id:
            state = echoed  # the retry: the same state, so ask_client takes the answer
        else:
            state = json.dumps({"delete": note_id, "ask": secrets.token_urlsafe(8)})  # a new ask
        answer = await ask_client(ctx, "confirm", request, state=state)
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        if ask is not None:
            spent[ask] = time.time() + STATE_TTL  # this answer is used: its state is spent
        if answer.action == "accept" and (answer.content or {}).get("confirm") is True:
            del notes[note_id]
            return f"Deleted the note {note_id!r}."
        reason = {"accept": "you did not confirm", "decline": "you declined", "cancel": "the question was cancelled"}
        return f"Kept the note {note_id!r}: {reason[answer.action]}."

    async def list_notes() -> list[str]:
        """The ids of the notes still there (to see what ``delete_note`` did)."""
        return sorted(notes)

    async def wait_for(ctx: Context, seconds: float = 10.0) -> str:
        """Cancellation: wait ``seconds``, long enough to be cancelled. A cancelled call is answered with
        nothing (spec: the receiver SHOULD NOT respond) and leaves no job behind (see ``active_jobs``)."""
        if not 0 <= seconds <= MAX_SECONDS:
            raise ToolError(f"seconds must be between 0 and {MAX_SECONDS:g}, got {seconds}.")
        job = ctx.request_id
        running[job] = "wait_for"
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            finished["cancelled"] += 1
            raise
        finally:
            running.pop(job, None)
        finished["completed"] += 1
        return f"Waited {seconds:g} s."

    async def active_jobs() -> dict[str, Any]:
        """The slow calls still running (request id -> tool) and how many completed or were cancelled."""
        return {"running": dict(running), **finished}

    async def add_shout_tool(ctx: Context) -> str:
        """Change notifications: add the tool ``shout`` at run time and tell clients the tool list changed
        (2025-11-25: ``notifications/tools/list_changed``; 2026-07-28: an event on ``subscriptions/listen``)."""
        if any(tool.name == ADDED_TOOL for tool in await server.list_tools()):
            return f"The tool {ADDED_TOOL!r} is already there."
        server.tool(shout)
        await announce_tools_changed(ctx, bus)
        return f"Added the tool {ADDED_TOOL!r}: list the tools again to see it."

    tools = [
        convert_length, delete_note, list_notes, summarize_text, list_client_roots, count_slowly, wait_for, active_jobs,
        log_levels, add_shout_tool,
    ]  # fmt: skip
    for function in tools:
        server.tool(function, output_schema=None)
    # The mcp SDK's listen handler, fed by this server's bus. With it the 2026-07-28 capabilities say
    # tools.listChanged (derived from whether listen is served).
    serve_listen(server, ListenHandler(bus))
    return server
