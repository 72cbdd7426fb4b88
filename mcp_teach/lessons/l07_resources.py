"""Reading lesson 07's captures: capabilities in two eras, the resource list, caching hints, error codes.

Each function turns captured messages (or a client's results) into one small table, so a cell of the lesson
stays a sentence::

    capabilities_table(modern, legacy)     # what server/discover and initialize advertise, side by side
    resources_table(resources)             # uri, mimeType, size, annotations of resources/list
    caching_table(modern)                  # ttlMs / cacheScope of every result (2026-07-28)
    error_table({"2026-07-28": modern, "2025-11-25": legacy}, "resources/read")
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from mcp_teach.display.show import table
from mcp_teach.wire.messages import Capture, WireMessage

#: Shown for a field a message does not have.
ABSENT = "—"
#: The methods whose 2026-07-28 results MUST carry ttlMs and cacheScope (server/utilities/caching).
CACHEABLE = (
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)


def _capture(source: Any) -> Capture:
    capture = getattr(source, "capture", source)
    if not isinstance(capture, Capture):
        raise TypeError(f"expected a Capture or a CaptureTransport, not {type(source).__name__}")
    return capture


def _first_result(capture: Capture, *methods: str) -> dict[str, Any]:
    """The ``result`` answering the first request of one of ``methods``."""
    for request in capture.requests():
        if request.method in methods:
            reply = capture.response_to(request)
            if reply is not None and "result" in reply.message:
                return reply.message["result"]
    raise ValueError(f"the capture has no answered {' or '.join(methods)}")


def advertised(source: Any) -> dict[str, Any]:
    """The server's ``capabilities``: the ``server/discover`` (2026-07-28) or ``initialize`` (2025-11-25) result's."""
    return _first_result(_capture(source), "server/discover", "initialize").get("capabilities", {})


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"resources": {"subscribe": false}}`` -> ``{"resources.subscribe": false}``; an empty ``{}`` stays a leaf."""
    if not isinstance(value, Mapping) or not value:
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, inner in value.items():
        flat.update(_flatten(inner, f"{prefix}.{key}" if prefix else key))
    return flat


def _json(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    return "{}" if value == {} else str(value)


def capabilities_table(modern: Any, legacy: Any) -> Any:
    """One row per advertised capability (dotted path), its value in each era, ``—`` where it is absent."""
    new, old = _flatten(advertised(modern)), _flatten(advertised(legacy))
    paths = list(dict.fromkeys([*new, *old]))
    rows = [
        [path, _json(new[path]) if path in new else ABSENT, _json(old[path]) if path in old else ABSENT]
        for path in paths
    ]
    return table(["capability", "2026-07-28 (server/discover)", "2025-11-25 (initialize)"], rows)


def _field(item: Any, *names: str) -> Any:
    for name in names:
        value = item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
        if value is not None:
            return value
    return None


def resources_table(resources: Iterable[Any]) -> Any:
    """``uri``, ``mimeType``, ``size`` and the annotations of each resource (client objects or captured dicts)."""
    rows = []
    for resource in resources:
        annotations = _field(resource, "annotations")
        audience = _field(annotations, "audience") if annotations is not None else None
        priority = _field(annotations, "priority") if annotations is not None else None
        rows.append(
            [
                str(_field(resource, "uri")),
                _field(resource, "mime_type", "mimeType") or ABSENT,
                _field(resource, "size") if _field(resource, "size") is not None else ABSENT,
                ", ".join(audience) if audience else ABSENT,
                priority if priority is not None else ABSENT,
            ]
        )
    return table(["uri", "mimeType", "size (bytes)", "audience", "priority"], rows)


def _responses(capture: Capture) -> Iterable[tuple[WireMessage, WireMessage]]:
    for request, reply in capture.pairs():
        if reply is not None and request.method is not None:
            yield request, reply


def caching_table(*sources: Any) -> Any:
    """One row per method answered in ``sources`` (its first result): ``resultType``, ``ttlMs``, ``cacheScope``
    (``—`` when absent), and whether the 2026-07-28 specification asks for the hints there (:data:`CACHEABLE`).
    """
    rows, seen = [], set()
    for source in sources:
        for request, reply in _responses(_capture(source)):
            result = reply.message.get("result")
            if not isinstance(result, Mapping) or request.method in seen:
                continue
            seen.add(request.method)
            rows.append(
                [
                    request.method,
                    result.get("resultType", ABSENT),
                    result.get("ttlMs", ABSENT),
                    result.get("cacheScope", ABSENT),
                    "MUST carry hints" if request.method in CACHEABLE else "not cacheable",
                ]
            )
    return table(["method", "resultType", "ttlMs", "cacheScope", "2026-07-28 caching page"], rows)


def error_table(by_era: Mapping[str, Any], method: str) -> Any:
    """The JSON-RPC errors answering ``method`` in each era's capture: era, code, ``data``, start of the message."""
    rows = []
    for era, source in by_era.items():
        for request, reply in _responses(_capture(source)):
            error = reply.message.get("error")
            if request.method == method and isinstance(error, Mapping):
                message = str(error.get("message", ""))
                short = message if len(message) <= 60 else message[:59] + "…"
                rows.append([era, error.get("code"), error.get("data", ABSENT), short])
    return table(["era", "error.code", "error.data", "error.message"], rows)


def blob_bytes(contents: Any) -> bytes:
    """The bytes of a binary resource's content: its ``blob``, base64-decoded (a client object or a captured dict)."""
    blob = _field(contents, "blob")
    if not isinstance(blob, str):
        raise ValueError("these contents have no blob: a text resource carries 'text' instead")
    return base64.b64decode(blob)


def prompt_table(result: Any) -> Any:
    """One row per message of a ``prompts/get`` result: role, content type, and what the content holds."""
    rows = []
    for number, message in enumerate(_field(result, "messages") or [], start=1):
        content = _field(message, "content")
        kind = _field(content, "type")
        if kind == "text":
            held = _field(content, "text")
        elif kind == "resource":
            resource = _field(content, "resource")
            text = _field(resource, "text")
            held = (
                f"{_field(resource, 'uri')} ({_field(resource, 'mime_type', 'mimeType')}, {len(text or '')} characters)"
            )
        else:
            held = kind
        held = str(held)
        rows.append([number, _field(message, "role"), kind, held if len(held) <= 90 else held[:89] + "…"])
    return table(["#", "role", "content.type", "content"], rows)
