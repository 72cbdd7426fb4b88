"""The offline teaching model: a few pages of rules that answer like a tool-calling LLM.

It is **not** a language model. :func:`complete` takes the JSON body of an
OpenAI chat-completions request and returns a ``chat.completion`` JSON dict,
so the course runs without an API key. It never does arithmetic itself: every
number in an answer comes back from a tool.

It remembers nothing between calls. Each call it re-reads the conversation:

1. **The question** is the last ``user`` message; what came after it (assistant
   ``tool_calls`` and the ``tool`` messages answering them) is this turn's work so far.
   ``system`` messages (the application's prompt, the server's ``instructions``)
   are not read: rules follow no instructions, so the answer stays the same.
   Only **documents** are read in every message: text inside ``<document source="...">``
   blocks (:mod:`~mcp_teach.llm.teaching_docs`), put there by the application (a resource
   it read, a prompt's embedded resource). A last ``user`` message that holds nothing but
   documents is context, not the question: the ``user`` message before it asks.
2. **Plan** (:func:`_plan`), first rule that applies:

   a. arithmetic (:mod:`~mcp_teach.llm.teaching_parse`) whose every operation
      has a fitting tool (:mod:`~mcp_teach.llm.teaching_tools`): one step per
      operation, e.g. ``multiply(3, 4)`` then ``subtract(<result>, 5)``;
   b. a listed tool named in the question ("use get_weather for Paris"): one
      call, arguments read from the question (or, if a required one is
      missing, a question back). A named tool also wins over arithmetic that
      does not use it ("call echo with '1+2'");
   c. arithmetic without a fitting tool: say which operation is missing;
   d. a greeting: say hello and list the tools;
   e. documents (:mod:`~mcp_teach.llm.teaching_docs`, lesson 07): answer from a document in
      the conversation (the best-matching sentence and where it came from, or a summary),
      or fetch one first with a search (or list) tool and a get (or read) tool;
   f. anything else: say what the tools can do;
   g. (tried first, lesson 10) **look up, then compute**: a question of the form "<lookup>, then <arithmetic on
      it / that number>" (``then`` after a comma, period, semicolon, ``?`` or ``!``, or ``and then``; in Chinese
      ``然后``/``接着``/``再`` after a punctuation mark, on ``这个数``/``它``/``结果``) whose lookup part
      is no arithmetic, with a finder and a reader among the tools (two servers' tools, in lesson 10). The
      lookup runs as rule e (search, read); the number the answer rests on (teaching_docs rule 3) replaces
      ``it``/``that number``/``that`` in the arithmetic part, which runs as rule a; the final answer is the
      lookup's answer followed by the computation. A lookup without a number ends with a sentence saying so.

3. **Replay** (:func:`_replay`): the tool calls already made are matched, in
   order, with the plan's steps. A failed step ends the turn with an
   explanation. Otherwise every step whose operands are known and that has not
   run yet is called now, all in one message (``1 + 2 and 3 * 4`` gives two
   parallel calls; a chain gives one call per round). When every step has run,
   the model writes the final answer.

4. **Naive obedience** (lesson 12, :mod:`~mcp_teach.llm.teaching_attacks`): an ``<IMPORTANT>`` block in a tool's
   description that says to read a file and pass its content as one of the tool's parameters is obeyed (the file
   is read with a file-reading tool, its content sent along); one in a tool result that names another tool gets
   that tool called. Those calls are left out when steps 2-3 read the turn. Without such a block, nothing changes.

``tool_choice``: ``"none"`` turns a planned call into a sentence saying so;
``{"type": "function", "function": {"name": N}}`` leaves only tool ``N``, and
``"required"`` works with all tools. Both *force* a call when the plan is
text: the named tool (for ``"required"``: the tool named in the question,
else the first listed) with arguments read from the question. Unlike a real
model, a forced model stops calling once the plan is done, so a loop that
keeps ``tool_choice`` does not run forever.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_teach.llm import teaching_attacks as attacks
from mcp_teach.llm import teaching_docs as docs
from mcp_teach.llm import teaching_text as text
from mcp_teach.llm.openai_tools import tool_call
from mcp_teach.llm.teaching_parse import Expr, Op, lacking, parse_arithmetic
from mcp_teach.llm.teaching_tools import (
    OPERATIONS,
    Outcome,
    PastToolCall,
    Reply,
    Tool,
    choose_tool,
    named_call_arguments,
    named_tools,
    operand_arguments,
    read_result,
    read_tools,
)

MODEL_NAME = "mcp-teach-offline"
#: ``created`` of every completion: 2026-01-01T00:00:00Z. A fixed time (not the clock) keeps reruns identical.
CREATED = 1767225600
#: What a call gets as result when no ``tool`` message answered it.
NO_RESULT = "Error: no tool message answered this call."

_GREETING = re.compile(
    r"^\W*(?:(?:hi|hello|hey|howdy|greetings|good (?:morning|afternoon|evening))\b|你好|您好|嗨|哈喽|早上好|晚上好)",
    flags=re.IGNORECASE,
)


@dataclass(frozen=True)
class Ref:
    """An operand that is the result of an earlier step."""

    step: int


@dataclass(frozen=True)
class Step:
    """One tool call of the plan: an operation on operands, or a named tool with fixed arguments."""

    tool: Tool
    expr: Op | None = None  # the operation as the question wrote it; None for a named tool
    operands: tuple[float | Ref, ...] = ()
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def level(self, steps: list[Step]) -> int:
        """1 if the step needs no other step's result; else one more than the steps it waits for."""
        return 1 + max((steps[o.step].level(steps) for o in self.operands if isinstance(o, Ref)), default=0)


@dataclass
class Plan:
    """The steps, and for each independent question the index of its last step."""

    steps: list[Step]
    outputs: list[int]

    def call_order(self) -> list[int]:
        """Steps in the order they are called: round by round, in plan order within a round."""
        return sorted(range(len(self.steps)), key=lambda index: self.steps[index].level(self.steps))


def complete(request: dict) -> dict:
    """The ``chat.completion`` JSON dict answering an OpenAI chat-completions request body."""
    raw_messages = request.get("messages")
    messages = [m for m in raw_messages if isinstance(m, Mapping)] if isinstance(raw_messages, list) else []
    question, documents, exchanges = _read_turn(messages)
    tools = read_tools(request.get("tools"))
    followed = attacks.split(exchanges, tools)  # rule 4: what <IMPORTANT> blocks made the model do
    tool_choice = request.get("tool_choice", "auto")
    reply = followed.amend(_respond(question, followed.rest, tools, tool_choice, documents), tool_choice)
    return _completion(request, messages, reply)


# --- Reading the conversation ------------------------------------------------------------------------------------


def _message_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return content if isinstance(content, str) else ""


def _read_turn(messages: list[Mapping[str, Any]]) -> tuple[str, list[docs.Document], list[PastToolCall]]:
    """The question, the documents in the messages, and the tool calls made since the last user message (in call
    order) with their results."""
    documents: list[docs.Document] = []
    questions: dict[int, str] = {}  # user message index -> its text outside document blocks
    only_documents = False  # the last user message held documents and nothing else
    for index, message in enumerate(messages):
        if message.get("role") != "tool":
            found, rest = docs.split_documents(_message_text(message.get("content")))
            documents += found
            if message.get("role") == "user":
                questions[index] = rest if found else _message_text(message.get("content"))
                only_documents = bool(found) and not rest
    users = list(questions)
    start = users[-1] if users else len(messages)
    question = questions[start] if users else ""
    if only_documents:  # context, not a question: the user message before it asks
        question = next((questions[index] for index in reversed(users[:-1]) if questions[index]), "")
    later = messages[start + 1 :]
    results = {str(m.get("tool_call_id")): m.get("content") for m in later if m.get("role") == "tool"}
    exchanges = []
    for message in later:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                content = results.get(str(call.get("id")), NO_RESULT)
                exchanges.append(PastToolCall(str(function.get("name")), content, _call_arguments(function)))
    return question, documents, exchanges


def _call_arguments(function: Mapping[str, Any]) -> Mapping[str, Any]:
    """A tool call's ``arguments`` JSON string as a dict; ``{}`` if it is not one."""
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except (TypeError, ValueError):
        return {}
    return arguments if isinstance(arguments, Mapping) else {}


# --- Deciding ----------------------------------------------------------------------------------------------------


#: Rule g: "<lookup>, then <arithmetic on it>".
_LOOKUP_THEN = re.compile(
    r"^(?P<lookup>.+?)(?:[.,;?!。，；？！]\s*|\s+and\s+)(?:then\s+|然后|接着|再)"
    r"(?P<compute>.*?(?:\b(?:that number|that|it)\b|这个数|那个数|结果|它).*)$",
    flags=re.IGNORECASE | re.DOTALL,
)
_PRONOUN = re.compile(r"\b(?:that number|that|it)\b|(?:这个|那个)数字?|结果|它", flags=re.IGNORECASE)


def _lookup_then_compute(
    question: str, exchanges: list[PastToolCall], tools: list[Tool], documents: list[docs.Document], chinese: bool
) -> Reply | None:
    """Rule g of the module docstring; ``None`` if the question is not of its form."""
    match = _LOOKUP_THEN.match(question.strip())
    retrieval = docs.retrieval_tools(tools)
    if match is None or retrieval is None or parse_arithmetic(match["lookup"]) or not _open(match["lookup"], tools):
        return None
    lookup, compute = match.group("lookup"), match.group("compute")
    names = {retrieval.finder.name, retrieval.reader.name}
    done = next((i for i, exchange in enumerate(exchanges) if exchange.name not in names), len(exchanges))
    looked_up, computed = exchanges[:done], exchanges[done:]
    step = docs.respond(lookup, documents, looked_up, tools, chinese)
    if step is None or step.calls:
        return step
    if (number := docs.found_number(lookup, documents, looked_up, tools)) is None:
        return Reply(docs.NO_NUMBER[chinese].format(answer=step.content))
    plan = _arithmetic_plan(parse_arithmetic(_PRONOUN.sub(text.number(number), compute)), tools, set())
    if plan is None:
        return None
    reply = _replay(plan, computed, chinese)
    return reply if reply.calls else Reply(f"{step.content} {reply.content}")


def _respond(
    question: str, exchanges: list[PastToolCall], tools: list[Tool], tool_choice: Any, documents: list[docs.Document]
) -> Reply:
    """Plan, then replay the calls made so far; apply ``tool_choice``."""
    chinese = text.is_chinese(question)
    function = tool_choice.get("function") if isinstance(tool_choice, Mapping) else None
    if isinstance(function, Mapping):  # {"type": "function", "function": {"name": ...}}: only that tool
        tools = [tool for tool in tools if tool.name == function.get("name")]
    forced = _forced_tool(question, tools) if tool_choice == "required" or isinstance(function, Mapping) else None
    reply = None if forced else _lookup_then_compute(question, exchanges, tools, documents, chinese)
    if reply is None:
        plan = _plan(question, tools, forced, chinese)
        if isinstance(plan, Plan):
            reply = _replay(plan, exchanges, chinese)
        else:
            from_documents = _open(question, tools) and docs.respond(question, documents, exchanges, tools, chinese)
            reply = from_documents or (_summary(exchanges, chinese) if exchanges else plan)
    if reply.calls and tool_choice == "none":
        return Reply(text.say("tools_off", chinese, tools=", ".join(dict.fromkeys(name for name, _ in reply.calls))))
    return reply


def _open(question: str, tools: list[Tool]) -> bool:
    """Rule e may answer: the question is no arithmetic, names no tool and is no greeting (rules a-d come first)."""
    return not (parse_arithmetic(question) or named_tools(question, tools) or _GREETING.match(question))


def _forced_tool(question: str, tools: list[Tool]) -> Tool | None:
    """What a forcing ``tool_choice`` calls when the plan is only text: a tool named in the question, else the first."""
    return next(iter(named_tools(question, tools) or tools), None)


def _plan(question: str, tools: list[Tool], forced: Tool | None, chinese: bool) -> Plan | Reply:
    """Rules a-d and f of the module docstring, plus the forced call (rule e is applied by :func:`_respond`)."""
    named = named_tools(question, tools)
    named_names = {tool.name for tool in named}
    questions = parse_arithmetic(question)
    plan = _arithmetic_plan(questions, tools, named_names)
    if plan is not None and (not named or any(step.tool.name in named_names for step in plan.steps)):
        return plan  # a named tool the arithmetic does not use ("call echo with '1+2'") wins: rule b
    if tool := forced or (named[0] if named else None):
        arguments, missing = named_call_arguments(tool, question)
        if missing and tool is not forced:
            return Reply(text.say("missing", chinese, tool=tool.name, names=", ".join(missing)))
        return Plan([Step(tool, arguments=arguments)], outputs=[0])
    if questions:
        return Reply(_cannot_compute(questions, tools, chinese))
    if _GREETING.match(question):
        names = ", ".join(tool.name for tool in tools)
        return Reply(text.say("hello", chinese, tools=names) if tools else text.say("hello_no_tools", chinese))
    if not tools:
        return Reply(text.say("no_tools", chinese))
    usable = [op for op in OPERATIONS if choose_tool(op, tools)]
    if usable and (lack := lacking(question)):
        return Reply(text.say("lacks", chinese, what=text.LACKING[lack][chinese]))
    if unread := text.not_understood(question, usable, chinese):
        return Reply(unread)
    descriptions = text.tool_descriptions((tool.name, tool.description) for tool in tools)
    return Reply(text.say("only_tools", chinese, tools=descriptions))


def _arithmetic_plan(questions: list[Op], tools: list[Tool], named: set[str]) -> Plan | None:
    """One step per operation, operands before the operation; ``None`` if an operation has no tool."""
    steps: list[Step] = []

    def add_steps(expr: Expr) -> float | Ref | None:
        if not isinstance(expr, Op):
            return expr
        operands = [add_steps(operand) for operand in expr.operands]
        tool = choose_tool(expr.operation, tools, named)
        if tool is None or None in operands:
            return None
        steps.append(Step(tool, expr, tuple(operands)))
        return Ref(len(steps) - 1)

    outputs = [add_steps(expr) for expr in questions]
    if not outputs or not all(isinstance(output, Ref) for output in outputs):
        return None
    return Plan(steps, [output.step for output in outputs])


def _cannot_compute(questions: list[Op], tools: list[Tool], chinese: bool) -> str:
    """Rule c: name the operations no tool can do (or say there are no tools)."""
    expressions = ", ".join(text.expression(expr) for expr in questions)
    if not tools:
        return text.say("no_tools_to_compute", chinese, expression=expressions)
    missing = [op for op in OPERATIONS if any(_uses(expr, op) for expr in questions) and not choose_tool(op, tools)]
    names = " / ".join(text.OPERATION_NAMES[op][chinese] for op in missing)
    tool_names = ", ".join(tool.name for tool in tools)
    return text.say("no_tool_for", chinese, operations=names, expression=expressions, tools=tool_names)


def _uses(expr: Expr, operation: str) -> bool:
    return isinstance(expr, Op) and (expr.operation == operation or any(_uses(o, operation) for o in expr.operands))


# --- Replaying the calls made so far -----------------------------------------------------------------------------


def _replay(plan: Plan, exchanges: list[PastToolCall], chinese: bool) -> Reply:
    """Match the calls made with the plan; then report a failure, call the next steps, or answer."""
    order = plan.call_order()
    made = list(zip(exchanges, order[: len(exchanges)], strict=False))
    if len(exchanges) > len(order) or any(exchange.name != plan.steps[i].tool.name for exchange, i in made):
        return _summary(exchanges, chinese)  # not this plan's calls: report them as they are
    outcomes = {index: read_result(exchange.content) for exchange, index in made}
    for index in order:
        if index in outcomes and _failed(plan.steps[index], outcomes[index]):
            return Reply(_failure(plan, index, outcomes, chinese))
    waiting = {i: [o.step for o in plan.steps[i].operands if isinstance(o, Ref)] for i in order if i not in outcomes}
    if ready := [i for i, needs in waiting.items() if all(step in outcomes for step in needs)]:
        return Reply(calls=tuple((plan.steps[i].tool.name, _arguments(plan.steps[i], outcomes)) for i in ready))
    return Reply(_final_answer(plan, outcomes, chinese))


def _failed(step: Step, outcome: Outcome) -> bool:
    """A tool error, or an arithmetic step whose result has no number in it."""
    return outcome.failed or (step.expr is not None and outcome.number is None)


def _values(step: Step, outcomes: dict[int, Outcome]) -> list[float | None]:
    """The step's operands as numbers: written in the question, or returned by earlier steps."""
    known = {index: outcome.number for index, outcome in outcomes.items()}
    return [known.get(operand.step) if isinstance(operand, Ref) else operand for operand in step.operands]


def _arguments(step: Step, outcomes: dict[int, Outcome]) -> dict[str, Any]:
    """A named tool's fixed arguments, or the operands (all known: the step is ready) in its number parameters."""
    computed = _computed(step, outcomes)
    return operand_arguments(step.tool, list(computed.operands)) if computed else dict(step.arguments)


def _computed(step: Step, outcomes: dict[int, Outcome]) -> Op | None:
    """The step as actually computed, e.g. ``12 − 5`` for "then subtract 5"; ``None`` for a named tool call."""
    values = _values(step, outcomes)
    return None if step.expr is None or None in values else Op(step.expr.operation, tuple(values))


def _equation(plan: Plan, index: int, outcomes: dict[int, Outcome]) -> str:
    """``"3 × 4 = 12"`` for a step that worked; ``""`` otherwise."""
    computed, result = _computed(plan.steps[index], outcomes), outcomes[index].number
    # No equation for a named tool, or a step that failed.
    return "" if computed is None or result is None else text.equation(computed, result)


def _failure(plan: Plan, failed: int, outcomes: dict[int, Outcome], chinese: bool) -> str:
    """The steps that worked, then what went wrong, in the tool's own words."""
    step, outcome = plan.steps[failed], outcomes[failed]
    if (computed := _computed(step, outcomes)) is None:
        sentence = text.say("call_failed", chinese, tool=step.tool.name, text=outcome.text)
    else:
        key = "failed" if outcome.failed else "not_a_number"
        sentence = text.say(key, chinese, expression=text.expression(computed), tool=step.tool.name, text=outcome.text)
    done = [equation for i in plan.call_order() if i in outcomes and (equation := _equation(plan, i, outcomes))]
    return text.sentences([text.commas(done, chinese), sentence] if done else [sentence], chinese)


def _final_answer(plan: Plan, outcomes: dict[int, Outcome], chinese: bool) -> str:
    """One sentence per question (``"3 × 4 = 12, 12 − 5 = 7."``), and the answer after a chain.

    A named tool's result is quoted instead: ``"get_weather returned: Sunny."``.
    """
    if plan.steps[0].expr is None:
        returned = text.say("returned", chinese, tool=plan.steps[0].tool.name, text=outcomes[0].shown())
        return text.sentences([returned], chinese)
    parts, start = [], 0
    for end in plan.outputs:
        parts.append(text.commas([_equation(plan, i, outcomes) for i in range(start, end + 1)], chinese))
        start = end + 1
    last = outcomes[plan.outputs[-1]].number
    if len(plan.outputs) == 1 and len(plan.steps) > 1 and last is not None:
        parts.append(text.say("answer", chinese, number=text.number(last)))
    return text.say("results", chinese, equations=text.sentences(parts, chinese))


def _summary(exchanges: list[PastToolCall], chinese: bool) -> Reply:
    """Calls that are not this plan's (another model made them, or the history was edited): report them."""
    results = ("；" if chinese else "; ").join(f"{ex.name}: {read_result(ex.content).shown()}" for ex in exchanges)
    return Reply(text.say("summary", chinese, results=results))


# --- The chat.completion ------------------------------------------------------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def estimate_tokens(value: str) -> int:
    """A rough token count: one per Chinese character, one per 4 other characters. Not a real tokenizer."""
    chinese = len(re.findall(r"[\u4e00-\u9fff]", value))
    return chinese + math.ceil((len(value) - chinese) / 4)


def _completion(request: Mapping[str, Any], messages: list[Mapping[str, Any]], reply: Reply) -> dict[str, Any]:
    """The OpenAI ``chat.completion`` JSON. Deterministic: ``id`` is a hash of the request, ``created`` a constant,
    tool call ids are ``call_<round>_<index>`` (round: assistant tool-call messages so far + 1)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.calls:
        round_number = 1 + sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))
        message["tool_calls"] = [
            tool_call(f"call_{round_number}_{index}", name, json.dumps(arguments, ensure_ascii=False))
            for index, (name, arguments) in enumerate(reply.calls)
        ]
    prompt_tokens = estimate_tokens(_json(request.get("messages")) + _json(request.get("tools") or []))
    completion_tokens = estimate_tokens(reply.content or _json(message["tool_calls"]))
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    model = request.get("model")
    finish_reason = "tool_calls" if reply.calls else "stop"
    return {
        "id": "chatcmpl-" + hashlib.sha256(_json(request).encode()).hexdigest()[:24], "object": "chat.completion",
        "created": CREATED, "model": model if isinstance(model, str) else MODEL_NAME,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": {**usage, "total_tokens": prompt_tokens + completion_tokens},
    }  # fmt: skip
