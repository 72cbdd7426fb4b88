"""Errors for a name or URI the server does not have, in each era's code, saying what the server does have.

fastmcp answers a missing resource with ``-32602`` "Resource not found: '<uri>'" in both eras, an unknown
prompt with "Unknown prompt: '<name>'", and a completion for an unknown prompt or template with an empty list.
The specification asks for more:

- a missing resource is ``-32002`` up to 2025-11-25 and ``-32602`` in 2026-07-28 (server/resources, Error
  Handling; basic/index, Error Codes: 2026-07-28 servers must not send ``-32002``);
- an unknown prompt and a missing required argument are ``-32602``, for ``prompts/get`` and for
  ``completion/complete`` alike (server/prompts and server/utilities/completion, Error Handling).

:class:`ExplainUnknownNames` checks names against the server's own listings before fastmcp runs, and
rewrites fastmcp's missing-resource error, so each message lists what exists. A prompt or template function
refuses a value with :func:`bad_argument`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ValidationError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_teach.servers.explained_errors import INVALID_PARAMS, short_repr

#: "Resource not found" up to protocol 2025-11-25 (2026-07-28 uses -32602 and reserves this code).
RESOURCE_NOT_FOUND_LEGACY = -32002


def invalid_params(message: str, data: dict[str, Any] | None = None) -> MCPError:
    """A JSON-RPC ``-32602`` (Invalid params) error with ``message``: what was wrong and what to send instead."""
    return MCPError(INVALID_PARAMS, message, data)


def bad_argument(message: str) -> ValidationError:
    """What a prompt or template function raises for a value it cannot use: fastmcp sends it as ``-32602`` with
    ``message``, logged at DEBUG (an ``MCPError`` raised there is logged with a traceback, a plain exception
    becomes ``-32603``)."""
    return ValidationError(message, log_level=logging.DEBUG)


def resource_not_found_code(protocol_version: str) -> int:
    """``-32602`` on a 2026-07-28 connection, ``-32002`` on a 2025-11-25 (or older) one."""
    return INVALID_PARAMS if protocol_version in MODERN_PROTOCOL_VERSIONS else RESOURCE_NOT_FOUND_LEGACY


class ExplainUnknownNames:
    """mcp server middleware: unknown resources, prompts, prompt arguments and completion references explained."""

    def __init__(self, server: FastMCP) -> None:
        self.server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        if ctx.method == "prompts/get" and isinstance(params.get("name"), str):
            await self._check_prompt(params["name"], params.get("arguments") or {})
        elif ctx.method == "completion/complete" and isinstance(params.get("ref"), Mapping):
            await self._check_reference(params["ref"], params.get("argument"))
        try:
            return await call_next(ctx)
        except MCPError as error:
            # The only param of resources/read is the URI: "invalid params" there means it names no resource
            # (fastmcp's "Resource not found", or a template value the function refused).
            uri = params.get("uri")
            if ctx.method != "resources/read" or error.error.code != INVALID_PARAMS or not isinstance(uri, str):
                raise
            message = f"Unknown resource: {short_repr(uri)}. {await self._resources_sentence()}"
            raise MCPError(resource_not_found_code(ctx.protocol_version), message, {"uri": uri}) from None

    async def _resources_sentence(self) -> str:
        uris = ", ".join(str(resource.uri) for resource in await self.server.list_resources())
        templates = ", ".join(template.uri_template for template in await self.server.list_resource_templates())
        return f"This server has: {uris}" + (f" (template {templates})." if templates else ".")

    async def _prompt_arguments(self, name: str) -> list[Any]:
        """The arguments of the prompt ``name``, or ``-32602`` naming the prompts there are."""
        prompts = {prompt.name: prompt for prompt in await self.server.list_prompts()}
        if name not in prompts:
            raise invalid_params(f"Unknown prompt: {short_repr(name)}. This server has: {', '.join(sorted(prompts))}.")
        return prompts[name].arguments or []

    async def _check_prompt(self, name: str, arguments: Any) -> None:
        declared = await self._prompt_arguments(name)
        given = arguments if isinstance(arguments, Mapping) else {}
        missing = [argument.name for argument in declared if argument.required and argument.name not in given]
        if missing:
            takes = ", ".join(f"{a.name} ({'required' if a.required else 'optional'})" for a in declared)
            names = ", ".join(repr(name) for name in missing)
            raise invalid_params(f"Missing argument {names} for prompt {name}: it takes {takes}.")

    async def _check_reference(self, ref: Mapping[str, Any], argument: Any) -> None:
        """The referenced prompt or template must exist, and have the argument being completed."""
        wanted = argument.get("name") if isinstance(argument, Mapping) else None
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            where = f"prompt {ref['name']}"
            names = [a.name for a in await self._prompt_arguments(ref["name"])]
        elif ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
            templates = {template.uri_template: template for template in await self.server.list_resource_templates()}
            if ref["uri"] not in templates:
                listed = ", ".join(templates) or "none"
                raise invalid_params(f"Unknown resource template: {short_repr(ref['uri'])}. This server has: {listed}.")
            where = f"template {ref['uri']}"
            names = list(templates[ref["uri"]].parameters.get("properties", {}))  # fastmcp: the URI's variables
        else:
            return  # not a reference: the SDK's validation explains it (ExplainInvalidParams)
        if isinstance(wanted, str) and wanted not in names:
            has = f"its arguments are {', '.join(names)}" if names else "it takes no arguments"
            raise invalid_params(f"The {where} has no argument {short_repr(wanted)}: {has}.")


def explain_unknown_names(server: FastMCP) -> FastMCP:
    """Add :class:`ExplainUnknownNames` to ``server``'s mcp middleware; returns ``server``."""
    server._mcp_server.middleware.insert(0, ExplainUnknownNames(server))
    return server
