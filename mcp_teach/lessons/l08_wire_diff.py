"""Lesson 08: the fastmcp calculator and the low-level calculator on the wire, side by side.

:func:`compare_servers` runs the same client script against both servers (in memory, captured with
:class:`~mcp_teach.wire.capture.CaptureTransport`): the opening (``server/discover`` or ``initialize``),
``tools/list`` and a few ``tools/call`` requests chosen to show where they part (a result, a rule on one
argument, a rule across both, a string where the schema says number, an extra argument). The requests are
the same on both connections (same client, same ids); every difference is in the answers.

The result lists, per answer, the fields only fastmcp sends, the fields only the low-level server sends, and
the fields both send with different values (paths like ``tools.*.outputSchema``, grouped over the four
tools), plus each call's answer as a model would read it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from mcp_teach.client import teaching_client
from mcp_teach.display.show import table
from mcp_teach.lessons.l05_diff import diff_captures
from mcp_teach.lessons.l08_connect import LowLevelMemoryTransport
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, Capture
from mcp_teach.wire.plain_text import PlainText

FASTMCP, LOWLEVEL = "fastmcp", "low-level"

#: The calls both servers answer, after ``tools/list``: (why it is there, tool, arguments).
CALLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("a result", "calculator_divide", {"a": 1, "b": 4}),
    ("b = 0: a rule on one argument", "calculator_divide", {"a": 1, "b": 0}),
    ("overflow: a rule across both", "calculator_multiply", {"a": 1e200, "b": 1e200}),
    ('b = "2": a string, not a number', "calculator_add", {"a": 1, "b": "2"}),
    ("an extra argument c", "calculator_add", {"a": 1, "b": 2, "c": 3}),
)

_MISSING = object()
#: Where every 2026-07-28 answer names its server; the names differ, which the opening answer shows once.
SERVER_NAME_STAMP = "_meta.io.modelcontextprotocol/serverInfo.name"


def json_differences(a: Any, b: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """``(path, value in a, value in b)`` for each leaf where two JSON values differ (``_MISSING``: not there)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in [*a, *(k for k in b if k not in a)]:
            child = f"{path}.{key}" if path else str(key)
            found += json_differences(a.get(key, _MISSING), b.get(key, _MISSING), child)
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        found = []
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found += json_differences(x, y, f"{path}.{index}" if path else str(index))
        return found
    if a is _MISSING and b is _MISSING:
        return []
    if a is _MISSING or b is _MISSING or type(a) is not type(b) or a != b:
        return [(path, a, b)]
    return []


def _group(path: str) -> str:
    """``tools.3.title`` -> ``tools.*.title``: the same field of every tool is one finding."""
    return re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", path)


def _shown(value: Any, limit: int = 70) -> str:
    if value is _MISSING:
        return "—"
    text = _json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class Finding:
    """One field that differs in one answer (grouped over tools: ``count`` of them)."""

    answer: str
    path: str
    #: ``only fastmcp``, ``only low-level`` or ``both, different``.
    verdict: str
    fastmcp: str
    lowlevel: str
    count: int = 1


@dataclass(repr=False)
class ServerComparison(PlainText):
    """What :func:`compare_servers` found: findings, each call's answers, and what was the same."""

    mode: str
    findings: list[Finding]
    #: Per call: (why, tool + arguments, fastmcp's answer, the low-level server's answer).
    answers: list[tuple[str, str, str, str]]
    #: Per answer: the grouped paths both servers sent with equal values.
    same: dict[str, list[str]]
    requests_identical: bool
    captures: dict[str, Capture] = field(default_factory=dict)

    def only(self, side: str) -> list[Finding]:
        """The findings only ``side`` (``"fastmcp"`` or ``"low-level"``) sends."""
        return [f for f in self.findings if f.verdict == f"only {side}"]

    def paths(self, answer: str | None = None) -> set[str]:
        """Every differing path (of one ``answer``, e.g. ``"tools/list"``)."""
        return {f.path for f in self.findings if answer is None or f.answer == answer}

    def findings_table(self) -> Any:
        rows = [
            [f.answer, f.path + (f" (×{f.count})" if f.count > 1 else ""), f.verdict, f.fastmcp, f.lowlevel]
            for f in self.findings
        ]
        return table(["answer", "field", "who sends it", FASTMCP, LOWLEVEL], rows)

    def answers_table(self) -> Any:
        return table(["call", "arguments", FASTMCP, LOWLEVEL], self.answers)

    def summary(self) -> str:
        """A short text: what is the same, what fastmcp adds, what only the low-level server says."""

        def names(findings: list[Finding]) -> str:
            return ", ".join(dict.fromkeys(f.path for f in findings)) or "nothing"

        listed = self.same.get("tools/list", [])
        differ = [f for f in self.findings if f.verdict == "both, different" and f.answer.startswith("tools/call")]
        return "\n".join(
            [
                f"Requests: {'identical on both connections' if self.requests_identical else 'NOT identical'}.",
                f"Same in tools/list: {', '.join(listed)}.",
                f"Only fastmcp sends: {names(self.only(FASTMCP))}.",
                f"Only the low-level server sends: {names(self.only(LOWLEVEL))}.",
                f"Different answers to the same call: {len({f.answer for f in differ})} of {len(CALLS)} calls.",
            ]
        )

    def text(self) -> str:
        return f"{self.summary()}\n\n{self.findings_table()!r}\n\n{self.answers_table()!r}"

    def _repr_html_(self) -> str:
        summary = "<br>".join(self.summary().splitlines())
        return f"<p>{summary}</p>{self.findings_table()._repr_html_()}{self.answers_table()._repr_html_()}"


async def _run_script(target: Any, mode: str) -> Capture:
    capture = CaptureTransport(target)
    async with teaching_client(capture, mode=mode) as client:
        await client.list_tools()
        for _, tool, arguments in CALLS:
            await client.call_tool(tool, arguments, raise_on_error=False)
    return capture.capture


def _answer_labels(capture: Capture) -> dict[Any, str]:
    labels: dict[Any, str] = {}
    calls = iter(CALLS)
    for wire in capture:
        if wire.direction == CLIENT_TO_SERVER and wire.method and "id" in wire.message:
            label = wire.method
            if wire.method == "tools/call":
                why, tool, _ = next(calls)
                label = f"tools/call {tool} ({why})"
            labels[wire.message["id"]] = label
    return labels


def _responses(capture: Capture) -> dict[Any, dict[str, Any]]:
    return {w.message["id"]: w.message for w in capture if w.direction != CLIENT_TO_SERVER and "id" in w.message}


def _said(response: dict[str, Any]) -> str:
    if "error" in response:
        return f"error {response['error']['code']}: {response['error']['message']}"
    result = response["result"]
    text = " ".join(c.get("text", "") for c in result.get("content", []))
    said = f"isError: {_json(result.get('isError', False))}, text {_json(text)}"
    if "structuredContent" in result:
        said += f", structuredContent {_json(result['structuredContent'])}"
    return said


def _leaves(value: Any, path: str = "") -> list[str]:
    if isinstance(value, dict):
        return [leaf for key, child in value.items() for leaf in _leaves(child, f"{path}.{key}" if path else key)]
    if isinstance(value, list):
        return [leaf for i, child in enumerate(value) for leaf in _leaves(child, f"{path}.{i}" if path else str(i))]
    return [path]


def _verdict(a: Any, b: Any) -> str:
    if b is _MISSING:
        return f"only {FASTMCP}"
    if a is _MISSING:
        return f"only {LOWLEVEL}"
    return "both, different"


async def compare_servers(mode: str = "auto") -> ServerComparison:
    """Run the same script against the fastmcp calculator and the low-level one, and compare the answers.

    ``mode="legacy"`` opens with the 2025-11-25 ``initialize`` handshake, ``"auto"`` with 2026-07-28's
    ``server/discover``. Both servers run in this kernel (a few tens of milliseconds).
    """
    ours = await _run_script(build_calculator_server(), mode)
    low = await _run_script(LowLevelMemoryTransport(), mode)
    requests = [[w.message for w in c if w.direction == CLIENT_TO_SERVER] for c in (ours, low)]
    labels = _answer_labels(ours)
    fast_answers, low_answers = _responses(ours), _responses(low)
    findings: list[Finding] = []
    same: dict[str, list[str]] = {}
    for request_id, label in labels.items():
        a = fast_answers[request_id].get("result", fast_answers[request_id])  # an error compares as itself
        b = low_answers[request_id].get("result", low_answers[request_id])
        grouped: dict[tuple[str, str], list[tuple[Any, Any]]] = {}
        differences = json_differences(a, b)
        if findings:  # the serverInfo stamp on every 2026-07-28 answer differs only in the name: shown once
            differences = [d for d in differences if d[0] != SERVER_NAME_STAMP]
        for path, x, y in differences:
            grouped.setdefault((_group(path), _verdict(x, y)), []).append((x, y))
        for (path, verdict), values in grouped.items():
            x, y = values[0]
            findings.append(Finding(label, path, verdict, _shown(x), _shown(y), len(values)))
        differing = {path for path, _ in grouped} | {SERVER_NAME_STAMP}
        same[label] = list(
            dict.fromkeys(g for g in map(_group, _leaves(a)) if g not in differing and not _under(g, differing))
        )
    call_ids = [request_id for request_id, label in labels.items() if label.startswith("tools/call")]
    answers = [
        (why, f"{tool} {_json(arguments)}", _said(fast_answers[rid]), _said(low_answers[rid]))
        for (why, tool, arguments), rid in zip(CALLS, call_ids, strict=True)
    ]
    return ServerComparison(mode, findings, answers, same, requests[0] == requests[1], {FASTMCP: ours, LOWLEVEL: low})


def _under(path: str, prefixes: set[str]) -> bool:
    return any(path.startswith(prefix + ".") for prefix in prefixes)


def message_diff(comparison: ServerComparison) -> Any:
    """Both captures compared message by message (lesson 05's :func:`~mcp_teach.lessons.l05_diff.diff_captures`)."""
    return diff_captures(comparison.captures)
