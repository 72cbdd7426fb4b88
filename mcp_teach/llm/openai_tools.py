"""Turn MCP tools into OpenAI function-calling definitions.

An MCP server describes each tool with ``name``, ``title``, ``description``,
``inputSchema``, ``outputSchema`` and ``_meta``. An OpenAI-style chat API takes
a list of ``{"type": "function", "function": {"name", "description",
"parameters"}}`` entries instead. The model therefore sees only the name, the
description and the (cleaned) input schema; ``title``, ``outputSchema``,
``annotations``, ``icons`` and ``_meta`` stay with the MCP client::

    tools = await client.list_tools()
    openai_tools = to_openai_tools(tools)
    completion = await llm.chat.completions.create(model=..., messages=..., tools=openai_tools)

The functions accept what ``fastmcp.Client.list_tools()`` returns (``mcp``
``Tool`` objects) as well as the raw tool dicts of a captured ``tools/list``
result, and work for any tool names and schemas.

Tool names are passed through unchanged. OpenAI documents function names as
``a-z``, ``A-Z``, ``0-9``, ``_`` and ``-``, at most 64 characters
(:data:`OPENAI_NAME_PATTERN`); MCP also allows ``.`` and longer names, so a
client that mixes servers may have to rename tools (and map the names back when
the model calls them). :func:`is_openai_name` checks a name.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

#: The function-name rule the ``openai`` SDK documents for ``FunctionDefinition.name``.
OPENAI_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

#: Keywords :func:`clean_schema` removes wherever a schema can appear.
DROPPED_KEYWORDS = ("$schema", "additionalProperties", "title")
#: Keys starting with this are vendor extensions (e.g. fastmcp's ``x-fastmcp-wrap-result``); removed.
VENDOR_PREFIX = "x-"

# JSON Schema keywords whose value is a schema, a list of schemas or a name -> schema map.
# Only these are walked: anything else (enum, const, required, examples, ...) is data and
# is copied as it is, so a property *named* "title" or "format" is never touched.
_SCHEMA_VALUED = frozenset({
    "items", "additionalItems", "unevaluatedItems", "contains", "not", "if", "then", "else", "propertyNames",
    "unevaluatedProperties",
})  # fmt: skip
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def is_openai_name(name: str) -> bool:
    """True if ``name`` fits OpenAI's rule for function names (see :data:`OPENAI_NAME_PATTERN`)."""
    return bool(OPENAI_NAME_PATTERN.match(name))


def clean_schema(schema: Any) -> dict[str, Any]:
    """A copy of a tool's input schema that strict LLM providers accept.

    The input is never modified. The rules, applied at every depth where a
    schema can appear (``properties``, ``items``, ``anyOf``, ``$defs``, ...),
    never to data such as ``enum`` values, ``required`` lists or the *names* of
    properties:

    1. **Not a dict** (missing or broken schema): becomes
       ``{"type": "object", "properties": {}}``, a function without arguments.
       The root also gets ``"type": "object"`` and ``"properties": {}`` when
       they are missing; OpenAI expects an object schema for ``parameters``.
    2. **``$schema`` is removed.** It names the JSON Schema dialect, which
       matters to validators, not to the model; OpenAI-compatible backends have
       been seen to answer HTTP 400 when it is present.
    3. **``additionalProperties`` is removed.** fastmcp sets it to ``false`` so
       the server rejects unexpected arguments (it still does: the server
       validates, not the model). Gemini's function declarations and several
       OpenAI-compatible backends reject the keyword, also in nested objects.
       Dropping ``additionalProperties: {"type": ...}`` (a ``dict[str, X]``
       argument) loses the value type. Note: OpenAI's own *strict* mode
       requires ``additionalProperties: false`` on every object, so do not
       use this cleaner for ``strict: true`` definitions.
    4. **``title`` is removed.** A schema title is a label for humans; pydantic
       puts one on every field, repeating its name (fastmcp already prunes
       them, other SDKs do not). It costs tokens and is not in Gemini's schema
       subset.
    5. **Vendor keys ``x-*`` are removed**, e.g. fastmcp's
       ``x-fastmcp-wrap-result``. They are hints for one library, meaningless
       to the model and unknown to providers.
    6. **``default`` and ``format`` move into ``description``.** Some providers
       reject them (Gemini: ``default``, and ``format`` on most strings), but the
       model should still know them, so ``{"type": "integer", "default": 2}``
       becomes ``{"type": "integer", "description": "Default: 2."}`` and
       ``"format": "date"`` adds ``"Format: date."``. ``"default": null`` is
       dropped without a note: it only says "may be left out".
    7. **An optional property that may be null** (``x: int | None = None`` gives
       ``{"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}``)
       becomes its non-null branch, ``{"type": "integer"}``; likewise
       ``"type": ["integer", "null"]`` becomes ``"type": "integer"``. The
       argument is not in ``required``, so leaving it out already means "no
       value"; a plain type is understood by every provider, ``anyOf`` is not.
       A *required* nullable property keeps its ``anyOf``, and any other
       ``anyOf``/``oneOf`` is kept (OpenAI accepts them).

    ``$ref``/``$defs`` are kept (fastmcp inlines them already).
    """
    if not isinstance(schema, Mapping):
        return {"type": "object", "properties": {}}
    cleaned = _clean(schema, optional=False)
    cleaned.setdefault("type", "object")
    if cleaned["type"] == "object":
        cleaned.setdefault("properties", {})
    return cleaned


def _clean(schema: Any, *, optional: bool) -> Any:
    """Rules 2-7 of :func:`clean_schema` for one (sub)schema; ``optional``: a property not in ``required``."""
    if not isinstance(schema, Mapping):  # boolean schemas (true/false) and anything unexpected
        return copy.deepcopy(schema)
    if optional:
        schema = _without_null(schema)
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    cleaned: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in schema.items():
        if key in DROPPED_KEYWORDS or key.startswith(VENDOR_PREFIX):
            continue
        if key == "default":
            if value is not None:
                notes.append(f"Default: {json.dumps(value, ensure_ascii=False)}.")
        elif key == "format":
            notes.append(f"Format: {value}.")
        elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
            cleaned[key] = {
                name: _clean(sub, optional=key == "properties" and name not in required) for name, sub in value.items()
            }
        elif (key in _SCHEMA_LISTS or key in _SCHEMA_VALUED) and isinstance(value, list):
            cleaned[key] = [_clean(sub, optional=False) for sub in value]
        elif key in _SCHEMA_VALUED:
            cleaned[key] = _clean(value, optional=False)
        else:
            cleaned[key] = copy.deepcopy(value)
    if notes:
        cleaned["description"] = _sentence(cleaned.get("description"), notes)
    return cleaned


def _without_null(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``anyOf: [X, {"type": "null"}]`` -> X (merged with the outer keys); ``type: [T, "null"]`` -> T."""
    branches = schema.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        (other,) = [branch for branch in branches if branch != {"type": "null"}]
        if isinstance(other, Mapping):
            return {**other, **{key: value for key, value in schema.items() if key != "anyOf"}}
    types = schema.get("type")
    if isinstance(types, list) and "null" in types:
        rest = [t for t in types if t != "null"]
        if len(rest) == 1:
            return {**schema, "type": rest[0]}
    return schema


def _sentence(description: Any, notes: list[str]) -> str:
    text = description.strip() if isinstance(description, str) else ""
    if text and not text.endswith((".", "!", "?", ":")):
        text += "."
    return " ".join([text, *notes]) if text else " ".join(notes)


def _field(tool: Any, *names: str) -> Any:
    """The first of ``names`` that ``tool`` (a dict or an object) has and is not None."""
    values = (tool.get(name) if isinstance(tool, Mapping) else getattr(tool, name, None) for name in names)
    return next((value for value in values if value is not None), None)


def to_openai_tool(tool: Any, *, clean: bool = True) -> dict[str, Any]:
    """One MCP tool as an OpenAI function definition.

    ``tool`` is an ``mcp`` ``Tool`` (from ``client.list_tools()``), a raw tool
    dict from a ``tools/list`` result, or anything with the same fields. The
    result is ``{"type": "function", "function": {"name", "description",
    "parameters"}}``:

    - ``name``: the MCP name, unchanged (the model calls the tool by it);
    - ``description``: the MCP description; a tool without one gets its
      ``title`` instead, and a tool with neither gets no ``description`` key;
    - ``parameters``: the ``inputSchema``, passed through :func:`clean_schema`
      (``clean=False`` keeps an unchanged copy, to compare).

    ``title``, ``outputSchema``, ``annotations``, ``icons`` and ``_meta`` have
    no place in an OpenAI definition: the model never sees them.
    """
    name = _field(tool, "name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"an MCP tool needs a non-empty string name, got {name!r}")
    schema = _field(tool, "input_schema", "inputSchema", "parameters")
    function: dict[str, Any] = {"name": name}
    if description := _field(tool, "description") or _field(tool, "title"):
        function["description"] = description
    function["parameters"] = clean_schema(schema) if clean else copy.deepcopy(schema or {"type": "object"})
    return {"type": "function", "function": function}


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One entry of an assistant message's ``tool_calls``: ``arguments`` is the JSON text of the call's arguments."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def to_openai_tools(tools: Iterable[Any]) -> list[dict[str, Any]]:
    """Every tool of a ``tools/list`` as an OpenAI function definition, in the same order.

    ``tools`` is what ``client.list_tools()`` returns or the ``tools`` list of
    a captured result. Two tools with the same name would be ambiguous to the
    model (a call names only the function), so that raises ``ValueError``.
    """
    definitions = [to_openai_tool(tool) for tool in tools]
    names = [definition["function"]["name"] for definition in definitions]
    if duplicates := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"tool names must be unique for the model, duplicated: {', '.join(duplicates)}")
    return definitions
