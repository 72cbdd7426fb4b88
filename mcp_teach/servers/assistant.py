"""The assistant MCP server: tools that need something back from the client, in both protocol eras.

Every tool here stops in the middle to ask the client for something (the user's answer, the host's LLM, its
roots) or sends something on its own while it runs (progress, log messages, a change of its tool list). Run it
with ``python -m mcp_teach.server --server assistant``; lesson 09 captures each tool on the wire.

How the server asks, in each era (spec 2025-11-25 client/*; 2026-07-28 basic/patterns/mrtr):

- **2025-11-25** (``initialize`` handshake): the server sends its own JSON-RPC request (``elicitation/create``,
  ``sampling/createMessage``, ``roots/list``) while the client's ``tools/call`` is still open; the client
  answers it, and the call completes with one result.
- **2026-07-28** (``server/discover``, no session): the server sends no requests. ``tools/call`` answers
  ``{"resultType": "input_required", "inputRequests": {key: <the same request>}, "requestState": ...}``; the
  client fulfils each request and sends ``tools/call`` again with ``inputResponses`` (same keys) and the
  ``requestState`` echoed. fastmcp seals ``requestState`` with a per-process key (so it is opaque and changes
  from run to run on the wire) and hands the tool the plaintext in ``ctx.request_state``.

:func:`ask_client` is the one place that does either, with the same request object in both: a tool calls it
and returns what it returns when that is an ``InputRequiredResult``.

Which feature works where (S = stdio, SSE, H = streamable HTTP with sessions, HL = stateless streamable HTTP):

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

Why not elsewhere: stateless streamable HTTP (``--stateless``, the large-class mode) keeps no session, so a
2025-11-25 server has no channel for a request of its own (the SDK raises ``NoBackChannelError``; here the
tool says so); 2026-07-28 needs none. On 2026-07-28 stdio "the server MUST NOT write JSON-RPC requests to
stdout" (basic/transports/stdio): the mcp SDK's loop refuses them, and :func:`ask_client` never tries. Sampling,
roots and logging are deprecated in 2026-07-28 (deprecated.mdx, SEP-2577) but still served. fastmcp 4 has no
``ctx.sample`` or ``ctx.list_roots`` (and its ``ctx.elicit`` raises on 2026-07-28): this module builds the
requests itself.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_teach.servers.explained_errors import ExplainingFastMCP

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
NOTES = {
    "groceries": "Milk, bread, coffee.",
    "ideas": "A lesson on sampling.",
    "todo": "Write the tests first.",
}
#: The levels ``log_levels`` logs at, lowest first (RFC 5424, as in server/utilities/logging).
LOG_LEVELS: tuple[mcp_types.LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error")
#: The name of the tool ``add_shout_tool`` adds.
ADDED_TOOL = "shout"
#: Longest a slow tool may be asked to run, and most steps ``count_slowly`` counts.
MAX_SECONDS = 60.0
MAX_STEPS = 100

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

#: Request -> (the capability the client must declare, its result type, what to tell a client without it).
_KINDS: dict[type, tuple[mcp_types.ClientCapabilities, type[Any], str]] = {
    mcp_types.ElicitRequest: (
        mcp_types.ClientCapabilities(elicitation=mcp_types.ElicitationCapability()),
        mcp_types.ElicitResult,
        "elicitation (fastmcp: Client(..., elicitation_handler=...))",
    ),
    mcp_types.CreateMessageRequest: (
        mcp_types.ClientCapabilities(sampling=mcp_types.SamplingCapability()),
        mcp_types.CreateMessageResult,
        "sampling (fastmcp: Client(..., sampling_handler=...))",
    ),
    mcp_types.ListRootsRequest: (
        mcp_types.ClientCapabilities(roots=mcp_types.RootsCapability()),
        mcp_types.ListRootsResult,
        "roots (fastmcp: Client(..., roots=[...]))",
    ),
}


async def ask_client(
    ctx: Context, key: str, request: mcp_types.InputRequest, *, state: str | None = None
) -> InputResponse | mcp_types.InputRequiredResult:
    """The client's answer to ``request``, or (2026-07-28, first round) the ``InputRequiredResult`` to return.

    2025-11-25: sends ``request`` as a JSON-RPC request of the server's own on the calling request's stream
    and waits for the answer. 2026-07-28: on the first round returns ``InputRequiredResult`` with
    ``inputRequests = {key: request}`` and ``requestState = state``; on the retry returns
    ``inputResponses[key]``. A client that did not declare the capability gets a tool error saying which.
    """
    capability, result_type, needs = _KINDS[type(request)]
    modern = is_modern(ctx)
    if not modern and not ctx.session.can_send_request:
        raise ToolError(
            f"This connection cannot carry {request.method}: a stateless 2025-11-25 server keeps no session, so "
            "it has no channel for requests of its own. Connect to a server with sessions, or speak 2026-07-28."
        )
    if not ctx.session.check_client_capability(capability):
        raise ToolError(f"This tool needs the client to answer {request.method}: the client declared no {needs}.")
    if not modern:
        return await ctx.session.send_request(
            request, result_type, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
        )
    responses = ctx.input_responses or {}
    if key in responses and ctx.request_state == state:
        answer = responses[key]
        if not isinstance(answer, result_type):  # the SDK parsed it as another member of the union
            answer = result_type.model_validate(answer.model_dump(by_alias=True, exclude_unset=True))
        return answer
    return mcp_types.InputRequiredResult(input_requests={key: request}, request_state=state)


def elicit_form(message: str, properties: dict[str, Any], required: list[str]) -> mcp_types.ElicitRequest:
    """An ``elicitation/create`` request in form mode: flat properties of primitive types (client/elicitation)."""
    schema = {"type": "object", "properties": properties, "required": required}
    return mcp_types.ElicitRequest(params=mcp_types.ElicitRequestFormParams(message=message, requested_schema=schema))


# --- the tools ------------------------------------------------------------------------------------------------


@dataclass
class _State:
    """What one server instance remembers: its notes, its running slow calls, the listen bus."""

    notes: dict[str, str] = field(default_factory=lambda: dict(NOTES))
    running: dict[str, str] = field(default_factory=dict)  # request id -> tool
    finished: dict[str, int] = field(default_factory=lambda: {"completed": 0, "cancelled": 0})
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)


def _unit_request(value: float, from_unit: str) -> mcp_types.ElicitRequest:
    unit = {"type": "string", "title": "Target unit", "description": "The unit to convert to.", "enum": list(UNITS)}
    return elicit_form(f"Convert {value:g} {from_unit} to which unit?", {"unit": unit}, ["unit"])


def _check_unit(unit: str, argument: str) -> None:
    if unit not in UNITS:
        raise ToolError(f"Unknown unit {unit!r} for {argument}: use one of {', '.join(UNITS)}.")


def _tools(server: FastMCP, state: _State) -> list[Callable[..., Awaitable[Any]]]:
    async def convert_length(
        value: float, ctx: Context, from_unit: str = "m", to_unit: str | None = None
    ) -> str | mcp_types.InputRequiredResult:
        """Elicitation, a choice: convert a length; without ``to_unit`` the server asks the user which unit
        (a ``requestedSchema`` with an ``enum``). Accept converts, decline and cancel convert nothing."""
        _check_unit(from_unit, "from_unit")
        if not math.isfinite(value):
            raise ToolError(f"The value must be a finite number, got {value}.")
        if to_unit is None:
            answer = await ask_client(ctx, "unit", _unit_request(value, from_unit))
            if isinstance(answer, mcp_types.InputRequiredResult):
                return answer
            if answer.action == "decline":
                return "Not converted: you declined to choose a unit."
            if answer.action == "cancel":
                return "Not converted: the question was cancelled."
            to_unit = str((answer.content or {}).get("unit", ""))
        _check_unit(to_unit, "to_unit")
        return f"{value:g} {from_unit} = {value * UNITS[from_unit] / UNITS[to_unit]:.6g} {to_unit}"

    async def delete_note(note_id: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Elicitation, a confirmation: delete a note only once the user confirms (a boolean field).
        ``requestState`` (2026-07-28) carries which note was asked about, so an answer is applied to it alone."""
        if note_id not in state.notes:
            known = ", ".join(sorted(state.notes)) or "none left"
            raise ToolError(f"Unknown note {note_id!r}: the notes are {known}.")
        confirm = {"type": "boolean", "title": "Delete it?", "description": "Tick to delete.", "default": False}
        request = elicit_form(f"Delete the note {note_id!r}? This cannot be undone.", {"confirm": confirm}, ["confirm"])
        answer = await ask_client(ctx, "confirm", request, state=json.dumps({"delete": note_id}))
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        if answer.action == "accept" and (answer.content or {}).get("confirm") is True:
            del state.notes[note_id]
            return f"Deleted the note {note_id!r}."
        reason = {"accept": "you did not confirm", "decline": "you declined", "cancel": "the question was cancelled"}
        return f"Kept the note {note_id!r}: {reason[answer.action]}."

    async def list_notes() -> list[str]:
        """The ids of the notes still there (to see what ``delete_note`` did)."""
        return sorted(state.notes)

    async def summarize_text(text: str, ctx: Context, max_words: int = 20) -> str | mcp_types.InputRequiredResult:
        """Sampling: ask the client's LLM to summarize ``text`` (``sampling/createMessage`` in 2025-11-25, an
        ``input_required`` request in 2026-07-28, where sampling is deprecated). The server has no model."""
        if not text.strip():
            raise ToolError("There is nothing to summarize: 'text' is empty.")
        if not 1 <= max_words <= 200:
            raise ToolError(f"max_words must be between 1 and 200, got {max_words}.")
        request = mcp_types.CreateMessageRequest(
            params=mcp_types.CreateMessageRequestParams(
                messages=[
                    mcp_types.SamplingMessage(
                        role="user",
                        content=mcp_types.TextContent(
                            type="text", text=f"Summarize in at most {max_words} words:\n\n{text}"
                        ),
                    )
                ],
                system_prompt="You write short, plain summaries.",
                max_tokens=4 * max_words,
            )
        )
        answer = await ask_client(ctx, "summary", request)
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        content = answer.content
        said = content.text if isinstance(content, mcp_types.TextContent) else f"[{content.type} content]"
        return f"Summary by {answer.model}: {said}"

    async def list_client_roots(ctx: Context) -> list[dict[str, str]] | mcp_types.InputRequiredResult:
        """Roots: ask the client which directories it lets the server work in (``roots/list``; deprecated in
        2026-07-28, where it is an ``input_required`` request)."""
        answer = await ask_client(ctx, "roots", mcp_types.ListRootsRequest())
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        return [{"uri": str(root.uri), "name": root.name or ""} for root in answer.roots]

    async def _tracked(ctx: Context, tool: str, body: Callable[[], Awaitable[str]]) -> str:
        """Run ``body`` as a listed job; a cancelled one is counted and leaves nothing behind."""
        job = ctx.request_id
        state.running[job] = tool
        try:
            result = await body()
        except anyio.get_cancelled_exc_class():
            state.finished["cancelled"] += 1
            raise
        finally:
            state.running.pop(job, None)
        state.finished["completed"] += 1
        return result

    async def count_slowly(ctx: Context, n: int = 5, delay: float = 0.05) -> str:
        """Progress: count to ``n``, one step every ``delay`` seconds, sending ``notifications/progress``
        (progress = step, total = n) against the request's ``progressToken`` when it has one."""
        if not 1 <= n <= MAX_STEPS or not 0 <= delay <= 1:
            raise ToolError(f"Use 1 <= n <= {MAX_STEPS} and 0 <= delay <= 1 (seconds), got n={n}, delay={delay}.")

        async def body() -> str:
            for step in range(1, n + 1):
                await anyio.sleep(delay)
                await ctx.report_progress(step, n, f"step {step} of {n}")
            return f"Counted to {n}."

        return await _tracked(ctx, "count_slowly", body)

    async def wait_for(ctx: Context, seconds: float = 10.0) -> str:
        """Cancellation: wait ``seconds``, long enough to be cancelled. A cancelled call is answered with
        nothing (spec: the receiver SHOULD NOT respond) and leaves no job behind (see ``active_jobs``)."""
        if not 0 <= seconds <= MAX_SECONDS:
            raise ToolError(f"seconds must be between 0 and {MAX_SECONDS:g}, got {seconds}.")

        async def body() -> str:
            await anyio.sleep(seconds)
            return f"Waited {seconds:g} s."

        return await _tracked(ctx, "wait_for", body)

    async def active_jobs() -> dict[str, Any]:
        """The slow calls still running (request id -> tool) and how many completed or were cancelled."""
        return {"running": dict(state.running), **state.finished}

    async def log_levels(ctx: Context) -> str:
        """Logging: send one ``notifications/message`` at each of debug, info, notice, warning and error.
        2025-11-25: all of them, or those from ``logging/setLevel``'s level up. 2026-07-28: only those from the
        request's ``_meta`` ``io.modelcontextprotocol/logLevel`` up, and none without it."""
        for level in LOG_LEVELS:
            await ctx.log(f"a {level} message from log_levels", level=level, logger_name="assistant")
        return f"Logged at {', '.join(LOG_LEVELS)}; the client receives those its level lets through."

    async def add_shout_tool(ctx: Context) -> str:
        """Change notifications: add the tool ``shout`` at run time and tell clients the tool list changed
        (2025-11-25: ``notifications/tools/list_changed``; 2026-07-28: an event on ``subscriptions/listen``)."""
        if any(tool.name == ADDED_TOOL for tool in await server.list_tools()):
            return f"The tool {ADDED_TOOL!r} is already there."
        server.tool(shout)
        if is_modern(ctx):
            await state.bus.publish(ToolsListChanged())
        else:
            await ctx.send_notification(mcp_types.ToolListChangedNotification())
        return f"Added the tool {ADDED_TOOL!r}: list the tools again to see it."

    return [
        convert_length,
        delete_note,
        list_notes,
        summarize_text,
        list_client_roots,
        count_slowly,
        wait_for,
        active_jobs,
        log_levels,
        add_shout_tool,
    ]


def shout(text: str) -> str:
    """Say ``text`` loudly (the tool ``add_shout_tool`` adds at run time)."""
    return text.upper() + "!"


def build_assistant_server() -> FastMCP:
    """Create a fresh assistant server: its own notes, job board and ``subscriptions/listen`` bus."""
    server = ExplainingFastMCP(
        SERVER_NAME,
        instructions=SERVER_INSTRUCTIONS,
        version=SERVER_VERSION,
    )
    state = _State()
    for function in _tools(server, state):
        server.tool(function, output_schema=None)
    # fastmcp serves no subscriptions/listen: the mcp SDK's handler, fed by this server's bus. With it the
    # 2026-07-28 capabilities say tools.listChanged (derived from whether listen is served).
    server._mcp_server.add_request_handler(
        "subscriptions/listen", mcp_types.SubscriptionsListenRequestParams, ListenHandler(state.bus)
    )
    return server
