"""Lesson 08: how a JSON-RPC method reaches its handler in the mcp SDK's low-level ``Server``.

In mcp 1.x, ``request_handlers`` was keyed by the Python request *type*
(``request_handlers[ListToolsRequest]``): the message was parsed into the request class whose ``method``
literal matched, and that class found the handler. mcp 2 keys the table by the method *string*: each
``on_*`` argument of ``Server(...)`` becomes ``method -> HandlerEntry(params_type, handler)``. When a request
comes in, the server's runner

1. checks the whole message against the request type of the connection's protocol era
   (``mcp_types.methods.CLIENT_REQUESTS[(method, version)]``, e.g. ``CallToolRequest`` of 2025-11-25): a
   method the era does not have is ``-32601``, params that do not fit are ``-32602``;
2. looks the method up in the table (no entry: ``-32601`` "Method not found");
3. parses ``params`` into the entry's ``params_type`` (``CallToolRequestParams``) and awaits
   ``handler(ctx, params)``.

``initialize`` is the exception: the runner answers it itself and no handler can be registered for it.

:func:`dispatch_table` reads that table from a real server object; :func:`trace_dispatch` follows one
message through the three steps with the SDK's own models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.lowlevel import Server
from mcp_types import methods
from mcp_types.version import LATEST_PROTOCOL_VERSION
from pydantic import ValidationError

from mcp_teach.display.show import table
from mcp_teach.wire.plain_text import PlainText

#: The two eras the course compares: the last handshake era and the ``server/discover`` era.
ERAS = ("2025-11-25", "2026-07-28")


#: Where the SDK's models live, as the table shows them: a request type per era, the params types in ``mcp_types``.
_MODULES = {
    "mcp_types._v2025_11_25": "v2025_11_25",
    "mcp_types._v2026_07_28": "v2026_07_28",
    "mcp_types._types": "mcp_types",
}


def _name(obj: Any) -> str:
    """``module.qualname`` of a function or class, the module cut to its last part (``v2025_11_25.CallToolRequest``)."""
    module = getattr(obj, "__module__", "")
    return f"{_MODULES.get(module, module.rpartition('.')[2])}.{obj.__qualname__}"


@dataclass(frozen=True)
class Route:
    """One row of the dispatch table: a method, the request type per era, the params type, the handler."""

    method: str
    #: era -> the request model the whole message is checked against (``None``: the era has no such method).
    request_types: dict[str, str | None]
    params_type: str
    handler: str


class DispatchTable(PlainText):
    """The routes of one server, renderable as a table."""

    def __init__(self, server_name: str, routes: list[Route]) -> None:
        self.server_name = server_name
        self.routes = routes

    def methods(self) -> list[str]:
        return [route.method for route in self.routes]

    def route(self, method: str) -> Route:
        for route in self.routes:
            if route.method == method:
                return route
        raise KeyError(f"{self.server_name} has no handler for {method!r}; it has: {', '.join(self.methods())}")

    def _table(self) -> Any:
        header = ["method", *(f"request type ({era})" for era in ERAS), "params type", "handler"]
        rows = [
            [r.method, *(r.request_types[era] or "— (not in this era)" for era in ERAS), r.params_type, r.handler]
            for r in self.routes
        ]
        return table(header, rows)

    def text(self) -> str:
        return repr(self._table())

    def _repr_html_(self) -> str:
        return self._table()._repr_html_()


def _registered_methods(server: Server[Any]) -> list[str]:
    # The SDK offers get_request_handler(method) but no list: the table itself is the only complete source.
    return list(server._request_handlers)


def dispatch_table(server: Server[Any]) -> DispatchTable:
    """The server's method -> request type -> params type -> handler table, as registered (``initialize`` first).

    Read from the server object: ``server.get_request_handler(method)`` for each method it registered.
    """
    routes = [
        Route(
            "initialize",
            {era: _request_type("initialize", era) for era in ERAS},
            _name(methods.CLIENT_REQUESTS[("initialize", ERAS[0])].model_fields["params"].annotation),
            "(the runner itself: ServerRunner._handle_initialize)",
        )
    ]
    for method in _registered_methods(server):
        entry = server.get_request_handler(method)
        assert entry is not None
        request_types = {era: _request_type(method, era) for era in ERAS}
        routes.append(Route(method, request_types, _name(entry.params_type), _name(entry.handler)))
    return DispatchTable(server.name, routes)


def _request_type(method: str, era: str) -> str | None:
    model = methods.CLIENT_REQUESTS.get((method, era))
    return None if model is None else _name(model)


@dataclass(frozen=True, repr=False)
class DispatchTrace(PlainText):
    """What happens to one request, step by step, and where it stops."""

    method: str
    version: str
    steps: list[tuple[str, str]]
    #: The JSON-RPC error the runner would answer with (``None``: the handler is reached).
    error: dict[str, Any] | None

    @property
    def outcome(self) -> str:
        if self.error is not None:
            return f"refused with JSON-RPC error {self.error['code']} {self.error['message']!r}"
        return "answered by the runner" if self.method == "initialize" else "reaches its handler"

    def text(self) -> str:
        lines = [f"{number}. {step}: {detail}" for number, (step, detail) in enumerate(self.steps, start=1)]
        outcome = self.outcome
        return "\n".join([f"{self.method} ({self.version}) {outcome}", *lines])


def trace_dispatch(
    server: Server[Any], message: Mapping[str, Any], version: str = LATEST_PROTOCOL_VERSION
) -> DispatchTrace:
    """Follow ``message`` (a JSON-RPC request as a dict) through the runner's steps, without calling the handler.

    Every step uses the SDK's own models and the server's own table, so a wrong ``params`` fails here
    exactly where the server would refuse it.
    """
    method = str(message.get("method"))
    params = message.get("params")
    steps: list[tuple[str, str]] = [("method string", repr(method))]
    surface = methods.CLIENT_REQUESTS.get((method, version))
    if surface is None:
        steps.append(("request type", f"none: {version} has no {method!r}"))
        return DispatchTrace(method, version, steps, {"code": -32601, "message": "Method not found", "data": method})
    try:
        methods.validate_client_request(method, version, params)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'message'}: {e['msg']}" for e in error.errors())
        steps.append(("request type", f"{_name(surface)} rejects the message ({problems})"))
        return DispatchTrace(method, version, steps, {"code": -32602, "message": "Invalid request parameters"})
    steps.append(("request type", f"{_name(surface)} accepts the message"))
    if method == "initialize":
        steps.append(("handler", "none: the runner answers initialize itself"))
        return DispatchTrace(method, version, steps, None)
    entry = server.get_request_handler(method)
    if entry is None:
        steps.append(("table lookup", f"{server.name} has no handler for {method!r}"))
        return DispatchTrace(method, version, steps, {"code": -32601, "message": "Method not found", "data": method})
    steps.append(("table lookup", f"{method!r} -> {_name(entry.handler)}"))
    typed = entry.params_type.model_validate({} if params is None else dict(params), by_name=False)
    shown = typed.model_dump(mode="json", exclude_none=True, exclude={"meta"})
    steps.append(("params type", f"{_name(entry.params_type)}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"))
    steps.append(("handler", f"await {_name(entry.handler)}(ctx, params)"))
    return DispatchTrace(method, version, steps, None)
