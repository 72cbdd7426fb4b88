"""Support for ``test_schema_messages.py``: read the JSON-RPC messages a lesson's outputs show, and validate a message
against the JSON Schema of its protocol era (``tests/schema/<era>/schema.json``, see ``tests/schema/README.md``).

Reading. The course shows messages as indented JSON under a headline (``show``, ``show_trace``, the explorer's
static view and its widget), as compact JSON lines (``print(json.dumps(...))``, HTTP views, bytes reprs), often
abbreviated: ``{… 3 keys}``, ``[… 4 items]``, ``… 2 more``, a bare ``…`` (``show(fold=..., max_items=...)``), or
cut at ``…`` (a line shortened to fit). :func:`find_json_objects` parses that leniently: a folded value becomes a
:class:`Folded`, an object, list or string cut short a :class:`PartialDict`, :class:`PartialList` or
:class:`TruncatedStr`. The validator treats them as what they are, unknown: a folded value satisfies every
schema, a partial object need not have every required key, a truncated string need not match a ``const``.

Validating. :class:`EraSchema` picks the definition a message must satisfy: a request by its method in the
``ClientRequest``/``ServerRequest`` union of its direction, a notification in ``ClientNotification``/
``ServerNotification``, a result by the method of the request it answers (2026-07-28: the ``<Name>ResultResponse``
definition, which admits ``InputRequiredResult`` where the specification does; 2025-11-25: ``<Name>Result``),
an error by ``JSONRPCErrorResponse`` and, where the schema defines one for its code, that error's definition.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SCHEMA_DIR = Path(__file__).parent / "schema"
LEGACY, MODERN = "2025-11-25", "2026-07-28"
ERAS = (LEGACY, MODERN)
CLIENT_TO_SERVER, SERVER_TO_CLIENT = "client->server", "server->client"
ELLIPSIS = "…"


# --- lenient JSON ----------------------------------------------------------------------------------------------


class Folded:
    """A value the view abbreviated (``{… 3 keys}``, ``[… 2 items]``, ``…``, ``… 2 more``): unknown, so valid."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Folded) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


class PartialDict(dict):
    """An object cut short: the keys shown are real, more may have followed."""


class PartialList(list):
    """A list cut short."""


class TruncatedStr(str):
    """A string cut short (its text is the part shown)."""


class _Cut(Exception):
    """The text ends (or says ``…``) where the JSON goes on: unwind, marking every open value partial."""

    def __init__(self, value: Any = None, has_value: bool = False) -> None:
        self.value = value
        self.has_value = has_value


class NotJson(ValueError):
    pass


_FOLDED = re.compile(r"\{… \d+ keys?\}|\[… \d+ items?\]|… \d+ more|…")
#: show()'s folded 2026-07-28 envelope: what it stands for is not on screen, so the message is read up to there.
_AS_SHOWN_BEFORE = re.compile(r"\(as shown before: [^)]*\)")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WS = " \t\r\n"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.cut_at = len(text)

    def cut(self, pos: int, value: Any = None) -> _Cut:
        """Where the text was cut (the first cut found; the unwinding re-raises keep it)."""
        self.cut_at = min(pos, len(self.text))
        return _Cut(value, value is not None)

    def ws(self, pos: int) -> int:
        while pos < len(self.text) and self.text[pos] in _WS:
            pos += 1
        return pos

    def value(self, pos: int) -> tuple[Any, int]:
        pos = self.ws(pos)
        if pos >= len(self.text):
            raise self.cut(pos)
        char = self.text[pos]
        if _AS_SHOWN_BEFORE.match(self.text, pos):
            raise self.cut(pos)
        folded = _FOLDED.match(self.text, pos)
        if folded and (char == ELLIPSIS or self.text.startswith(ELLIPSIS, pos + 1)):
            end = folded.end()
            if folded.group() == ELLIPSIS and self._cut_here(end):
                raise self.cut(pos)
            return Folded(folded.group()), end
        if char == "{":
            return self.object(pos + 1)
        if char == "[":
            return self.array(pos + 1)
        if char == '"':
            return self.string(pos + 1)
        for literal, value in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(literal, pos):
                return value, pos + len(literal)
        number = _NUMBER.match(self.text, pos)
        if number:
            digits = number.group()
            return (float(digits) if any(c in digits for c in ".eE") else int(digits)), number.end()
        raise NotJson(f"unexpected {char!r} at {pos}")

    def _cut_here(self, pos: int) -> bool:
        """A bare ``…`` is a folded value when a separator follows, else the point where the text was cut."""
        rest = self.ws(pos)
        return rest >= len(self.text) or self.text[rest] not in ",}]"

    def _separator(self, pos: int, close: str) -> tuple[bool, int]:
        pos = self.ws(pos)
        if pos >= len(self.text) or self.text[pos] == ELLIPSIS:
            raise self.cut(pos)
        if self.text[pos] == ",":
            return False, pos + 1
        if self.text[pos] == close:
            return True, pos + 1
        raise NotJson(f"expected ',' or {close!r} at {pos}")

    def object(self, pos: int) -> tuple[dict, int]:
        result: dict[str, Any] = {}
        pos = self.ws(pos)
        if pos < len(self.text) and self.text[pos] == "}":
            return result, pos + 1
        while True:
            pos = self.ws(pos)
            if pos >= len(self.text) or self.text[pos] == ELLIPSIS:
                raise self.cut(pos, PartialDict(result))
            if self.text[pos] != '"':
                raise NotJson(f"expected a key at {pos}")
            try:
                key, pos = self.string(pos + 1)
            except _Cut:
                raise _Cut(PartialDict(result), True) from None
            pos = self.ws(pos)
            if pos >= len(self.text) or self.text[pos] == ELLIPSIS:
                raise self.cut(pos, PartialDict(result))
            if self.text[pos] != ":":
                raise NotJson(f"expected ':' at {pos}")
            try:
                result[key], pos = self.value(pos + 1)
                done, pos = self._separator(pos, "}")
            except _Cut as cut:
                if cut.has_value:
                    result[key] = cut.value
                raise _Cut(PartialDict(result), True) from None
            if done:
                return result, pos

    def array(self, pos: int) -> tuple[list, int]:
        result: list[Any] = []
        pos = self.ws(pos)
        if pos < len(self.text) and self.text[pos] == "]":
            return result, pos + 1
        while True:
            try:
                item, pos = self.value(pos)
                result.append(item)
                done, pos = self._separator(pos, "]")
            except _Cut as cut:
                if cut.has_value:
                    result.append(cut.value)
                raise _Cut(PartialList(result), True) from None
            if done:
                return result, pos

    def string(self, pos: int) -> tuple[str, int]:
        """A string from after its opening quote; a raw line break is a line wrapped to be read, ``…`` a cut."""
        out = []
        while pos < len(self.text):
            char = self.text[pos]
            if char == '"':
                return "".join(out), pos + 1
            if char == "\\":
                escape = self.text[pos + 1 : pos + 2]
                if escape == "u":
                    out.append(chr(int(self.text[pos + 2 : pos + 6], 16)))
                    pos += 6
                    continue
                simple = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
                if escape not in simple:
                    raise NotJson(f"bad escape at {pos}")
                out.append(simple[escape])
                pos += 2
                continue
            if char == "\n":
                pos += 1  # JSON has no raw line break in a string: the line was wrapped to be read (textwrap)
                continue
            if char == ELLIPSIS and self._string_cut(pos + 1):
                raise self.cut(pos, TruncatedStr("".join(out)))
            out.append(char)
            pos += 1
        raise self.cut(pos, TruncatedStr("".join(out)))

    def _string_cut(self, pos: int) -> bool:
        """``…`` inside a string is a cut when no closing quote follows on its line."""
        line_end = self.text.find("\n", pos)
        line = self.text[pos : line_end if line_end >= 0 else len(self.text)]
        return '"' not in line


def parse_lenient(text: str, start: int = 0) -> tuple[Any, int, bool]:
    """Parse one JSON value at ``start``: ``(value, end, cut)``; ``cut`` when the text ends inside it."""
    parser = _Parser(text)
    try:
        value, end = parser.value(start)
        return value, end, False
    except _Cut as cut:
        return cut.value, parser.cut_at + 1, True


def find_json_objects(text: str) -> Iterator[tuple[int, int, Any, bool]]:
    """Every outermost JSON-RPC message in ``text`` (an object with ``"jsonrpc"``): ``(start, end, value, cut)``.

    Objects that are not messages are searched inside, so a message wrapped in another object is found too.
    """
    pos = 0
    while (start := text.find("{", pos)) >= 0:
        try:
            value, end, cut = parse_lenient(text, start)
        except (NotJson, ValueError, IndexError):
            pos = start + 1
            continue
        if isinstance(value, dict) and "jsonrpc" in value:
            yield start, end, value, cut
            pos = end
        else:
            pos = start + 1


_BYTES = re.compile(r"""b'(?:[^'\\]|\\.)*'|b"(?:[^"\\]|\\.)*\"""")


def unbytes(text: str) -> str:
    """Replace each Python bytes literal (``b'{"jsonrpc":...'``) by its text, one per line, ending in a cut: a
    lesson prints slices of a line (``line[:45]``)."""

    def decoded(match: re.Match[str]) -> str:
        try:
            return "\n" + ast.literal_eval(match.group()).decode("utf-8", "replace") + ELLIPSIS + "\n"
        except (ValueError, SyntaxError):
            return match.group()

    return _BYTES.sub(decoded, text)


def plain(value: Any) -> Any:
    """The message as plain JSON for printing (folded values as their text)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, Folded):
        return value.text
    return value


def is_partial(value: Any) -> bool:
    """True if anything in ``value`` is folded or cut short."""
    if isinstance(value, Folded | PartialDict | PartialList | TruncatedStr):
        return True
    if isinstance(value, dict):
        return any(is_partial(v) for v in value.values())
    if isinstance(value, list):
        return any(is_partial(v) for v in value)
    return False


# --- the validator that knows about folded values ---------------------------------------------------------------

_SKIP_FOR_PARTIAL_DICT = {"required", "minProperties", "dependentRequired", "dependentSchemas"}
_SKIP_FOR_PARTIAL_LIST = {"minItems", "contains", "minContains", "prefixItems"}
_SKIP_FOR_TRUNCATED_STR = {"const", "enum", "pattern", "format", "minLength", "maxLength"}


def _lenient(keyword: str, check: Any) -> Any:
    def wrapped(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if isinstance(instance, Folded):
            return
        if isinstance(instance, PartialDict) and keyword in _SKIP_FOR_PARTIAL_DICT:
            return
        if isinstance(instance, PartialList) and keyword in _SKIP_FOR_PARTIAL_LIST:
            return
        if isinstance(instance, TruncatedStr) and keyword in _SKIP_FOR_TRUNCATED_STR:
            if keyword == "const" and isinstance(value, str) and value.startswith(instance):
                return
            if keyword == "enum" and any(isinstance(v, str) and v.startswith(instance) for v in value):
                return
            if keyword in ("const", "enum"):
                yield from check(validator, value, instance, schema)
            return
        yield from check(validator, value, instance, schema)

    return wrapped


LenientValidator = jsonschema.validators.extend(
    Draft202012Validator,
    validators={keyword: _lenient(keyword, check) for keyword, check in Draft202012Validator.VALIDATORS.items()},
)


@dataclass(frozen=True)
class Problem:
    """One reason a message fails its schema."""

    definition: str
    instance_path: str
    schema_path: str
    message: str

    def __str__(self) -> str:
        where = f"schema path from #/$defs/{self.definition} (through $refs): {self.schema_path}"
        return f"{self.definition} at {self.instance_path} ({where}): {self.message}"


def _leaves(error: jsonschema.ValidationError) -> Iterator[jsonschema.ValidationError]:
    """The most specific errors under an ``anyOf``: of the branch that got furthest (deepest path)."""
    if not error.context:
        yield error
        return
    deepest = max(len(e.absolute_path) for e in error.context)
    best = [e for e in error.context if len(e.absolute_path) == deepest]
    for sub in best[:3]:
        yield from _leaves(sub)


class EraSchema:
    """The schema of one protocol era, and which of its definitions each message must satisfy."""

    def __init__(self, era: str) -> None:
        self.era = era
        self.uri = f"urn:mcp-schema:{era}"
        self.schema = json.loads((SCHEMA_DIR / era / "schema.json").read_text(encoding="utf-8"))
        self.defs: dict[str, Any] = self.schema["$defs"]
        resource = Resource.from_contents(self.schema, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(self.uri, resource)
        self.requests = {
            CLIENT_TO_SERVER: self._by_method("ClientRequest"),
            SERVER_TO_CLIENT: self._by_method("ServerRequest"),
        }
        self.notifications = {
            CLIENT_TO_SERVER: self._by_method("ClientNotification"),
            SERVER_TO_CLIENT: self._by_method("ServerNotification"),
        }
        self._validators: dict[str, Any] = {}

    def _members(self, union: str) -> list[str]:
        definition = self.defs.get(union)
        if definition is None:
            return []
        if "anyOf" in definition:
            return [ref["$ref"].rsplit("/", 1)[1] for ref in definition["anyOf"]]
        # A union of one member is inlined by the schema generator: find the definition it repeats.
        return [name for name, other in self.defs.items() if other == definition and name != union]

    def _by_method(self, union: str) -> dict[str, str]:
        members = {}
        for name in self._members(union):
            method = self.defs[name].get("properties", {}).get("method", {}).get("const")
            if method:
                members[method] = name
        return members

    def complete_method(self, method: Any) -> Any:
        """A method name cut short (``"server/disc"``) completed, if only one method of the era starts so."""
        if not isinstance(method, TruncatedStr):
            return method
        known = {m for table in (*self.requests.values(), *self.notifications.values()) for m in table}
        candidates = [m for m in known if m.startswith(method)]
        return candidates[0] if len(candidates) == 1 else method

    def validator(self, definition: str) -> Any:
        """A validator of ``#/$defs/<definition>``; the registry resolves every ``$ref`` into ``$defs``."""
        if definition not in self._validators:
            schema = {"$ref": f"{self.uri}#/$defs/{definition}"}
            self._validators[definition] = LenientValidator(schema, registry=self.registry)
        return self._validators[definition]

    def check(self, definition: str, instance: Any, at: str = "$") -> list[Problem]:
        problems = []
        for error in self.validator(definition).iter_errors(instance):
            for leaf in _leaves(error):
                path = at + "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]" for p in leaf.absolute_path)
                schema_path = "/".join(str(p) for p in leaf.absolute_schema_path)
                problems.append(Problem(definition, path, schema_path, leaf.message))
        return problems

    def request_definition(self, method: str, direction: str | None) -> str | None:
        directions = [direction] if direction else [CLIENT_TO_SERVER, SERVER_TO_CLIENT]
        for way in directions:
            if method in self.requests[way]:
                return self.requests[way][method]
        return None

    def result_definitions(self, request_definition: str) -> tuple[str, str | None]:
        """``(definition, kind)`` for the response to ``request_definition``: kind ``"response"`` (a whole
        message, 2026-07-28's ``<Name>ResultResponse``) or ``"result"`` (its ``result`` member)."""
        stem = request_definition.removesuffix("Request")
        if f"{stem}ResultResponse" in self.defs:
            return f"{stem}ResultResponse", "response"
        if f"{stem}Result" in self.defs:
            return f"{stem}Result", "result"
        return "EmptyResult", "result"

    def error_definitions(self, code: Any) -> list[tuple[str, str]]:
        """The definitions the schema gives errors of ``code``: ``(name, "response" | "error")``."""
        found = []
        for name, definition in self.defs.items():
            props = definition.get("properties", {})
            if props.get("code", {}).get("const") == code:
                found.append((name, "error"))
                continue
            error = props.get("error", {})
            for part in error.get("allOf", []):
                if part.get("properties", {}).get("code", {}).get("const") == code:
                    found.append((name, "response"))
        return found


@functools.cache
def era_schema(era: str) -> EraSchema:
    return EraSchema(era)


def message_kind(message: dict[str, Any]) -> str:
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "error" in message:
        return "error"
    return "response" if "result" in message else "invalid"


@dataclass
class Verdict:
    """What validating one message found: the definitions it was held to and what broke them."""

    definitions: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems


def validate_message(
    message: dict[str, Any],
    era: str,
    direction: str | None,
    answered: dict[str, Any] | None = None,
    answered_method: str | None = None,
) -> Verdict:
    """Validate ``message`` against the schema of ``era``.

    ``direction``: ``client->server``, ``server->client`` or ``None`` (unknown: either side's union).
    ``answered``: the request a response answers (found by id in the same capture), or only its method.
    """
    schema = era_schema(era)
    verdict = Verdict()

    def hold(definition: str, instance: Any, at: str = "$") -> None:
        verdict.definitions.append(definition)
        verdict.problems.extend(schema.check(definition, instance, at))

    def missing(definition: str, text: str) -> None:
        verdict.problems.append(Problem(definition, "$", "-", text))

    kind = message_kind(message)
    method = schema.complete_method(message.get("method"))
    if kind == "request":
        hold("JSONRPCRequest", message)
        definition = schema.request_definition(method, direction) if isinstance(method, str) else None
        if definition:
            hold(definition, message)
        elif not isinstance(method, TruncatedStr):
            unions = {CLIENT_TO_SERVER: "ClientRequest", SERVER_TO_CLIENT: "ServerRequest"}
            union = unions[direction] if direction else "ClientRequest/ServerRequest"
            if direction and unions[direction] not in schema.defs:
                missing(union, f"{era} defines no {union}: no request may be sent {direction}")
            else:
                missing(union, f"{method!r} is not a method of {era}'s {union}")
    elif kind == "notification":
        hold("JSONRPCNotification", message)
        ways = [direction] if direction else [CLIENT_TO_SERVER, SERVER_TO_CLIENT]
        names = [schema.notifications[w][method] for w in ways if method in schema.notifications[w]]
        if names:
            hold(names[0], message)
        elif not isinstance(method, TruncatedStr):
            union = {CLIENT_TO_SERVER: "ClientNotification", SERVER_TO_CLIENT: "ServerNotification"}.get(
                direction or "", "ClientNotification/ServerNotification"
            )
            missing(union, f"{method!r} is not a notification of {era}'s {union}")
    elif kind == "response":
        request_method = schema.complete_method(answered.get("method") if answered else answered_method)
        request_direction = None
        if direction:
            request_direction = CLIENT_TO_SERVER if direction == SERVER_TO_CLIENT else SERVER_TO_CLIENT
        definition = schema.request_definition(request_method, request_direction) if request_method else None
        if definition:
            result_definition, part = schema.result_definitions(definition)
            task = answered and isinstance(answered.get("params"), dict) and "task" in answered["params"]
            if part == "response":
                hold(result_definition, message)
            else:
                hold("JSONRPCResultResponse", message)
                if task and "CreateTaskResult" in schema.defs:
                    problems = schema.check(result_definition, message.get("result"), "$.result")
                    if problems and schema.check("CreateTaskResult", message.get("result"), "$.result"):
                        verdict.problems.extend(problems)
                    verdict.definitions.append(f"{result_definition} | CreateTaskResult")
                else:
                    hold(result_definition, message.get("result"), "$.result")
        else:
            hold("JSONRPCResultResponse", message)
            union = "ClientResult" if direction == CLIENT_TO_SERVER else "ServerResult"
            hold(union, message.get("result"), "$.result")
    elif kind == "error":
        hold("JSONRPCErrorResponse", message)
        error = message.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        for name, part in schema.error_definitions(code):
            if part == "response":
                hold(name, message)
            else:
                hold(name, error, "$.error")
    else:
        hold("JSONRPCMessage", message)
    return verdict


def protocol_version_of(message: dict[str, Any]) -> str | None:
    """The protocol version a message names itself, if it does (see ``era_of``)."""
    params = message.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict):
            version = meta.get("io.modelcontextprotocol/protocolVersion")
            if isinstance(version, str) and not isinstance(version, TruncatedStr):
                return version
        if message.get("method") == "initialize" and isinstance(params.get("protocolVersion"), str):
            return params["protocolVersion"]
    if message.get("method") == "server/discover":
        return MODERN
    result = message.get("result")
    if isinstance(result, dict):
        if isinstance(result.get("resultType"), str):
            return MODERN
        if isinstance(result.get("supportedVersions"), list):
            return MODERN
        if isinstance(result.get("protocolVersion"), str) and "serverInfo" in result:
            return result["protocolVersion"]
    return None


def era_of(version: str | None) -> str | None:
    """The schema a protocol version is checked against: up to 2025-11-25 the handshake era, after it the
    2026-07-28 one (a version the course does not know, like ``2099-01-01``, travels in 2026-07-28's ``_meta``)."""
    if version is None or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", version):
        return None
    return LEGACY if version <= LEGACY else MODERN


# --- the messages a solved lesson shows -------------------------------------------------------------------------

_DIRECTIONS = [
    (re.compile(r"client → server|client->server|→ (?:POST|GET|DELETE)\b|^sent\b", re.M), CLIENT_TO_SERVER),
    (re.compile(r"server → client|server->client|← \d{3}\b|^received\b|on the GET →|^data: ", re.M), SERVER_TO_CLIENT),
]
_ANSWERS = re.compile(r"\b(?:result|error) of (?:#\d+ )?([A-Za-z][\w/.\-]*|\?)")
_LABEL = re.compile(r"\b(\d{4}-\d{2}-\d{2}):[ \t]*$")
_HEADER_VERSION = re.compile(r"^\s*mcp-protocol-version:\s*(\S+)", re.I | re.M)
_TAG = re.compile(r"<[^>]+>")


@dataclass
class Shown:
    """One JSON-RPC message as a lesson shows it, with what its output says about it."""

    lesson: str
    cell: str
    source: str  # text/plain, text/html, stream, widget, markdown
    output: int  # the index of the output in the cell (-1: the cell's own text)
    message: dict[str, Any]
    cut: bool
    direction: str | None = None
    answers: str | None = None  # the method the headline says a response answers
    label: str | None = None  # an era written beside the message ("2026-07-28: {...}")
    header_version: str | None = None  # MCP-Protocol-Version in the same HTTP view
    era: str | None = None
    era_reason: str = ""
    request: dict[str, Any] | None = None  # the request a response answers, found by id in the same output

    @property
    def kind(self) -> str:
        return message_kind(self.message)

    @property
    def id(self) -> Any:
        return self.message.get("id")

    def key(self) -> tuple[str, str, str]:
        """What an entry of the test's lists names: lesson, cell and what (kind, method, id)."""
        return (self.lesson, self.cell, describe(self.message))


def describe(message: dict[str, Any]) -> str:
    kind = message_kind(message)
    ident = json.dumps(plain(message.get("id"))) if "id" in message else "-"
    if kind in ("request", "notification"):
        return f"{kind} {message.get('method')} id={ident}"
    if kind == "error":
        error = message.get("error")
        code = error.get("code") if isinstance(error, dict) else "?"
        return f"error {code} id={ident}"
    return f"{kind} id={ident}"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _html_text(markup: str) -> str:
    import html

    return html.unescape(_TAG.sub("", markup))


def _widget_html(state: dict[str, Any], model_id: str) -> list[str]:
    """The HTML values of the widgets under ``model_id`` (the explorer's message view), in order."""
    found, todo, seen = [], [model_id], set()
    while todo:
        current = todo.pop(0)
        if current in seen or current not in state:
            continue
        seen.add(current)
        model = state[current]["state"]
        if state[current].get("model_name") == "HTMLModel" and isinstance(model.get("value"), str):
            found.append(model["value"])
        for value in model.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.startswith("IPY_MODEL_"):
                    todo.append(item.removeprefix("IPY_MODEL_"))
    return found


#: Where a message starts: every one of these in an output must lie inside a message that was read.
_MEMBER = re.compile(r'"jsonrpc"\s*:\s*"2\.0"')
#: (lesson, cell, source, text near it) of each ``"jsonrpc": "2.0"`` the reader could not place in a message.
UNREAD: list[tuple[str, str, str, str]] = []


def _messages_in(text: str, lesson: str, cell: str, source: str, output: int) -> list[Shown]:
    text = unbytes(text) if "b'" in text or 'b"' in text else text
    header = _HEADER_VERSION.search(text)
    shown, previous_end, spans = [], 0, []
    for start, end, value, cut in find_json_objects(text):
        spans.append((start, end))
        before = text[previous_end:start]
        direction, at = None, -1
        for pattern, way in _DIRECTIONS:
            for match in pattern.finditer(before):
                if match.start() > at:
                    direction, at = way, match.start()
        answers = _ANSWERS.findall(before)
        line = before.rsplit("\n", 1)[-1]
        label = _LABEL.search(line)
        shown.append(
            Shown(
                lesson,
                cell,
                source,
                output,
                value,
                cut,
                direction,
                answers[-1] if answers and answers[-1] != "?" else None,
                label.group(1) if label else None,
                header.group(1) if header else None,
            )
        )
        previous_end = end
    if source != "markdown":  # prose may name the member; an output shows messages
        for member in _MEMBER.finditer(text):
            if not any(start < member.start() < end for start, end in spans):
                UNREAD.append((lesson, cell, source, text[max(0, member.start() - 80) : member.end() + 80]))
    _pair(shown)
    return shown


def _pair(shown: list[Shown]) -> None:
    """Give each response the request it answers: the last one before it with its id, sent the other way."""
    for index, wire in enumerate(shown):
        if wire.kind not in ("response", "error") or isinstance(wire.id, Folded) or "id" not in wire.message:
            continue
        for earlier in reversed(shown[:index]):
            if earlier.kind == "request" and earlier.id == wire.id:
                if wire.direction and earlier.direction and wire.direction == earlier.direction:
                    continue
                wire.request = earlier.message
                break


def lesson_messages(path: Path) -> list[Shown]:
    """Every JSON-RPC message the stored outputs (and the markdown) of one solved lesson show."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    lesson = path.name.split("_", 1)[0]
    widgets = notebook.get("metadata", {}).get("widgets", {})
    state = widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    found: list[Shown] = []
    for cell in notebook["cells"]:
        cell_id = cell.get("id", "?")
        if cell["cell_type"] == "markdown":
            found += _messages_in(_text(cell["source"]), lesson, cell_id, "markdown", -1)
            continue
        if cell["cell_type"] != "code":
            continue
        in_cell: list[Shown] = []
        for number, output in enumerate(cell.get("outputs", [])):
            if output["output_type"] == "stream":
                in_cell += _messages_in(_text(output["text"]), lesson, cell_id, "stream", number)
                continue
            data = output.get("data", {})
            if output["output_type"] == "error":
                in_cell += _messages_in(output.get("evalue", ""), lesson, cell_id, "error", number)
                continue
            messages = _messages_in(_text(data.get("text/plain", "")), lesson, cell_id, "text/plain", number)
            if not messages and "text/html" in data:
                messages = _messages_in(_html_text(_text(data["text/html"])), lesson, cell_id, "text/html", number)
            view = data.get("application/vnd.jupyter.widget-view+json")
            if view:
                known = {json.dumps(plain(m.message), sort_keys=True) for m in messages}
                for markup in _widget_html(state, view.get("model_id", "")):
                    for extra in _messages_in(_html_text(markup), lesson, cell_id, "widget", number):
                        if json.dumps(plain(extra.message), sort_keys=True) not in known:
                            messages.append(extra)
            in_cell += messages
        found += in_cell
    return found


def decide_era(shown: list[Shown], cell_eras: dict[tuple[str, str], tuple[str, str]]) -> None:
    """Set ``era`` and ``era_reason`` of every message; see the test module's docstring for the order."""
    by_output: dict[tuple[str, str, int], list[Shown]] = {}
    for wire in shown:
        by_output.setdefault((wire.lesson, wire.cell, wire.output), []).append(wire)
    for group in by_output.values():
        own = {id(w): era_of(protocol_version_of(w.message)) for w in group}
        view = {era for era in own.values() if era}
        for wire in group:
            request_era = era_of(protocol_version_of(wire.request)) if wire.request else None
            cell = cell_eras.get((wire.lesson, wire.cell))
            for era, reason in (
                (own[id(wire)], "the message names its version"),
                (request_era, "the request it answers names its version"),
                (era_of(wire.label), "the output labels it"),
                (era_of(wire.header_version), "MCP-Protocol-Version of its HTTP exchange"),
                (next(iter(view)) if len(view) == 1 else None, "the other messages of its output name it"),
                (cell[0] if cell else None, f"the lesson's context: {cell[1]}" if cell else ""),
            ):
                if era:
                    wire.era, wire.era_reason = era, reason
                    break
