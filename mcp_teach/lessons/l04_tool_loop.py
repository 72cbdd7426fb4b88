"""Reading a tool-loop trace the way lesson 04 does: phases, a four-lane diagram, tool_call -> tools/call.

A :class:`~mcp_teach.llm.trace.Trace` holds every message between user, client,
LLM and server. These helpers group the events into the phases of the loop,
draw them as a sequence diagram in plain text, and pair each ``tool_call`` of
the model with the MCP ``tools/call`` that executed it::

    result = await ask("What is 1 + 2?", client, llm, model=model, since=0)
    diagram(result.trace)
    show_phase(result.trace, "execution", fold=["params._meta"])
    tool_call_table(result.trace)
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from mcp_teach.display.show import MessagesView, show_trace, table
from mcp_teach.llm.trace import ACTORS, Trace, TraceEvent, short
from mcp_teach.wire.messages import json_or_none
from mcp_teach.wire.plain_text import PlainText

#: The phase names :func:`phases` gives, in loop order, with what happens in each.
PHASES: dict[str, str] = {
    "question": "the user asks the client",
    "connect": "1 the client connects: initialize handshake or server/discover",
    "discovery": "2 tools/list: which tools the server has",
    "decision": "3 the client sends the conversation and the tools; the model answers with tool_calls",
    "execution": "4 each tool_call becomes one MCP tools/call",
    "feeding back": '5 the results go back to the model as role "tool" messages',
    "answer": "the model answers in text; the client passes the answer on",
}
CONNECT_METHODS = frozenset({"initialize", "notifications/initialized", "server/discover"})
#: The phase of an MCP message by its method (a response's: its request's); any other method is ``discovery``.
MCP_PHASES = {**dict.fromkeys(CONNECT_METHODS, "connect"), "tools/call": "execution"}


def _method(event: TraceEvent, requests: dict[Any, str]) -> str | None:
    """The JSON-RPC method of a message, or for a response the method of its request."""
    payload = event.payload if isinstance(event.payload, dict) else {}
    return payload["method"] if "method" in payload else requests.get(payload.get("id"))


def _reply(event: TraceEvent) -> dict[str, Any]:
    """``choices[0].message`` of an ``llm-response`` event."""
    return (event.payload.get("choices") or [{}])[0].get("message") or {}


def phases(trace: Trace) -> list[str]:
    """The phase (a key of :data:`PHASES`) of every event, in trace order.

    MCP messages belong to ``connect``, ``discovery`` or ``execution`` by their
    method (a response by the method of its request). The first ``llm-request``
    asks for the ``decision``; later ones carry tool results (``feeding back``).
    An ``llm-response`` with ``tool_calls`` is a ``decision``, one without is the
    ``answer``.
    """
    requests: dict[Any, str] = {}
    names, llm_requests = [], 0
    for event in trace:
        if event.kind == "jsonrpc":
            method = _method(event, requests)
            if event.sender == "client" and "id" in event.payload and method:
                requests[event.payload["id"]] = method
            names.append(MCP_PHASES.get(method, "discovery"))
        elif event.kind == "llm-request":
            llm_requests += 1
            names.append("decision" if llm_requests == 1 else "feeding back")
        elif event.kind == "llm-response":
            names.append("decision" if _reply(event).get("tool_calls") else "answer")
        else:
            names.append("question" if event.kind == "question" else "answer")
    return names


def show_phase(trace: Trace, *names: str, **options: Any) -> MessagesView:
    """:func:`~mcp_teach.display.show.show_trace` for the events of some phases, numbered as in the whole trace.

    ``options`` are those of ``show_trace`` (``fold``, ``max_items``, ``title``).
    """
    if unknown := [name for name in names if name not in PHASES]:
        raise ValueError(f"unknown phase {unknown[0]!r}; phases are: {', '.join(PHASES)}")
    keep = [phase in names for phase in phases(trace)]
    # show_trace numbers events by their place in the trace and filters by kind: hiding the other
    # events under a kind nobody asks for keeps every number as it is in the whole trace.
    marked = Trace([e if k else dataclasses.replace(e, kind="(hidden)") for e, k in zip(trace, keep, strict=True)])
    kinds = sorted({event.kind for event, k in zip(trace, keep, strict=True) if k})
    return show_trace(marked, kinds=kinds, **options)


@dataclass(frozen=True, repr=False)
class Diagram(PlainText):
    """A sequence diagram in plain text (what :func:`diagram` returns); prints as itself in Jupyter."""

    lines: str

    def text(self) -> str:
        return self.lines


def diagram(trace: Trace, *, lane_width: int = 10, label_width: int = 60) -> Diagram:
    """One line per event, one lane per actor (user, client, llm, server), an arrow from sender to receiver.

    ASCII only, so the lanes stay aligned in any font. An arrow between client
    and server passes over the llm lane: the model never talks to the server.
    """
    phase_width = max(len(name) for name in PHASES)
    number_width = len(str(len(trace))) + 1
    centre = {actor: lane_width // 2 + index * lane_width for index, actor in enumerate(ACTORS)}
    width = lane_width * len(ACTORS)
    header = "".join(actor.center(lane_width) for actor in ACTORS)
    lines = [f"{'':{number_width}}  {'phase':{phase_width}}  {header}"]
    for number, (event, phase) in enumerate(zip(trace, phases(trace), strict=True), start=1):
        row = [" "] * width
        for x in centre.values():
            row[x] = "|"
        start, end = centre[event.sender], centre[event.receiver]
        low, high = sorted((start, end))
        row[low + 1 : high] = "-" * (high - low - 1)
        row[end - 1 if end > start else end + 1] = ">" if end > start else "<"
        label = short(" ".join(event.label.split()), label_width)
        lines.append(f"{'#' + str(number):>{number_width}}  {phase:{phase_width}}  {''.join(row)}  {label}")
    return Diagram("\n".join(line.rstrip() for line in lines))


@dataclass
class ToolCallExchange:
    """One tool call followed through the loop: model -> client -> server -> client -> model."""

    #: The round (1 = the first chat-completions request) whose response asked for the call.
    round: int
    #: The entry of ``choices[0].message.tool_calls``: ``{"id", "type", "function": {"name", "arguments"}}``.
    tool_call: dict[str, Any]
    #: The MCP ``tools/call`` request that executed it; ``None`` if the client could not send one
    #: (its arguments were not a JSON object).
    request: dict[str, Any] | None = None
    #: The JSON-RPC response to ``request``.
    response: dict[str, Any] | None = None
    #: The ``role: "tool"`` message that answered the call in the next request to the model;
    #: ``None`` if there was no next request (the round limit stopped the loop).
    tool_message: dict[str, Any] | None = None


def _requested(call: dict[str, Any]) -> tuple[Any, Any]:
    """The tool name and the arguments a ``tool_call`` asks for (``None``: its arguments are not JSON)."""
    function = call["function"]
    return function.get("name"), json_or_none(function.get("arguments") or "{}")


def tool_call_exchanges(trace: Trace) -> list[ToolCallExchange]:
    """Every ``tool_call`` of the trace with its ``tools/call`` request, response and ``tool`` message.

    A ``tools/call`` is paired with the first call still waiting that has the
    same name and arguments; a response with its request by JSON-RPC id; a
    ``tool`` message with its call by ``tool_call_id``.
    """
    exchanges: list[ToolCallExchange] = []
    by_request_id: dict[Any, ToolCallExchange] = {}
    rounds = 0
    for event in trace:
        payload = event.payload
        if event.kind == "llm-request":
            rounds += 1
            answers = {m.get("tool_call_id"): m for m in payload.get("messages", []) if m.get("role") == "tool"}
            for exchange in exchanges:
                if exchange.tool_message is None:
                    exchange.tool_message = answers.get(exchange.tool_call.get("id"))
        elif event.kind == "llm-response":
            exchanges += [ToolCallExchange(rounds, call) for call in _reply(event).get("tool_calls") or []]
        elif event.kind == "jsonrpc" and event.sender == "client" and payload.get("method") == "tools/call":
            params = payload.get("params") or {}
            asked = (params.get("name"), params.get("arguments"))
            waiting = (e for e in exchanges if e.request is None and e.tool_message is None)
            if exchange := next((e for e in waiting if _requested(e.tool_call) == asked), None):
                exchange.request = payload
                by_request_id[payload.get("id")] = exchange
        elif event.kind == "jsonrpc" and event.sender == "server" and payload.get("id") in by_request_id:
            by_request_id[payload["id"]].response = payload
    return exchanges


def tool_call_table(trace: Trace) -> Any:
    """Decision -> execution: each ``tool_call`` next to the ``tools/call`` request made from it."""
    rows = []
    for exchange in tool_call_exchanges(trace):
        call, function, request = exchange.tool_call, exchange.tool_call["function"], exchange.request or {}
        params = request.get("params") or {}
        arguments = json.dumps(function.get("arguments"), ensure_ascii=False)
        sent = json.dumps(params["arguments"], ensure_ascii=False) if "arguments" in params else ""
        rows.append(
            [exchange.round, call.get("id"), function.get("name"), arguments, request.get("id", "(not sent)"), sent]
        )
    header = ["round", "tool_call id", "function.name = params.name", "function.arguments (a string)"]
    return table([*header, "JSON-RPC id", "params.arguments (an object)"], rows)
