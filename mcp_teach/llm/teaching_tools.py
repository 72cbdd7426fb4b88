"""Pick a tool for an operation, fill its arguments from its schema, read what it returned.

Also the turn's two records every rule module shares: a :class:`PastToolCall` (a call made since the question,
and its result) and the :class:`Reply` the model sends.

The model knows no tool names. For every operation it scores each listed tool
on keyword matches (:data:`OPERATIONS`):

- a word of the tool's **name** (``calculator_add``, ``addNumbers`` -> ``add``): 4 points;
- a **parameter name** (``base``, ``exponent``, ``divisor``, ...): 2 points;
- a word of the **description** (``"Add two numbers (a + b)."``): 1 point.

Chinese keywords (``加``, ``次方``, ...) count when they appear anywhere in the
description (OpenAI tool names are ASCII). Only tools that can take the operands qualify: enough
number-typed parameters (``required`` ones first, then the rest in schema
order) and no required parameter left without a value. The highest score
wins, the first listed tool on a tie, and a tool the user named gets a bonus.
No qualifying tool means the operation cannot be done: the model never invents
a tool name.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_teach.wire.messages import json_or_none


@dataclass(frozen=True)
class Operation:
    """What the model knows about one operation."""

    arity: int
    #: English words, parameter names and symbols; matched against whole words of names and descriptions.
    words: frozenset[str]
    #: Chinese keywords, matched anywhere in the description.
    chinese: tuple[str, ...]


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of a literal list: ``"add plus +"`` -> {add, plus, +}."""
    return frozenset(text.split())


OPERATIONS: dict[str, Operation] = {
    "add": Operation(2, word_set("add adds addition plus sum total addend augend summand +"), ("加", "求和")),
    "subtract": Operation(
        2, word_set("subtract subtracts subtraction minus difference minuend subtrahend - −"), ("减",)
    ),
    "multiply": Operation(
        2, word_set("multiply multiplies multiplication times product factor multiplier multiplicand * ×"), ("乘",)
    ),
    "divide": Operation(
        2, word_set("divide divides division quotient ratio dividend divisor numerator denominator / ÷"), ("除",)
    ),
    "power": Operation(2, word_set("power pow exponent exponentiation exponentiate raise base ^ **"), ("次方", "幂")),
    "sqrt": Operation(1, word_set("sqrt root radical radicand √"), ("平方根", "开方", "根号")),
    "modulo": Operation(2, word_set("mod modulo modulus remainder %"), ("余数", "取余", "取模")),
}

#: Parameter names that mean "the second operand": a tool ``power(exponent, base)`` still gets base first.
SECOND_OPERAND_NAMES = frozenset({"exponent", "divisor", "denominator", "subtrahend"})
#: Bonus for a tool the user named in the question ("use add_numbers to add 1 and 2").
NAMED_BONUS = 8


@dataclass(frozen=True)
class Tool:
    """One entry of the request's ``tools``: ``{"type": "function", "function": {...}}``."""

    name: str
    description: str
    properties: Mapping[str, Any]
    required: tuple[str, ...]

    def parameters(self) -> list[str]:
        """Parameter names: ``required`` ones first (in that order), then the other properties."""
        return [*self.required, *(name for name in self.properties if name not in self.required)]

    def schema(self, parameter: str) -> Any:
        return self.properties.get(parameter, {})


def read_tools(raw_tools: Any) -> list[Tool]:
    """The function tools of a request; entries that are not ``{"type": "function", ...}`` are skipped."""
    tools = []
    for entry in raw_tools if isinstance(raw_tools, list) else []:
        function = entry.get("function") if isinstance(entry, Mapping) and entry.get("type") == "function" else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters") if isinstance(function.get("parameters"), Mapping) else {}
        properties = parameters.get("properties") if isinstance(parameters.get("properties"), Mapping) else {}
        required = parameters.get("required") if isinstance(parameters.get("required"), list) else []
        description = function.get("description") if isinstance(function.get("description"), str) else ""
        names = tuple(name for name in required if isinstance(name, str))
        tools.append(Tool(function["name"], description, properties, names))
    return tools


def accepts(schema: Any, json_type: str) -> bool:
    """True if a parameter schema takes ``"number"`` or ``"string"`` values; an untyped one takes anything."""
    if not isinstance(schema, Mapping):
        return True
    branches = schema.get("anyOf") or schema.get("oneOf")
    if "type" not in schema and isinstance(branches, list):
        return any(accepts(branch, json_type) for branch in branches)
    if (declared := schema.get("type")) is None:
        return True
    types = set(declared) if isinstance(declared, list) else {declared}
    return bool(types & ({"number", "integer"} if json_type == "number" else {"string"}))


def format_number(value: float) -> str:
    """``3.0`` -> ``"3"``, ``2.5`` -> ``"2.5"``, ``0.30000000000000004`` -> ``"0.3"`` (at most 12 digits)."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else format(value, ".12g")


def json_number(value: float) -> int | float:
    """Whole numbers go to tools as JSON integers (``3``, not ``3.0``); others stay floats."""
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def operand_parameters(tool: Tool, arity: int) -> list[str] | None:
    """The parameters that receive the operands, in operand order; ``None`` if the tool cannot take them."""
    numeric = [name for name in tool.parameters() if accepts(tool.schema(name), "number")]
    chosen = sorted(numeric[:arity], key=lambda name: name.lower() in SECOND_OPERAND_NAMES)
    return None if len(chosen) < arity or any(name not in chosen for name in tool.required) else chosen


def name_words(name: str) -> set[str]:
    """``calculator_add`` -> {calculator, add}; ``addNumbers`` -> {add, numbers}."""
    return set(re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).lower()))


def _description_words(description: str) -> set[str]:
    """Whitespace-separated words without surrounding punctuation, so ``"(a + b)."`` gives ``+``."""
    return {word.strip("()[]{},.;:!?'\"`") for word in description.lower().split()}


def score(tool: Tool, operation: str) -> int:
    """How strongly the tool's name (4), parameter names (2) and description (1) suggest the operation."""
    keywords = OPERATIONS[operation]
    in_name = bool(name_words(tool.name) & keywords.words)
    in_parameters = bool({name.lower() for name in tool.properties} & keywords.words)
    in_description = bool(_description_words(tool.description) & keywords.words)
    return 4 * in_name + 2 * in_parameters + (in_description or any(w in tool.description for w in keywords.chinese))


def choose_tool(operation: str, tools: Iterable[Tool], named: Iterable[str] = ()) -> Tool | None:
    """The best-scoring tool that can take the operation's operands, or ``None``."""
    arity = OPERATIONS[operation].arity
    fitting = [tool for tool in tools if score(tool, operation) and operand_parameters(tool, arity) is not None]
    return max(fitting, key=lambda tool: score(tool, operation) + NAMED_BONUS * (tool.name in named), default=None)


def operand_arguments(tool: Tool, operands: list[float]) -> dict[str, Any]:
    """``{"a": 1, "b": 2}`` for ``calculator_add``; ``{"base": 2, "exponent": 10}`` for ``power``."""
    names = operand_parameters(tool, len(operands)) or []
    return {name: json_number(value) for name, value in zip(names, operands, strict=False)}


# --- A tool the user names: "use get_weather for Paris", "call echo with text 'hi'" ---------------------------------

_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'|“([^”]*)”|‘([^’]*)’|「([^」]*)」")
_PAIR = re.compile(r"([A-Za-z_]\w*)\s*[=:：]\s*(\"[^\"]*\"|'[^']*'|[^\s,，;；]+)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
#: Words skipped at the start of the free text after a tool name.
_FILLERS = re.compile(r"^(?:(?:for|with|about|on|in|at|to|of|the|a|an|please)\b|查询|查|一下|看看|给|为|对|用|把|\s)+")


def _mention(tool: Tool, question: str) -> re.Match[str] | None:
    """Where the tool's exact name appears in the question as a word of its own."""
    return re.search(rf"(?<![\w-]){re.escape(tool.name)}(?![\w-])", question, flags=re.IGNORECASE)


def named_tools(question: str, tools: Iterable[Tool]) -> list[Tool]:
    """Listed tools whose name appears in the question, in order of appearance."""
    mentions = [(match.start(), tool) for tool in tools if (match := _mention(tool, question))]
    return [tool for _, tool in sorted(mentions, key=lambda mention: mention[0])]


def named_call_arguments(tool: Tool, question: str) -> tuple[dict[str, Any], list[str]]:
    """Arguments for a tool the user named, and the required parameters left without a value.

    Only the text after the tool's name counts. Each parameter, in
    :meth:`Tool.parameters` order, takes the first of:

    1. ``name=value`` or ``name: value`` written for it;
    2. a number parameter: the next number;
    3. a string parameter: the next quoted text, else (once) the free text: what
       follows the name up to the first punctuation, without leading words such
       as "for", "with", "查" or the parameter's own name.
    """
    match = _mention(tool, question)
    rest = question[match.end() :] if match else question
    parameters = {name.lower() for name in tool.parameters()}
    pairs = {name.lower(): value.strip("\"'") for name, value in _PAIR.findall(rest) if name.lower() in parameters}
    rest = _PAIR.sub(lambda pair: " " if pair.group(1).lower() in parameters else pair.group(0), rest)
    quoted = ["".join(groups) for groups in _QUOTED.findall(rest)]  # only one group of each match is non-empty
    unquoted = _QUOTED.sub(" ", rest)
    numbers = [number for number in map(float, _NUMBER.findall(unquoted)) if math.isfinite(number)]
    free_text = re.split(r"[,.;:!?，。；：！？\n]", unquoted, maxsplit=1)[0]
    arguments: dict[str, Any] = {}
    for name in tool.parameters():
        schema = tool.schema(name)
        free = _free_text(free_text, name)
        if name.lower() in pairs:
            arguments[name] = _typed(pairs[name.lower()], schema)
        elif accepts(schema, "number") and numbers:
            arguments[name] = json_number(numbers.pop(0))
        elif accepts(schema, "string") and (quoted or free):
            arguments[name] = quoted.pop(0) if quoted else free
            free_text = ""
    return arguments, [name for name in tool.required if name not in arguments]


def _free_text(text: str, parameter: str) -> str:
    """``"with text hello"`` -> ``"hello"`` for the parameter ``text``; ``"for Paris"`` -> ``"Paris"``."""
    text = _FILLERS.sub("", text)
    text = re.sub(rf"^{re.escape(parameter)}\b", "", text, flags=re.IGNORECASE)
    return _FILLERS.sub("", text).strip()


def _typed(text: str, schema: Any) -> Any:
    """A ``name=value`` value as the JSON type the schema asks for (number, boolean, else string)."""
    if accepts(schema, "number") and _NUMBER.fullmatch(text) and math.isfinite(float(text)):
        return json_number(float(text))
    if isinstance(schema, Mapping) and schema.get("type") == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


# --- The turn: calls made, results read, the reply -----------------------------------------------------------------


@dataclass(frozen=True)
class PastToolCall:
    """A tool call made after the question, and the content of the ``tool`` message that answered it."""

    name: str
    content: Any
    #: The call's arguments (``{}`` if they were not a JSON object).
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """The assistant message to send: text, or tool calls as (name, arguments)."""

    content: str | None = None
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()


#: Text that starts like this is a failure report ("Error: ...", "Cannot divide by zero: ...").
_FAILURE = re.compile(
    r"^\s*(?:error|tool error|failed|failure|cannot|can't|could not|unable|invalid|unknown tool|exception|traceback"
    r"|错误|失败|无法|不能)",
    flags=re.IGNORECASE,
)


@dataclass(frozen=True)
class Outcome:
    """What a tool result means to the model."""

    text: str
    number: float | None = None
    failed: bool = False

    def shown(self) -> str:
        """The text, or just the number when the text is nothing else (``"11.0"`` is shown as ``11``)."""
        return format_number(self.number) if self.number is not None and _NUMBER.fullmatch(self.text) else self.text


def read_result(content: Any) -> Outcome:
    """Read a ``role: "tool"`` message's content; anything unexpected becomes text, never an exception.

    - a JSON object: ``isError``/``is_error``/``error`` mark a failure; the number is read from
      ``structuredContent`` (``{"result": 3.0}``), ``result`` or ``content`` (MCP text blocks);
    - a JSON number or text that is only a number (``"3.0"``): that number;
    - text that starts like an error (``"Error: ..."``, ``"Cannot divide by zero: ..."``): a failure;
    - other text with exactly one number in it (``"Result: 3"``): that number; otherwise just text.
    """
    if isinstance(content, bool) or content is None:
        return Outcome(json.dumps(content))
    if isinstance(content, int | float):
        if not math.isfinite(content):
            return Outcome(f"{content} is not a finite number", failed=True)
        return Outcome(str(content), float(content))
    if isinstance(content, Mapping):
        return _read_object(content)
    if isinstance(content, list):
        return read_result("\n".join(_part_text(part) for part in content))
    text = str(content).strip()
    parsed = json_or_none(text)  # '{"result": 3.0}', '3.0', '"text"': read what the JSON holds
    return _read_text(text) if parsed is None else read_result(parsed)


def _part_text(part: Any) -> str:
    """The text of an OpenAI content part or MCP content block (``{"type": "text", "text": ...}``)."""
    return str(part.get("text", "")) if isinstance(part, Mapping) else str(part)


def _read_object(data: Mapping[str, Any]) -> Outcome:
    if data.get("isError") or data.get("is_error") or data.get("error"):
        details = data.get("error") or data.get("content") or data.get("message")
        message = read_result(details).text if details else json.dumps(data, ensure_ascii=False)
        return Outcome(_strip_error_prefix(message), failed=True)
    for key in ("structuredContent", "structured_content", "result", "content"):
        if data.get(key) is not None:
            return read_result(data[key])
    return Outcome(json.dumps(data, ensure_ascii=False))


def _read_text(text: str) -> Outcome:
    if not text:
        return Outcome("(empty)")
    if _NUMBER.fullmatch(text):
        return Outcome(text, float(text))
    if _FAILURE.match(text):
        return Outcome(_strip_error_prefix(text), failed=True)
    numbers = _NUMBER.findall(text)
    return Outcome(text, float(numbers[0])) if len(numbers) == 1 else Outcome(text)


def _strip_error_prefix(text: str) -> str:
    """``"Error: Cannot divide by zero"`` -> ``"Cannot divide by zero"``: the answer already says it failed."""
    return re.sub(r"^\s*(?:tool )?error\s*:\s*", "", text, flags=re.IGNORECASE)
