"""Lesson 10: a host with many servers, built on fastmcp's multi-server client.

fastmcp does the hard part: ``Client(MCPConfigTransport(config))`` reads an ``mcp.json``-shaped dict, opens one
client per server (``StatefulProxyClient``), mounts each as a proxy on an in-memory router (``MCPRouter``) under
its name as namespace (``calc_calculator_add``; resources ``docs://knowledge/tools``), and skips a server that
cannot connect with a logged warning (``fastmcp/client/transports/config.py``, ``_build_composite``). The host
talks to the router in memory; the router talks to each server over that server's transport.

What this module adds, because fastmcp does not do it (each is small and said so in the lesson):

- :class:`HostTransport`: sends each stdio server's stderr to a log file (fastmcp's ``StdioMCPServer`` has no
  ``log_file`` and a Jupyter kernel under nbval has no real stderr to hand a subprocess); keeps **which
  server failed and why** in :attr:`HostTransport.failures` (fastmcp only logs it); and can put fastmcp's
  ``ResourcesAsTools`` transform on the router, so the model gets resources as two tools (lesson 07).
- :func:`redacted`: the config with credentials replaced, for printing (the real one holds the class token).
- :func:`normalize_result`: a common result normalisation (``structuredContent`` → ``content`` → ``str``),
  to compare with what fastmcp's ``CallToolResult.data`` gives.
"""

from __future__ import annotations

import base64
import copy
import json
import sys
from pathlib import Path
from typing import Any

from fastmcp import FastMCP
from fastmcp.client.transports import MCPConfigTransport, StdioTransport
from fastmcp.server.transforms import ResourcesAsTools

from mcp_teach.transports.in_process import PLAIN_LOGS, bounded_log
from mcp_teach.wire.redact import redact_argv, redact_headers

#: The name of the entry that cannot start: its command does not exist.
BROKEN_COMMAND = "mcp-teach-weather-not-installed"


def host_config(calculator: list[str], url: str, token: str, *, allow: list[str] | None = None) -> dict[str, Any]:
    """The lesson's ``mcp.json``: the calculator (a stdio command), the knowledge server (streamable HTTP with
    the class token in a header) and a weather server whose command is not installed.

    ``allow`` (tool names of the calculator) becomes fastmcp's allowlist: each listed tool gets the tag
    ``allowed`` (a tool transform) and ``include_tags`` keeps only tagged tools.
    """
    calc: dict[str, Any] = {"command": calculator[0], "args": calculator[1:], "env": dict(PLAIN_LOGS)}
    if allow is not None:
        calc["tools"] = {name: {"tags": ["allowed"]} for name in allow}
        calc["include_tags"] = ["allowed"]
    return {
        "mcpServers": {
            "calc": calc,
            "knowledge": {"url": url, "transport": "http", "headers": {"Authorization": f"Bearer {token}"}},
            "weather": {"command": BROKEN_COMMAND, "args": ["--stdio"]},
        }
    }


def redacted(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``config`` safe to print: header credentials become ``Bearer [REDACTED]``, credential options
    in ``args`` ``[REDACTED]`` (:func:`~mcp_teach.wire.redact.redact_argv`), the virtual
    environment's folder ``<venv>`` and this Python ``<venv>/python`` (both differ from machine to machine: a
    kernel may run as ``python`` or ``python3``)."""
    safe = copy.deepcopy(config)
    venv = str(Path(sys.executable).parent)

    def local(text: str) -> str:
        return "<venv>/python" if text == sys.executable else text.replace(venv, "<venv>")

    for entry in safe.get("mcpServers", {}).values():
        if "command" in entry:
            entry["command"] = local(entry["command"])
            entry["args"] = redact_argv([local(arg) for arg in entry.get("args", [])])
        if "headers" in entry:
            entry["headers"] = redact_headers(entry["headers"])
    return safe


class HostTransport(MCPConfigTransport):
    """fastmcp's multi-server transport plus three things it does not do (module docstring)."""

    def __init__(
        self, config: dict[str, Any], *, resources_as_tools: bool = False, log_file: Path | None = None, **kw: Any
    ) -> None:
        super().__init__(config, **kw)
        self.resources_as_tools = resources_as_tools
        self.log_file = log_file or bounded_log()
        #: server name -> why it could not connect (the exception's message), for the last connection.
        self.failures: dict[str, str] = {}

    def _create_transport(self, config: Any) -> Any:  # fastmcp calls it as a static method: works on an instance
        transport = MCPConfigTransport._create_transport(config)
        if isinstance(transport, StdioTransport):
            transport.log_file = self.log_file
        return transport

    async def _create_proxy(self, name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super()._create_proxy(name, *args, **kwargs)
        except Exception as error:  # fastmcp catches it too, logs a warning and skips the server
            self.failures[name] = f"{type(error).__name__}: {error}"
            raise

    async def _build_composite(self, fastmcp_type: Any, *args: Any, **kwargs: Any) -> Any:
        self.failures = {}
        composite, versions = await super()._build_composite(fastmcp_type, *args, **kwargs)
        if self.resources_as_tools:
            composite.add_transform(ResourcesAsTools(composite))
        return composite, versions


def normalize_result(result: Any) -> Any:
    """A common host-side normalisation: what a host hands on as "the result" of a ``tools/call``.

    1. ``structuredContent``, if the result has it (unwrapped from fastmcp's ``{"result": ...}`` wrapper);
    2. else the ``content`` blocks: ``text`` as it is, an image's or audio's ``data`` and an embedded
       resource's ``blob`` as ``<mime: N bytes>`` (base64 decoded), an embedded resource's ``text``; one block
       alone, several as a list;
    3. else ``str(result)``.

    An ``isError`` result gives ``"Error: <text>"``.
    """
    blocks = [_block_value(block) for block in result.content]
    if result.is_error:
        return "Error: " + " ".join(str(b) for b in blocks)
    structured = result.structured_content
    if structured is not None:
        wrapped = (result.meta or {}).get("fastmcp", {}).get("wrap_result")
        return structured["result"] if wrapped and set(structured) == {"result"} else structured
    if blocks:
        return blocks[0] if len(blocks) == 1 else blocks
    return str(result)


def _block_value(block: Any) -> Any:
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"<{block.mime_type}: {len(base64.b64decode(block.data))} bytes>"
    resource = getattr(block, "resource", None)
    if resource is not None:
        if getattr(resource, "blob", None) is not None:
            return f"<{resource.mime_type}: {len(base64.b64decode(resource.blob))} bytes>"
        return resource.text
    return json.dumps(block.model_dump(mode="json", exclude_none=True))


def tool_origins(names: list[str], servers: list[str]) -> list[tuple[str, str, str]]:
    """Each prefixed tool name as (name, server, the server's own name): ``calc_calculator_add`` ->
    ``("calc_calculator_add", "calc", "calculator_add")``. Names of no server keep server ``"(host)"``."""
    rows = []
    for name in names:
        server = next((s for s in servers if name.startswith(f"{s}_")), None)
        rows.append((name, server or "(host)", name[len(server) + 1 :] if server else name))
    return rows


def tap_command(out: Path, command: list[str]) -> list[str]:
    """``command`` with ``mcp-teach tap --out OUT --`` in front: what a host's config runs to record a server."""
    executable = Path(sys.executable).parent / "mcp-teach"
    return [str(executable), "tap", "--out", str(out), "--", *command]


def search_server(name: str) -> FastMCP:
    """A tiny server called ``name`` with one tool, ``search``, that says which server answered."""
    server = FastMCP(name, version="1.0.0")

    @server.tool
    def search(query: str) -> str:
        """Search this server's notes."""
        return f"{name} searched for {query!r}"

    return server
