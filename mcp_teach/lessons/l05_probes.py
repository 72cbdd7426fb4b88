"""Requests that each break one rule of streamable HTTP, and what the server answers (lesson 05, Going deeper).

A :class:`Probe` is a request built with :func:`~mcp_teach.wire.modern_post.modern_post` and one change
to it (a header replaced, another HTTP method). :func:`probe_table` sends each to a running server and
tabulates the status and the answer, so that the lesson can compare them with what the specification
requires.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus

import httpx2

from mcp_teach.display.show import table
from mcp_teach.wire.modern_post import ModernPost
from mcp_teach.wire.plain_text import PlainText


@dataclass(frozen=True)
class Probe:
    """``post`` sent with ``changes`` to its headers (``None`` leaves one out), as HTTP ``method``."""

    what: str
    post: ModernPost
    changes: Mapping[str, str | None] = field(default_factory=dict)
    method: str = "POST"

    def changed(self) -> str:
        """What differs from the request as a client sends it, in words a table cell can hold."""
        parts = [f"HTTP {self.method}, no body"] if self.method != "POST" else []
        parts += [f"{name}: {value}" if value is not None else f"no {name}" for name, value in self.changes.items()]
        return "; ".join(parts) or "nothing"


def answer(status: int, content_type: str, body: str, width: int = 70) -> str:
    """A response in one cell: the JSON-RPC error code and message, the result's kind, or the plain body."""
    if content_type.startswith("application/json") and body:
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if isinstance(message, dict) and "error" in message:
            error = message["error"]
            text = f"error {error.get('code')}: {error.get('message')}"
        elif isinstance(message, dict) and "result" in message:
            text = "result" + (f" ({message['result'].get('resultType')})" if "resultType" in message["result"] else "")
        else:
            text = body
    else:
        text = body or "(empty body)"
    return text if len(text) <= width else text[: width - 1] + "…"


async def send_probe(client: httpx2.AsyncClient, url: str, probe: Probe) -> tuple[int, str]:
    """Send one probe; its status and :func:`answer`."""
    headers = probe.post.with_headers(probe.changes).headers
    if probe.method == "POST":
        response = await client.post(url, content=probe.post.json(), headers=headers)
    else:
        headers.pop("content-type", None)
        response = await client.request(probe.method, url, headers=headers)
    return response.status_code, answer(response.status_code, response.headers.get("content-type", ""), response.text)


async def probe_table(url: str, probes: Sequence[Probe]) -> PlainText:
    """Send each probe to ``url`` in turn; one row each: what it is, what was changed, status, answer."""
    rows = []
    async with httpx2.AsyncClient() as client:
        for number, probe in enumerate(probes, start=1):
            status, text = await send_probe(client, url, probe)
            rows.append((f"#{number}", probe.what, probe.changed(), f"{status} {HTTPStatus(status).phrase}", text))
    return table(("#", "request", "changed", "status", "answer"), rows)
