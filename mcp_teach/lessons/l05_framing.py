"""Lesson 05 helpers: the same JSON-RPC session, framed differently by each transport.

- :func:`diff_captures` compares captures message by message and names every
  field that differs — the proof that the transports carry the same JSON-RPC.
- :func:`show_http` renders recorded HTTP exchanges (request line, the
  protocol-relevant headers, body; status, headers, body) as readable text and
  HTML; :func:`http_overview` is one row per exchange; :func:`sse_events` parses
  an ``text/event-stream`` body.
- :func:`show_stdio` renders the lines recorded by :mod:`mcp_teach.wire.stdio_tap`.
- :func:`terminal_server` and :func:`run_command` play "terminal A" and
  "terminal B": the command-line server and a command-line client as real processes.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

from mcp_teach.display.show import COLOURS, table
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.messages import CLIENT_TO_SERVER, Capture
from mcp_teach.wire.plain_text import PlainText
from mcp_teach.wire.stdio_tap import TappedLine

#: Headers that carry MCP meaning; the rest (date, host, user-agent, content-length, ...) is HTTP plumbing.
PROTOCOL_HEADERS = (
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
)
#: Headers that change from run to run or machine to machine; never shown even with ``headers=None``.
UNSTABLE_HEADERS = frozenset({"date", "host", "user-agent"})
ARROWS = {CLIENT_TO_SERVER: "client → server", "server->client": "server → client"}


def _as_capture(source: Any) -> Capture:
    capture = getattr(source, "capture", source)  # a CaptureTransport compares as its capture
    if isinstance(capture, Capture):
        return capture
    return Capture(list(capture))


# --- comparing captures --------------------------------------------------------------------------------------------


def differing_paths(a: Any, b: Any, path: str = "") -> list[str]:
    """Dotted paths where two JSON values differ (``""`` for the values themselves).

    A key present on one side only is a difference at that key; lists of
    different lengths differ as a whole.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in [*a, *(k for k in b if k not in a)]:
            child = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                found.append(child)
            else:
                found += differing_paths(a[key], b[key], child)
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        found = []
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found += differing_paths(x, y, f"{path}.{index}" if path else str(index))
        return found
    if type(a) is not type(b) or a != b:  # 3 and 3.0, or True and 1, are different JSON
        return [path]
    return []


@dataclass(frozen=True)
class DiffRow:
    """One position of the compared captures."""

    number: int
    direction: str
    label: str
    #: Per compared capture (all but the first): ``None`` if the message equals the first capture's, else the
    #: differing paths (``["direction"]``: it goes the other way; ``["(missing)"]``: that capture is shorter;
    #: ``["(extra: <message>)"]``: only that capture has a message here).
    differences: tuple[list[str] | None, ...]


class CaptureDiff(PlainText):
    """Captures compared position by position against the first one."""

    def __init__(self, names: Sequence[str], rows: list[DiffRow], max_paths: int = 4) -> None:
        self.names = tuple(names)
        self.rows = rows
        self._max_paths = max_paths

    @property
    def identical(self) -> bool:
        """True if every capture has the same messages, in the same order and directions, as the first."""
        return all(d is None for row in self.rows for d in row.differences)

    def differences(self) -> list[tuple[int, str, list[str]]]:
        """``(message number, capture name, differing paths)`` for every message that differs."""
        return [
            (row.number, name, paths)
            for row in self.rows
            for name, paths in zip(self.names[1:], row.differences, strict=True)
            if paths is not None
        ]

    def _cell(self, paths: list[str] | None) -> str:
        if paths is None:
            return "same"
        if paths == [""]:
            return "differs: whole message"
        if len(paths) == 1 and paths[0].startswith("("):
            return paths[0][1:-1]
        shown = ", ".join(paths[: self._max_paths])
        more = f", … (+{len(paths) - self._max_paths})" if len(paths) > self._max_paths else ""
        return f"differs: {shown}{more}"

    def verdict(self) -> str:
        """One sentence saying what the comparison found."""
        count = len(self.rows)
        if self.identical:
            captures = "both captures" if len(self.names) == 2 else f"all {len(self.names)} captures"
            return f"identical: all {count} messages are equal in {captures} (as JSON values)"
        differing = len({number for number, _, _ in self.differences()})
        return f"{differing} of {count} positions differ"

    def _table(self):
        header = ["#", "direction", f"message ({self.names[0]})", *self.names[1:]]
        rows = [
            [f"#{row.number}", row.direction, row.label, *(self._cell(d) for d in row.differences)] for row in self.rows
        ]
        return table(header, rows)

    def text(self) -> str:
        return f"{self._table()!r}\n{self.verdict()}"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.identical else COLOURS["error"]
        return f"{self._table()._repr_html_()}<p style='color: {colour}'><b>{html.escape(self.verdict())}</b></p>"


def diff_captures(captures: Mapping[str, Any], *, max_paths: int = 4) -> CaptureDiff:
    """Compare captures message by message against the first one.

    ``captures`` maps a name to a ``Capture`` (or ``CaptureTransport``). Two
    messages are the same when they go the same direction and are equal JSON
    values (key order aside); otherwise the row names the fields that differ.
    """
    names = list(captures)
    if len(names) < 2:
        raise ValueError("give at least two captures to compare")
    lists = [_as_capture(captures[name]) for name in names]
    reference = lists[0]
    labels = [c.methods() for c in lists]
    rows = []
    for index in range(max(len(c) for c in lists)):
        base = reference[index] if index < len(reference) else None
        cells: list[list[str] | None] = []
        for number, other in enumerate(lists[1:], start=1):
            if index >= len(other):
                cells.append(["(missing)"])
            elif base is None:
                cells.append([f"(extra: {labels[number][index]})"])
            elif other[index].direction != base.direction:
                cells.append(["direction"])
            else:
                paths = differing_paths(base.message, other[index].message)
                cells.append(paths or None)
        if base is not None:
            direction, label = ARROWS[base.direction], labels[0][index]
        else:
            direction, label = "", "—"
        rows.append(DiffRow(index + 1, direction, label, tuple(cells)))
    return CaptureDiff(names, rows, max_paths)


# --- HTTP exchanges ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: ``event`` (``message`` if the stream names none), its ``data`` and optional ``id``."""

    event: str
    data: str
    id: str | None = None


def sse_events(body: str) -> list[SseEvent]:
    """Parse a ``text/event-stream`` body: events end with a blank line; ``:`` lines are comments."""
    events = []
    for block in re.split(r"\r\n\r\n|\n\n|\r\r", body):
        fields: dict[str, list[str]] = {}
        for line in re.split(r"\r\n|\n|\r", block):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
        if "data" in fields:
            event = fields.get("event", ["message"])[-1]
            events.append(SseEvent(event, "\n".join(fields["data"]), fields.get("id", [None])[-1]))
    return events


def _message_label(message: Any) -> str:
    """``tools/call id=3``, ``notifications/initialized``, ``result id=3``, ``error id=3``."""
    if isinstance(message, list):
        return "batch: " + ", ".join(_message_label(m) for m in message)
    if not isinstance(message, dict):
        return "(not JSON-RPC)"
    if "method" in message:
        return f"{message['method']} id={message['id']}" if "id" in message else message["method"]
    kind = "error" if "error" in message else "result"
    return f"{kind} id={message.get('id')}"


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def sent_messages(exchange: HttpExchange) -> list[Any]:
    """The JSON-RPC message(s) in the request body (none for GET and DELETE)."""
    message = _json_or_none(exchange.request_body) if exchange.request_body else None
    return [] if message is None else [message]


def received_messages(exchange: HttpExchange) -> list[Any]:
    """The JSON-RPC messages in the response: a JSON body, or the ``message`` events of an event stream."""
    content_type = exchange.content_type or ""
    if content_type.startswith("text/event-stream"):
        return [m for e in sse_events(exchange.response_body) if e.event == "message" and (m := _json_or_none(e.data))]
    if content_type.startswith("application/json") and exchange.response_body:
        message = _json_or_none(exchange.response_body)
        return [] if message is None else [message]
    return []


def _http_exchanges(source: Any) -> list[HttpExchange]:
    if isinstance(source, HttpExchange):
        return [source]
    capture = getattr(source, "capture", source)
    if isinstance(capture, Capture):
        return list(capture.http)
    return list(source)


def _status_line(status: int | None) -> str:
    if status is None:
        return "(no response)"
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _cut(line: str, width: int | None) -> str:
    """``line`` cut to ``width`` characters, saying how many were left out."""
    if width is None or len(line) <= width:
        return line
    return f"{line[:width]}…  (+{len(line) - width} characters)"


def _select(headers: Mapping[str, str], wanted: Sequence[str] | None) -> list[tuple[str, str]]:
    if wanted is None:
        return [(k, v) for k, v in headers.items() if k not in UNSTABLE_HEADERS]
    return [(name, headers[name]) for name in wanted if name in headers]


@dataclass(frozen=True)
class _Part:
    """One half of an exchange: first line, headers, body lines."""

    first: str
    headers: list[tuple[str, str]]
    body: list[str]
    note: str


def _body_lines(text: str, width: int | None) -> list[str]:
    return [_cut(line, width) for line in re.split(r"\r\n|\n|\r", text.rstrip("\r\n"))] if text else []


def _parts(exchange: HttpExchange, headers: Sequence[str] | None, width: int | None) -> tuple[_Part, _Part]:
    sent = ", ".join(_message_label(m) for m in sent_messages(exchange))
    request = _Part(
        f"{exchange.method} {exchange.target}",
        _select(exchange.request_headers, headers),
        _body_lines(exchange.request_body, width),
        f"carries {sent}" if sent else "no body",
    )
    received = ", ".join(_message_label(m) for m in received_messages(exchange))
    response = _Part(
        _status_line(exchange.status),
        _select(exchange.response_headers, headers),
        _body_lines(exchange.response_body, width),
        f"carries {received}" if received else ("empty body" if not exchange.response_body else "no JSON-RPC"),
    )
    return request, response


class HttpView(PlainText):
    """What :func:`show_http` returns: HTML in Jupyter, plain text elsewhere."""

    def __init__(
        self,
        exchanges: list[tuple[int, HttpExchange]],
        headers: Sequence[str] | None,
        width: int | None,
        title: str | None,
    ) -> None:
        self._exchanges = exchanges
        self._headers = headers
        self._width = width
        self._title = title

    def _headline(self, number: int, exchange: HttpExchange) -> str:
        return f"#{number} {exchange.method} {exchange.target} → {_status_line(exchange.status)}"

    def text(self) -> str:
        """The plain-text form (what GitHub and nbval compare)."""
        blocks = [f"== {self._title} ==" if self._title else None]
        for number, exchange in self._exchanges:
            request, response = _parts(exchange, self._headers, self._width)
            lines = [f"── HTTP exchange #{number} " + "─" * 40]
            for arrow, part in (("→", request), ("←", response)):
                lines.append(f"{arrow} {part.first}    [{part.note}]")
                lines += [f"  {name}: {value}" for name, value in part.headers]
                if part.body:
                    lines.append("  │")
                    lines += [f"  │ {line}" for line in part.body]
            blocks.append("\n".join(lines))
        if not self._exchanges:
            blocks.append("(no HTTP exchanges)")
        return "\n".join(block for block in blocks if block is not None)

    def _repr_html_(self) -> str:
        out = ['<div class="mcp-teach-http" style="font-size: 13px">']
        if self._title:
            out.append(f"<p><b>{html.escape(self._title)}</b></p>")
        for number, exchange in self._exchanges:
            request, response = _parts(exchange, self._headers, self._width)
            out.append(
                f'<details open style="border-left: 4px solid #8c959f; margin: 6px 0; padding-left: 8px">'
                f'<summary style="cursor: pointer; font-family: monospace">'
                f"{html.escape(self._headline(number, exchange))}</summary>"
            )
            for part, colour in ((request, COLOURS[CLIENT_TO_SERVER]), (response, COLOURS["server->client"])):
                head = "".join(
                    f"<div><span style='color: #6e7781'>{html.escape(name)}:</span> {html.escape(value)}</div>"
                    for name, value in part.headers
                )
                body = html.escape("\n".join(part.body))
                body_html = (
                    f"<pre style='margin: 4px 0 0 0; padding: 4px; background: #f6f8fa; white-space: pre-wrap'>"
                    f"{body}</pre>"
                    if part.body
                    else ""
                )
                out.append(
                    f"<div style='border-left: 3px solid {colour}; padding-left: 6px; margin: 4px 0; "
                    f"font-family: monospace'><b>{html.escape(part.first)}</b> "
                    f"<span style='color: #6e7781'>[{html.escape(part.note)}]</span>{head}{body_html}</div>"
                )
            out.append("</details>")
        if not self._exchanges:
            out.append("<p>(no HTTP exchanges)</p>")
        out.append("</div>")
        return "".join(out)


def show_http(
    source: Any,
    *,
    numbers: Iterable[int] | None = None,
    headers: Sequence[str] | None = PROTOCOL_HEADERS,
    width: int | None = 100,
    title: str | None = None,
) -> HttpView:
    """Render recorded HTTP exchanges: ``→`` the request, ``←`` the response, each with headers and body.

    ``source`` is a ``Capture``/``CaptureTransport`` (its ``.http``), a list of
    exchanges or one exchange. ``numbers`` keeps only those exchanges (1-based,
    as numbered in the full list). ``headers`` are the headers shown, in that
    order (default: the MCP-relevant ones; ``None``: all but date, host and
    user-agent). Body lines longer than ``width`` are cut, saying by how much.
    """
    exchanges = list(enumerate(_http_exchanges(source), start=1))
    if numbers is not None:
        keep = set(numbers)
        exchanges = [(n, e) for n, e in exchanges if n in keep]
    return HttpView(exchanges, headers, width, title)


def http_overview(source: Any):
    """One row per HTTP exchange: the request, the JSON-RPC it sent, the status, what came back."""
    rows = []
    for number, exchange in enumerate(_http_exchanges(source), start=1):
        sent = ", ".join(_message_label(m) for m in sent_messages(exchange)) or "—"
        events = sse_events(exchange.response_body) if (exchange.content_type or "").startswith("text/event") else []
        received = [f"{e.event} event" for e in events if e.event != "message"]
        received += [_message_label(m) for m in received_messages(exchange)]
        content_type = (exchange.content_type or "—").split(";")[0]
        rows.append(
            (
                f"#{number}",
                f"{exchange.method} {exchange.target}",
                sent,
                _status_line(exchange.status),
                content_type,
                ", ".join(received) or "—",
            )
        )
    return table(("#", "request", "JSON-RPC sent", "status", "response type", "JSON-RPC received"), rows)


# --- stdio lines ---------------------------------------------------------------------------------------------------


def _middle(text: str, width: int | None) -> str:
    """``text`` with its middle cut out if longer than ``width`` (start and end stay visible)."""
    if width is None or len(text) <= width:
        return text
    keep = width - 1
    head = keep * 2 // 3
    return f"{text[:head]}…{text[len(text) - (keep - head) :]}"


def show_stdio(lines: Iterable[TappedLine], *, streams: Sequence[str] = ("stdin", "stdout"), width: int | None = 90):
    """A table of tapped pipe lines: pipe, direction, size in bytes and the exact bytes (middle cut if long)."""
    rows = [
        (f"#{number}", line.stream, line.direction, str(len(line.data)), _middle(repr(line.data), width))
        for number, line in enumerate((line for line in lines if line.stream in streams), start=1)
    ]
    return table(("#", "pipe", "direction", "bytes", "exactly these bytes (Python bytes literal)"), rows)


# --- two terminals -------------------------------------------------------------------------------------------------


def console_script(name: str) -> str:
    """The path of an installed console script (``mcp-teach``, ``fastmcp``) next to this Python."""
    for folder in (Path(sys.executable).parent, Path(sys.prefix) / "Scripts", Path(sys.prefix) / "bin"):
        found = shutil.which(name, path=str(folder))
        if found:
            return found
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"the {name!r} command is not installed in this environment")
    return found


_QUIET_ENV = {"NO_COLOR": "1", "TERM": "dumb", "FASTMCP_CHECK_FOR_UPDATES": "off", "COLUMNS": "100"}
# A Jupyter kernel sets these so that programs colour their output; a terminal transcript should not.
_COLOUR_FORCING = frozenset({"FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "TTY_COMPATIBLE"})
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain_environment() -> dict[str, str]:
    """This process's environment for a child whose output should be plain text (no colours, no update checks)."""
    env = {name: value for name, value in os.environ.items() if name not in _COLOUR_FORCING}
    return {**env, **_QUIET_ENV}


@dataclass(frozen=True)
class TerminalServer:
    """A server started as in terminal A: its URL and the line it printed."""

    url: str
    banner: str


@contextlib.contextmanager
def terminal_server(transport: str, *, port: int = 0, timeout: float = 30.0) -> Iterator[TerminalServer]:
    """Run ``mcp-teach serve --transport TRANSPORT --port PORT`` as its own process until the block ends.

    Yields once the server printed the URL it listens on (port 0: any free
    port); stops it the way Ctrl-C would (SIGTERM, which it handles cleanly).
    """
    command = [console_script("mcp-teach"), "serve", "--transport", transport, "--port", str(port)]
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=plain_environment())
        try:
            deadline = time.monotonic() + timeout
            while True:
                stderr.seek(0)
                printed = stderr.read().decode("utf-8", "replace")
                found = re.search(r"on (http://\S+)", printed)
                if found:
                    yield TerminalServer(found.group(1), printed.splitlines()[0])
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {printed.strip() or 'no output'}")
                time.sleep(0.05)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@dataclass(frozen=True, repr=False)
class CommandResult(PlainText):
    """A command as typed in a terminal, what it printed (stdout, then stderr) and its exit code."""

    command: str
    output: str
    returncode: int

    def text(self) -> str:
        code = "" if self.returncode == 0 else f"\n(exit code {self.returncode})"
        return f"$ {self.command}\n{self.output.rstrip()}{code}"


def run_command(args: Sequence[str], *, timeout: float = 120.0) -> CommandResult:
    """Run a console script of this environment (``args[0]``, e.g. ``fastmcp``) as terminal B would."""
    completed = subprocess.run(
        [console_script(args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=plain_environment(),
        check=False,
    )
    output = _ANSI.sub("", completed.stdout + completed.stderr)
    return CommandResult(shlex.join(args), output, completed.returncode)


__all__ = [
    "PROTOCOL_HEADERS",
    "CaptureDiff",
    "CommandResult",
    "HttpView",
    "SseEvent",
    "TerminalServer",
    "diff_captures",
    "differing_paths",
    "http_overview",
    "received_messages",
    "run_command",
    "sent_messages",
    "show_http",
    "show_stdio",
    "sse_events",
    "terminal_server",
]
