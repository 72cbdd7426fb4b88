"""Tell apart the ways a ``tools/call`` can go wrong, on the wire and in the Python client.

A call can fail at two levels:

- the **tool** fails: the server still sends a JSON-RPC *result*, with
  ``isError: true`` and the reason as text content (the model can read it and
  try again);
- the **protocol** fails: the server sends a JSON-RPC *error* with a numeric
  ``code`` (see :data:`mcp_teach.display.glossary.ERROR_CODES`), ``"id": null`` when
  it could not even read the request's id. Only a notification gets no reply.

:func:`probe_stdio` sends hand-written lines to a fresh stdio server and
tabulates what came back; :func:`attempt` and :func:`explain` do the same for
what ``fastmcp.Client`` returns or raises, and :func:`calls_table` puts the
``tools/call`` exchanges of a capture side by side::

    report = await probe_stdio([raw_request(1, "tools/list"), "{not json"])
    report            # one row per line: kind of reply, error code, text
    explain(await attempt(client.call_tool("calculator_divide", {"a": 1, "b": 0})))
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fastmcp.exceptions import ToolError
from mcp import MCPError

from mcp_teach.display.glossary import ERROR_CODES, code_range
from mcp_teach.display.show import table
from mcp_teach.wire.messages import Capture, WireMessage
from mcp_teach.wire.plain_text import PlainText
from mcp_teach.wire.raw_stdio import RawStdioServer

#: The protocol revision whose per-request ``_meta`` envelope :func:`raw_request` adds.
PROTOCOL_VERSION = "2026-07-28"
#: ``clientInfo`` of hand-written requests, so they are told apart from the course client.
RAW_CLIENT_INFO = {"name": "mcp-teach-raw", "version": "1.0.0"}

ReplyKind = Literal["result", "tool error", "protocol error", "no reply"]
_MISSING = object()


def envelope_meta() -> dict[str, Any]:
    """The ``_meta`` every 2026-07-28 request carries instead of an ``initialize`` handshake."""
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": dict(RAW_CLIENT_INFO),
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def raw_request(
    id: int | str | None,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    jsonrpc: str | None = "2.0",
    envelope: bool = True,
) -> dict[str, Any]:
    """A JSON-RPC request as a dict, ready for :class:`~mcp_teach.wire.raw_stdio.RawStdioServer`.

    ``envelope=True`` adds the 2026-07-28 ``_meta`` keys to ``params`` (a
    server in that era rejects requests without them); ``jsonrpc=None`` leaves
    the ``"jsonrpc"`` member out, ``id=None`` makes a notification.
    """
    message: dict[str, Any] = {} if jsonrpc is None else {"jsonrpc": jsonrpc}
    if id is not None:
        message["id"] = id
    message["method"] = method
    params = dict(params or {})
    if envelope:
        params["_meta"] = {**envelope_meta(), **params.get("_meta", {})}
    if params:
        message["params"] = params
    return message


def code_name(code: int | None) -> str:
    """``-32601`` → ``"Method not found"`` (the short name from JSON-RPC or MCP), ``""`` if the code has none."""
    meaning = ERROR_CODES.get(code) if code is not None else None
    return meaning.split(":", 1)[0] if meaning else ""


#: The `` [type=float_parsing, input_value='three', input_type=str]`` tail of a pydantic error line.
_PYDANTIC_DETAILS = re.compile(r" \[type=.*\]$")


def one_line(text: str, *, brief: bool = False) -> str:
    """A message squeezed onto one line.

    pydantic's multi-line validation errors become ``header: field: problem``;
    with ``brief=True`` only ``field: problem`` is kept (no header, no
    ``[type=..., input_value=...]`` details).
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("For further information visit")]
    if lines and re.fullmatch(r"\d+ validation errors? for .*", lines[0]) and len(lines) % 2 == 1:
        pairs = zip(lines[1::2], lines[2::2], strict=True)
        if brief:
            return "; ".join(f"{name}: {_PYDANTIC_DETAILS.sub('', problem)}" for name, problem in pairs)
        return f"{lines[0]}: " + "; ".join(f"{name}: {problem}" for name, problem in pairs)
    return " ".join(lines)


def _first_text(content: Sequence[Any]) -> str:
    for block in content:
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if isinstance(text, str):
            return one_line(text)
    return ""


@dataclass(frozen=True)
class ReplyOutcome:
    """What one line sent to the server produced, classified."""

    kind: ReplyKind
    #: The JSON-RPC error code (protocol errors only).
    code: int | None = None
    #: The error message, the tool's error text, or the result's first text content.
    text: str = ""

    @property
    def label(self) -> str:
        """``-32601 Method not found`` for a protocol error (a code without a name: its range), ``""`` otherwise."""
        if self.code is None:
            return ""
        return f"{self.code} {code_name(self.code) or f'({code_range(self.code)})'}"


def classify_reply(reply: dict[str, Any] | None) -> ReplyOutcome:
    """Sort a server reply (a JSON-RPC message dict, or ``None``) into result / tool error / protocol error / none."""
    if reply is None:
        return ReplyOutcome("no reply")
    if isinstance(reply.get("error"), dict):
        error = reply["error"]
        return ReplyOutcome("protocol error", error.get("code"), one_line(str(error.get("message", ""))))
    result = reply.get("result")
    if isinstance(result, dict):
        kind: ReplyKind = "tool error" if result.get("isError") is True else "result"
        return ReplyOutcome(kind, text=_first_text(result.get("content") or []))
    return ReplyOutcome("result", text=one_line(json.dumps(result)))


def _brief(line: dict[str, Any] | str) -> str:
    """The line as sent, with the (long, always identical) ``_meta`` envelope shown as ``…``."""
    if isinstance(line, str):
        return line
    params = line.get("params")
    if isinstance(params, dict) and "_meta" in params:
        line = {**line, "params": {**params, "_meta": "…"}}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


@dataclass(repr=False)
class Probe(PlainText):
    """What :func:`probe_stdio` sent and got back; shows itself as a table in a notebook."""

    sent: list[dict[str, Any] | str]
    replies: list[dict[str, Any] | None]
    #: Every line in both directions, for :func:`mcp_teach.display.show.show`.
    capture: Capture = field(default_factory=Capture)
    #: Where each line's messages (the line and its reply) start and end in :attr:`capture`.
    spans: list[tuple[int, int]] = field(default_factory=list)

    def lines(self, *numbers: int) -> list[WireMessage]:
        """The messages of the lines numbered ``numbers`` (1-based, as in the table): each line and its reply."""
        return [message for number in numbers for message in self.capture.messages[slice(*self.spans[number - 1])]]

    def outcomes(self) -> list[ReplyOutcome]:
        return [classify_reply(reply) for reply in self.replies]

    def table(self) -> Any:
        """One row per line sent: the line, the kind of reply, its error code and its text."""
        rows = [
            (f"#{number}", _brief(line), outcome.kind, outcome.label, outcome.text)
            for number, (line, outcome) in enumerate(zip(self.sent, self.outcomes(), strict=True), start=1)
        ]
        return table(("#", "line sent (_meta elided)", "reply", "code", "message or text"), rows)

    def text(self) -> str:
        return repr(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


async def probe_stdio(
    lines: Sequence[dict[str, Any] | str], *, wait: float = 2.0, first_wait: float = 30.0, quiet: float = 0.5
) -> Probe:
    """Send ``lines`` one at a time to a fresh stdio calculator server and record each reply.

    A dict is sent as JSON, a str exactly as written. After each line the
    server gets ``wait`` seconds to answer (``first_wait`` for the first line,
    which also covers the server's start-up); no line within that time counts
    as "no reply". A notification (a dict with a ``method`` and no ``id``) must
    get no answer, so the probe waits only ``quiet`` seconds after it: a
    server that broke the rule would answer at once, as it answers the
    requests. A reply must carry the id of the line just sent (or null); one
    that answers another line raises ``RuntimeError`` instead of being misfiled.
    """
    probe = Probe(list(lines), [])
    async with RawStdioServer() as server:
        probe.capture = server.capture
        for number, line in enumerate(probe.sent):
            start = len(server.capture.messages)
            await server.send(line)
            timeout = first_wait if number == 0 else quiet if _is_notification(line) else wait
            reply = await server.receive(timeout)
            if reply is not None and reply.get("id") not in (_line_id(line), None):
                raise RuntimeError(f"reply {reply!r} does not answer line {number + 1}: {line!r}")
            probe.replies.append(reply)
            probe.spans.append((start, len(server.capture.messages)))
    return probe


def _line_id(line: dict[str, Any] | str) -> Any:
    return line.get("id") if isinstance(line, dict) else None


def _is_notification(line: dict[str, Any] | str) -> bool:
    return isinstance(line, dict) and "method" in line and "id" not in line


def calls_table(capture: Any) -> Any:
    """One row per ``tools/call`` in ``capture`` (a Capture or CaptureTransport): what was asked, what came back.

    Columns: the request's ``id``, ``params.name`` and ``params.arguments``; the reply's first text block, and its
    ``structuredContent`` (a protocol error shows its code and message instead).
    """
    capture = getattr(capture, "capture", capture)
    rows = []
    for request in capture.requests("tools/call"):
        params = request.message.get("params", {})
        reply = capture.response_to(request)
        answer = reply.message if reply is not None else {}
        if "error" in answer:
            error = answer["error"]
            text, structured = f"error {error.get('code')}: {one_line(str(error.get('message', '')))}", ""
        else:
            result = answer.get("result", {})
            text, structured = _first_text(result.get("content") or []), result.get("structuredContent", "")
        rows.append([request.id, params.get("name"), params.get("arguments"), text, structured])
    return table(["id", "params.name", "params.arguments", "content[0].text", "structuredContent"], rows)


async def attempt(awaitable: Awaitable[Any]) -> Any:
    """Await ``awaitable`` and return its result, or the exception it raised (so a cell can show both alike)."""
    try:
        return await awaitable
    except Exception as error:
        return error


def explain(outcome: Any, *, brief: bool = False) -> str:
    """One line saying what a ``fastmcp.Client`` call gave back: a result, a ``ToolError`` or an ``MCPError``.

    ``outcome`` is what :func:`attempt` returns: a ``CallToolResult`` (from
    ``call_tool`` or ``call_tool_mcp``) or an exception. ``brief=True`` gives a
    short form for table cells.
    """
    if isinstance(outcome, MCPError):
        if brief:
            return f"MCPError {outcome.code}: {one_line(outcome.message)}"
        name = code_name(outcome.code) or code_range(outcome.code)
        return f"raised MCPError: JSON-RPC error {outcome.code} ({name}): {one_line(outcome.message)}"
    if isinstance(outcome, ToolError):
        if brief:
            return f"ToolError: {one_line(str(outcome), brief=True)}"
        return f"raised ToolError: the tool result had isError: true: {one_line(str(outcome))}"
    if isinstance(outcome, BaseException):
        prefix = "" if brief else "raised "
        return f"{prefix}{type(outcome).__name__}: {one_line(str(outcome), brief=brief)}"
    if getattr(outcome, "is_error", False):
        text = _first_text(outcome.content)
        return f"is_error=True: {text}" if brief else f"returned a result with is_error=True: {text}"
    if hasattr(outcome, "is_error"):
        data = getattr(outcome, "data", _MISSING)
        # a raw mcp_types.CallToolResult (from call_tool_mcp) has no .data
        value = f"structured_content={outcome.structured_content!r}" if data is _MISSING else f"data={data!r}"
        return value if brief else f"returned a result: {value}"
    return repr(outcome) if brief else f"returned {outcome!r}"
