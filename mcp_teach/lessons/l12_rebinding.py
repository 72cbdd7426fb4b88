"""Lesson 12: DNS rebinding against a course server on loopback, and the Host/Origin guard that stops it.

Why a server on 127.0.0.1 needs a guard at all: a web page the student opens runs JavaScript in the browser, and
the browser runs on the student's machine, so it *can* reach 127.0.0.1. Two ways in:

- **DNS rebinding**: the page comes from ``attacker.example``, whose DNS answer then changes to 127.0.0.1. The
  browser still believes it talks to ``attacker.example`` (same origin, so it lets the page read the answers) and
  sends ``Host: attacker.example:<port>``. Only the server can notice: that Host is not its own. fastmcp's guard
  answers **421 Misdirected Request**.
- **A cross-origin request**: the page posts straight to ``http://127.0.0.1:<port>/mcp``. The Host is right, but the
  browser adds ``Origin: http://attacker.example``. The guard answers **403 Forbidden**.

The specification (2026-07-28, basic/transports/streamable-http, "Security & Endpoint"): servers "MUST validate
the Origin header on all incoming connections to prevent DNS rebinding attacks"; "if the Origin header is present
and invalid, servers MUST respond with HTTP 403 Forbidden"; "when running locally, servers SHOULD bind only to
localhost (127.0.0.1)"; "without these protections, attackers could use DNS rebinding to interact with local MCP
servers from remote websites". The Host check and its 421 are fastmcp's choice beyond the spec
(``fastmcp.server.http.HostOriginGuardMiddleware``, configured by :func:`mcp_teach.transports.http_app.allowed_hosts`;
:mod:`mcp_teach.transports.http_guard` checks JSON-RPC bodies, after it).

:func:`rebinding_exchanges` sends the three requests with ``httpx2`` to a real server on loopback and returns
what came back, ports replaced by ``<port>`` so the lesson's output stays the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx2

from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http

ATTACKER = "attacker.example"
#: A legacy ``initialize``: the first message of a session, so a request that passes gets a real answer.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "a-web-page", "version": "1.0.0"},
    },
}


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, the port written ``<port>``."""

    case: str
    host: str
    origin: str | None
    status: int
    body: str

    def __str__(self) -> str:
        origin = f"Origin: {self.origin}" if self.origin else "no Origin"
        return f"{self.case:<34} Host: {self.host:<27} {origin:<40} -> {self.status} {self.body}"


async def rebinding_exchanges() -> list[Exchange]:
    """A DNS-rebinding request (foreign Host), a cross-origin one (foreign Origin), and the student's own client."""
    async with serve_http("streamable-http", server=build_calculator_server()) as url:
        port = urlsplit(url).port
        own = f"127.0.0.1:{port}"
        cases = [
            ("DNS rebinding (foreign Host)", f"{ATTACKER}:{port}", f"http://{ATTACKER}:{port}"),
            ("cross-origin page (foreign Origin)", own, f"http://{ATTACKER}"),
            ("the student's client", own, None),
        ]
        exchanges = []
        async with httpx2.AsyncClient(timeout=10) as http:
            for case, host, origin in cases:
                headers = {"Host": host, "Accept": "application/json, text/event-stream"}
                if origin:
                    headers["Origin"] = origin
                response = await http.post(url, content=json.dumps(INITIALIZE), headers={
                    **headers, "Content-Type": "application/json"})  # fmt: skip
                exchanges.append(Exchange(case, *_placeholders(port, host, origin), response.status_code,
                                          _first_line(response)))  # fmt: skip
    return exchanges


def _placeholders(port: int | None, host: str, origin: str | None) -> tuple[str, str | None]:
    def hide(text: str) -> str:
        return text.replace(f":{port}", ":<port>")

    return hide(host), hide(origin) if origin else None


def _first_line(response: httpx2.Response) -> str:
    """``Misdirected Request``, ``Forbidden Origin``; for an MCP answer, which result it is."""
    text = response.text
    if "serverInfo" in text:
        return "initialize result (serverInfo mcp-teach-calculator)"
    return text.strip().splitlines()[0][:60] if text.strip() else ""
