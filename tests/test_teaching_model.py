"""The offline teaching model, driven like the real loop drives it: real MCP servers in memory, the openai SDK.

Each conversation calls ``complete()``, appends the assistant message, runs every
tool call against a real server (the course calculator, or a server built here
with other tool names) and appends the tool results, until the model answers in
text. Every completion must pass the openai SDK's validation.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
import pytest
from fastmcp import FastMCP
from fastmcp.client.client import CallToolResult
from openai.types.chat import ChatCompletion

from mcp_teach.client import teaching_client
from mcp_teach.llm import teaching_model
from mcp_teach.llm.openai_tools import to_openai_tools
from mcp_teach.llm.teaching_model import CREATED, MODEL_NAME, complete
from mcp_teach.servers.calculator import build_calculator_server

SYSTEM_PROMPT = "You are the mcp-teach assistant. Use the provided tools for every calculation."
CALCULATOR_NAMES = {"calculator_add", "calculator_subtract", "calculator_multiply", "calculator_divide"}
DIVIDE_BY_ZERO = "Cannot divide by zero: argument 'b' must not be 0."


def build_custom_server() -> FastMCP:
    """Tools with other names and parameter names than the calculator's."""
    server = FastMCP("custom-tools", version="1.0.0")

    @server.tool(description="Add two numbers.")
    def add_numbers(x: float, y: float) -> float:
        return x + y

    @server.tool(description="Raise base to the power of exponent.")
    def power(base: float, exponent: int) -> float:
        return base**exponent

    @server.tool(description="Square root of a non-negative number.")
    def square_root(value: float) -> float:
        return value**0.5

    @server.tool(description="Return the text unchanged.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Current weather for a city.")
    def get_weather(city: str) -> str:
        return f"Sunny in {city}, 21 °C"

    return server


# --- How a loop turns an MCP result into the content of a "tool" message ------------------------------------------


def _text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def as_loop_text(result: CallToolResult) -> str:
    """What mcp_teach's loop sends: the text blocks, with "Error: " in front when isError is set."""
    return f"Error: {_text(result)}" if result.is_error else _text(result)


def as_structured_json(result: CallToolResult) -> str:
    """A loop that sends structuredContent (``{"result": 3.0}``), or an error object."""
    return json.dumps({"error": _text(result)} if result.is_error else result.structured_content)


def as_whole_result_json(result: CallToolResult) -> str:
    """A loop that sends the whole result as MCP JSON: content blocks, structuredContent, isError."""
    blocks = [block.model_dump(by_alias=True, mode="json", exclude_none=True) for block in result.content]
    return json.dumps({"content": blocks, "structuredContent": result.structured_content, "isError": result.is_error})


def as_wrapped_text(result: CallToolResult) -> str:
    """The reference course's loop: ``{"result": "<text>"}`` whether or not the call failed."""
    return json.dumps({"result": _text(result)}, ensure_ascii=False)


RESULT_FORMATS = [as_loop_text, as_structured_json, as_whole_result_json, as_wrapped_text]


# --- Driving a conversation --------------------------------------------------------------------------------------


@dataclass
class Conversation:
    rounds: list[list[tuple[str, dict[str, Any]]]]  # per model turn with tool calls: (tool, arguments)
    answer: str
    completions: list[dict[str, Any]]
    messages: list[dict[str, Any]]


def _no_constants(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")


def check_completion(completion: dict[str, Any]) -> ChatCompletion:
    """What every completion must be: JSON, valid for the SDK, consistent."""
    assert json.loads(json.dumps(completion, allow_nan=False)) == completion
    parsed = ChatCompletion.model_validate(completion)
    choice = parsed.choices[0]
    assert len(parsed.choices) == 1 and choice.index == 0 and choice.message.role == "assistant"
    assert parsed.object == "chat.completion" and parsed.created == CREATED
    if choice.message.tool_calls:
        assert choice.finish_reason == "tool_calls"
        for call in choice.message.tool_calls:
            assert isinstance(json.loads(call.function.arguments, parse_constant=_no_constants), dict)
            assert re.fullmatch(r"call_\d+_\d+", call.id)
    else:
        assert choice.finish_reason == "stop" and choice.message.content
    usage = parsed.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    return parsed


async def converse(
    question: str,
    server: FastMCP | None = None,
    *,
    result_format: Callable[[CallToolResult], str] = as_loop_text,
    history: list[dict[str, Any]] | None = None,
    **request: Any,
) -> Conversation:
    """Run the loop until the model answers in text. ``request`` adds fields (``tools=None`` leaves tools out)."""
    async with teaching_client(server or build_calculator_server()) as client:
        tools = to_openai_tools(await client.list_tools())
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            *(history or []),
            {"role": "user", "content": question},
        ]
        rounds, completions = [], []
        for _ in range(8):
            body = {"model": MODEL_NAME, "messages": copy.deepcopy(messages), "tools": tools, **request}
            completion = complete({key: value for key, value in body.items() if value is not None})
            completions.append(completion)
            message = check_completion(completion).choices[0].message
            if not message.tool_calls:
                messages.append({"role": "assistant", "content": message.content})
                return Conversation(rounds, message.content, completions, messages)
            messages.append(message.model_dump(exclude_none=True))
            calls = [(call.function.name, json.loads(call.function.arguments)) for call in message.tool_calls]
            rounds.append(calls)
            for call, (name, arguments) in zip(message.tool_calls, calls, strict=True):
                result = await client.call_tool(name, arguments, raise_on_error=False)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result_format(result)})
    raise AssertionError(f"no final answer after 8 rounds: {rounds}")


def ask(tools: list[dict[str, Any]] | None, *messages: Any, **request: Any) -> dict[str, Any]:
    """One completion for hand-written messages (a string is a user message) and raw tool definitions."""
    conversation = [{"role": "user", "content": m} if isinstance(m, str) else m for m in messages]
    body = {"model": MODEL_NAME, "messages": conversation, **request}
    if tools is not None:
        body["tools"] = tools
    completion = complete(body)
    check_completion(completion)
    return completion


def message_of(completion: dict[str, Any]) -> dict[str, Any]:
    return completion["choices"][0]["message"]


def calls_of(completion: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    calls = message_of(completion).get("tool_calls") or []
    return [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in calls]


def function_tool(name: str, description: str, properties: dict[str, Any], required: list[str] | None = None):
    parameters = {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
    }
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


NUMBER = {"type": "number"}
CALCULATOR_TOOLS = [
    function_tool("calculator_add", "Add two numbers (a + b).", {"a": NUMBER, "b": NUMBER}),
    function_tool("calculator_divide", "Divide the first number by the second (a / b).", {"a": NUMBER, "b": NUMBER}),
]


def has_chinese(text: str) -> bool:
    return re.search(r"[\u4e00-\u9fff]", text) is not None


# --- Arithmetic with the course calculator -----------------------------------------------------------------------


def add(a: float, b: float) -> tuple[str, dict[str, float]]:
    return ("calculator_add", {"a": a, "b": b})


def sub(a: float, b: float) -> tuple[str, dict[str, float]]:
    return ("calculator_subtract", {"a": a, "b": b})


def mul(a: float, b: float) -> tuple[str, dict[str, float]]:
    return ("calculator_multiply", {"a": a, "b": b})


def div(a: float, b: float) -> tuple[str, dict[str, float]]:
    return ("calculator_divide", {"a": a, "b": b})


ARITHMETIC = [
    ("What is 1 + 2?", [[add(1, 2)]], "1 + 2 = 3."),
    ("What's 7 times 6?", [[mul(7, 6)]], "7 × 6 = 42."),
    ("7 multiplied by 6", [[mul(7, 6)]], "7 × 6 = 42."),
    ("帮我算 1+2", [[add(1, 2)]], "计算结果：1 + 2 = 3。"),
    ("1加2等于多少", [[add(1, 2)]], "计算结果：1 + 2 = 3。"),
    ("计算 10 除以 4", [[div(10, 4)]], "计算结果：10 ÷ 4 = 2.5。"),
    ("3和4相乘是多少？", [[mul(3, 4)]], "计算结果：3 × 4 = 12。"),
    ("100 divided by 8", [[div(100, 8)]], "100 ÷ 8 = 12.5."),
    ("subtract 5 from 12", [[sub(12, 5)]], "12 − 5 = 7."),
    ("What is the difference between 10 and 3?", [[sub(10, 3)]], "10 − 3 = 7."),
    ("-3 + 4.5", [[add(-3, 4.5)]], "(-3) + 4.5 = 1.5."),
    ("0.1 + 0.2", [[add(0.1, 0.2)]], "0.1 + 0.2 = 0.3."),
    ("What is 1,000 + 2?", [[add(1000, 2)]], "1000 + 2 = 1002."),
    (
        "multiply 3 by 4, then subtract 5",
        [[mul(3, 4)], [sub(12, 5)]],
        "3 × 4 = 12, 12 − 5 = 7. The answer is 7.",
    ),
    ("add 2 and 3, then multiply by 4", [[add(2, 3)], [mul(5, 4)]], "2 + 3 = 5, 5 × 4 = 20. The answer is 20."),
    ("(2+3)*4", [[add(2, 3)], [mul(5, 4)]], "2 + 3 = 5, 5 × 4 = 20. The answer is 20."),
    ("2 + 3 * 4", [[mul(3, 4)], [add(2, 12)]], "3 × 4 = 12, 2 + 12 = 14. The answer is 14."),
    ("先算3乘以4，然后减去5", [[mul(3, 4)], [sub(12, 5)]], "计算结果：3 × 4 = 12，12 − 5 = 7。答案是 7。"),
    ("3乘4再减5", [[mul(3, 4)], [sub(12, 5)]], "计算结果：3 × 4 = 12，12 − 5 = 7。答案是 7。"),
    ("What is 5, then add 3 to it?", [[add(5, 3)]], "5 + 3 = 8."),
    ("the sum of 1, 2 and 3", [[add(1, 2)], [add(3, 3)]], "1 + 2 = 3, 3 + 3 = 6. The answer is 6."),
    ("What is 1 + 2 and what is 3 * 4?", [[add(1, 2), mul(3, 4)]], "1 + 2 = 3. 3 × 4 = 12."),
    ("1+2等于多少？3*4呢？", [[add(1, 2), mul(3, 4)]], "计算结果：1 + 2 = 3。3 × 4 = 12。"),
    (
        "(1+2)*(3+4)",
        [[add(1, 2), add(3, 4)], [mul(3, 7)]],
        "1 + 2 = 3, 3 + 4 = 7, 3 × 7 = 21. The answer is 21.",
    ),
]


@pytest.mark.parametrize(("question", "rounds", "answer"), ARITHMETIC, ids=[case[0] for case in ARITHMETIC])
def test_arithmetic_with_the_calculator(run, question: str, rounds: list, answer: str) -> None:
    conversation = run(converse, question)
    assert conversation.rounds == rounds
    assert conversation.answer == answer


@pytest.mark.parametrize("result_format", RESULT_FORMATS)
def test_every_way_a_loop_may_pass_results(run, result_format: Callable[[CallToolResult], str]) -> None:
    chain = run(lambda: converse("multiply 3 by 4, then subtract 5", result_format=result_format))
    assert chain.rounds == [[mul(3, 4)], [sub(12, 5)]]
    assert chain.answer == "3 × 4 = 12, 12 − 5 = 7. The answer is 7."
    error = run(lambda: converse("divide 10 by 0", result_format=result_format))
    assert error.answer == f"I could not compute 10 ÷ 0: the tool calculator_divide said: {DIVIDE_BY_ZERO}"


def test_integers_go_to_tools_as_integers_and_results_as_they_come(run) -> None:
    conversation = run(converse, "multiply 2.5 by 2, then add 0.5")
    assert conversation.rounds == [[mul(2.5, 2)], [add(5, 0.5)]]
    sent = [
        message["tool_calls"][0]["function"]["arguments"]
        for message in conversation.messages
        if "tool_calls" in message
    ]
    assert sent == ['{"a": 2.5, "b": 2}', '{"a": 5, "b": 0.5}']


def test_chinese_questions_get_chinese_answers(run) -> None:
    for question in ("帮我算 1+2", "计算 10 除以 4", "10除以0", "2的10次方", "你好", "今天天气怎么样？"):
        assert has_chinese(run(converse, question).answer), question
    for question in ("What is 1 + 2?", "divide 10 by 0", "hello", "What's the weather?"):
        assert not has_chinese(run(converse, question).answer), question


# --- Tool errors -------------------------------------------------------------------------------------------------


def test_a_tool_error_is_explained(run) -> None:
    conversation = run(converse, "divide 10 by 0")
    assert conversation.rounds == [[div(10, 0)]]
    assert conversation.answer == f"I could not compute 10 ÷ 0: the tool calculator_divide said: {DIVIDE_BY_ZERO}"
    chinese = run(converse, "10除以0等于多少")
    assert chinese.answer == f"我没能算出 10 ÷ 0：工具 calculator_divide 报错：{DIVIDE_BY_ZERO}"


def test_steps_before_an_error_are_reported_and_later_steps_are_not_run(run) -> None:
    conversation = run(converse, "(2+3)/0, then add 1")
    assert conversation.rounds == [[add(2, 3)], [div(5, 0)]]
    assert (
        conversation.answer
        == f"2 + 3 = 5. I could not compute 5 ÷ 0: the tool calculator_divide said: {DIVIDE_BY_ZERO}"
    )


def test_an_overflow_reported_by_the_server_is_explained(run) -> None:
    conversation = run(converse, "1e308 * 10")
    assert conversation.rounds == [[mul(1e308, 10)]]
    assert conversation.answer.startswith("I could not compute 1e+308 × 10: the tool calculator_multiply said: ")
    assert "not a finite number" in conversation.answer


QUESTION_AND_CALL = [
    "What is 1 + 2?",
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1_0", "type": "function", "function": {"name": "calculator_add", "arguments": '{"a": 1, "b": 2}'}}
    ]},
]  # fmt: skip


@pytest.mark.parametrize(
    ("content", "answer"),
    [
        ("3.0", "1 + 2 = 3."),
        ("3", "1 + 2 = 3."),
        ('{"result": 3.0}', "1 + 2 = 3."),
        ('{"result": "3.0"}', "1 + 2 = 3."),
        ('{"content": [{"type": "text", "text": "3.0"}], "structuredContent": {"result": 3.0}}', "1 + 2 = 3."),
        ("Result: 3", "1 + 2 = 3."),
        ([{"type": "text", "text": "3.0"}], "1 + 2 = 3."),
        ("Error: boom", "I could not compute 1 + 2: the tool calculator_add said: boom."),
        ('{"isError": true, "content": [{"type": "text", "text": "boom"}]}', "the tool calculator_add said: boom."),
        ('{"error": "boom"}', "the tool calculator_add said: boom."),
        ("Cannot add today.", "the tool calculator_add said: Cannot add today."),
        ("NaN", "the tool calculator_add said: nan is not a finite number."),
        ('{"isError": 1}', 'the tool calculator_add said: {"isError": 1}.'),
        ("banana", "the tool calculator_add did not return a number but: banana."),
        ("between 1 and 5", "did not return a number but: between 1 and 5."),
        ("{not json", "did not return a number but: {not json."),
        ("", "did not return a number but: (empty)."),
    ],
)
def test_tool_results_of_any_shape(content: Any, answer: str) -> None:
    tool_message = {"role": "tool", "tool_call_id": "call_1_0", "content": content}
    completion = ask(CALCULATOR_TOOLS, *QUESTION_AND_CALL, tool_message)
    assert message_of(completion)["content"].endswith(answer)


def test_a_call_without_a_tool_message_counts_as_failed() -> None:
    completion = ask(CALCULATOR_TOOLS, *QUESTION_AND_CALL)
    assert message_of(completion)["content"].endswith(f"said: {teaching_model.NO_RESULT[len('Error: ') :]}")


def test_calls_that_are_not_the_plan_are_reported_as_they_are() -> None:
    other_call = copy.deepcopy(QUESTION_AND_CALL)
    other_call[1]["tool_calls"][0]["function"]["name"] = "calculator_divide"
    completion = ask(CALCULATOR_TOOLS, *other_call, {"role": "tool", "tool_call_id": "call_1_0", "content": "0.5"})
    assert message_of(completion)["content"] == "The tools returned: calculator_divide: 0.5."


# --- Tools with other names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "rounds", "answer"),
    [
        ("What is 1 + 2?", [[("add_numbers", {"x": 1, "y": 2})]], "1 + 2 = 3."),
        ("2 to the power of 10", [[("power", {"base": 2, "exponent": 10})]], "2 ^ 10 = 1024."),
        ("2^10是多少", [[("power", {"base": 2, "exponent": 10})]], "计算结果：2 ^ 10 = 1024。"),
        ("What is 3 ^ 2?", [[("power", {"base": 3, "exponent": 2})]], "3 ^ 2 = 9."),
        ("square root of 16", [[("square_root", {"value": 16})]], "√16 = 4."),
        ("√16是多少", [[("square_root", {"value": 16})]], "计算结果：√16 = 4。"),
        ("2的10次方是多少", [[("power", {"base": 2, "exponent": 10})]], "计算结果：2 ^ 10 = 1024。"),
        ("What is 3 squared?", [[("power", {"base": 3, "exponent": 2})]], "3 ^ 2 = 9."),
        ("16的平方根", [[("square_root", {"value": 16})]], "计算结果：√16 = 4。"),
        (
            "(1+1)^3, then take the square root",
            [
                [("add_numbers", {"x": 1, "y": 1})],
                [("power", {"base": 2, "exponent": 3})],
                [("square_root", {"value": 8})],
            ],
            "1 + 1 = 2, 2 ^ 3 = 8, √8 = 2.82842712475. The answer is 2.82842712475.",
        ),
    ],
)
def test_arithmetic_with_other_tool_names(run, question: str, rounds: list, answer: str) -> None:
    conversation = run(converse, question, build_custom_server())
    assert conversation.rounds == rounds
    assert conversation.answer == answer


def test_no_fitting_tool_means_no_call_and_no_invented_names(run) -> None:
    conversation = run(converse, "What's 7 times 6?", build_custom_server())
    assert conversation.rounds == []
    assert conversation.answer == (
        "None of my tools can do multiplication, which 7 × 6 needs. "
        "My tools: add_numbers, power, square_root, echo, get_weather."
    )
    calculator = run(converse, "2 to the power of 10")
    assert calculator.rounds == []
    assert calculator.answer.startswith("None of my tools can do powers, which 2 ^ 10 needs. My tools: calculator_add")


@pytest.mark.parametrize(
    ("question", "call", "answer"),
    [
        (
            "use get_weather for Paris",
            ("get_weather", {"city": "Paris"}),
            "get_weather returned: Sunny in Paris, 21 °C.",
        ),
        ("call echo with text 'hi'", ("echo", {"text": "hi"}), "echo returned: hi."),
        ("call echo with hello world", ("echo", {"text": "hello world"}), "echo returned: hello world."),
        ("call echo with “1+2”", ("echo", {"text": "1+2"}), "echo returned: 1+2."),  # named tool beats arithmetic
        ("用 get_weather 查北京", ("get_weather", {"city": "北京"}), "get_weather 返回：Sunny in 北京, 21 °C。"),
        ("call power with base=3 exponent=4", ("power", {"base": 3, "exponent": 4}), "power returned: 81."),
        ("use power with 2 and 5", ("power", {"base": 2, "exponent": 5}), "power returned: 32."),
    ],
)
def test_a_tool_named_in_the_question_is_called(run, question: str, call: tuple, answer: str) -> None:
    conversation = run(converse, question, build_custom_server())
    assert conversation.rounds == [[call]]
    assert conversation.answer == answer


def test_a_named_tool_without_its_required_value_is_not_called(run) -> None:
    conversation = run(converse, "use get_weather", build_custom_server())
    assert conversation.rounds == []
    assert conversation.answer == "To call get_weather I need a value for: city."


def test_a_named_arithmetic_tool_is_preferred() -> None:
    tools = [
        function_tool("plus", "Add two numbers.", {"a": NUMBER, "b": NUMBER}),
        function_tool("sum_of", "Sum of two numbers.", {"a": NUMBER, "b": NUMBER}),
    ]
    assert calls_of(ask(tools, "What is 1 + 2?")) == [("plus", {"a": 1, "b": 2})]
    assert calls_of(ask(tools, "use sum_of: what is 1 + 2?")) == [("sum_of", {"a": 1, "b": 2})]


def test_tools_are_chosen_by_name_parameters_and_description() -> None:
    tools = [
        function_tool("add_note", "Add a note.", {"title": {"type": "string"}, "text": {"type": "string"}}),
        function_tool("jia", "把两个数相加", {"p": NUMBER, "q": NUMBER}),
        function_tool("f", "Computes something.", {"exponent": {"type": "integer"}, "base": NUMBER}),
        function_tool("g", "Takes the remainder.", {"n": NUMBER, "m": NUMBER}),
    ]
    # add_note has "add" in its name but takes no numbers; jia's Chinese description says it adds.
    assert calls_of(ask(tools, "1 + 2")) == [("jia", {"p": 1, "q": 2})]
    # parameter names: base and exponent make f the power tool, and base comes first whatever the schema order.
    assert calls_of(ask(tools, "2 ^ 10")) == [("f", {"base": 2, "exponent": 10})]
    assert calls_of(ask(tools, "10 mod 3")) == [("g", {"n": 10, "m": 3})]
    assert calls_of(ask(tools, "10 / 3")) == []


def test_name_value_pairs_get_the_schema_type() -> None:
    shout = function_tool("shout", "Shout.", {"text": {"type": "string"}, "loud": {"type": "boolean"}, "times": NUMBER})
    completion = ask([shout], "call shout with text=hi loud=true times: 3")
    assert calls_of(completion) == [("shout", {"text": "hi", "loud": True, "times": 3})]


def test_a_question_in_content_parts_is_read() -> None:
    question = {"role": "user", "content": [{"type": "text", "text": "What is"}, {"type": "text", "text": "1 + 2?"}]}
    assert calls_of(ask(CALCULATOR_TOOLS, question)) == [add(1, 2)]


def test_very_long_questions_are_not_read_as_arithmetic() -> None:
    assert calls_of(ask(CALCULATOR_TOOLS, "(" * 150 + "1 + 2" + ")" * 150)) == []
    assert calls_of(ask(CALCULATOR_TOOLS, "(" * 90 + "1 + 2" + ")" * 90)) == [add(1, 2)]


def test_optional_parameters_are_left_out_and_untyped_ones_take_numbers() -> None:
    tools = [function_tool("add", "Add.", {"a": {}, "b": {}, "round_to": {"type": "integer"}}, required=["a", "b"])]
    assert calls_of(ask(tools, "1 + 2")) == [("add", {"a": 1, "b": 2})]


# --- Plain replies -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (
            "hello",
            "Hello! I am mcp-teach's offline teaching model. I answer by calling my tools: calculator_add, ",
        ),
        ("Hi there!", "Hello! I am mcp-teach's offline teaching model."),
        ("你好", "你好！我是 mcp-teach 的离线教学模型，通过调用工具来回答问题。我的工具：calculator_add, "),
        (
            "What's the weather in Paris?",
            "I can only help with what my tools do: calculator_add – Add two numbers (a + b); ",
        ),
        ("今天天气怎么样？", "我只能做我的工具能做的事：calculator_add – Add two numbers (a + b); "),
        ("I have 3 apples and 4 pears", "I can only help with what my tools do: "),
        ("", "I can only help with what my tools do: "),
    ],
)
def test_questions_without_a_tool_get_a_plain_reply(run, question: str, answer: str) -> None:
    conversation = run(converse, question)
    assert conversation.rounds == []
    assert conversation.answer.startswith(answer)
    assert conversation.completions[-1]["choices"][0]["finish_reason"] == "stop"
    assert "tool_calls" not in message_of(conversation.completions[-1])


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (
            "What is 1 + 2?",
            "To compute 1 + 2 I need a tool, but this request has no tools (I do no arithmetic myself).",
        ),
        ("1加2", "要计算 1 + 2，我需要工具，但这次请求没有提供工具（我自己不做计算）。"),
        (
            "hello",
            "Hello! I am mcp-teach's offline teaching model. I answer by calling tools, but this request has none.",
        ),
        ("What's the weather?", "I cannot answer that: I answer only by calling tools, and this request has none."),
    ],
)
def test_without_tools_the_model_only_talks(question: str, answer: str) -> None:
    for tools in (None, []):
        completion = ask(tools, question)
        assert message_of(completion) == {"role": "assistant", "content": answer}


# --- tool_choice -------------------------------------------------------------------------------------------------


def test_tool_choice_none_answers_in_text(run) -> None:
    conversation = run(lambda: converse("What is 1 + 2?", tool_choice="none"))
    assert conversation.rounds == []
    assert (
        conversation.answer
        == 'To answer, I would call calculator_add next, but tool use is switched off (tool_choice "none").'
    )
    assert run(lambda: converse("你好", tool_choice="none")).answer.startswith("你好！")


def test_tool_choice_none_after_the_results_still_answers() -> None:
    tool_message = {"role": "tool", "tool_call_id": "call_1_0", "content": "3.0"}
    completion = ask(CALCULATOR_TOOLS, *QUESTION_AND_CALL, tool_message, tool_choice="none")
    assert message_of(completion)["content"] == "1 + 2 = 3."


def only(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def test_tool_choice_naming_a_function_calls_it(run) -> None:
    fits = run(lambda: converse("What is 1 + 2?", tool_choice=only("calculator_add")))
    assert fits.rounds == [[add(1, 2)]]
    assert fits.answer == "1 + 2 = 3."
    # A forced tool that does not fit gets the numbers anyway, as a forced real model might do.
    forced = run(lambda: converse("What is 1 + 2?", tool_choice=only("calculator_multiply")))
    assert forced.rounds == [[mul(1, 2)]]
    assert forced.answer == "calculator_multiply returned: 2."
    # The free text of the question fills the string parameter: a simple rule, not understanding.
    weather = run(lambda: converse("Is it sunny in Oslo?", build_custom_server(), tool_choice=only("get_weather")))
    assert weather.rounds == [[("get_weather", {"city": "Is it sunny in Oslo"})]]


def test_tool_choice_required_calls_a_tool_even_for_a_greeting(run) -> None:
    greeting = run(lambda: converse("hello", tool_choice="required"))
    assert greeting.rounds == [[("calculator_add", {})]]  # nothing to fill the arguments with: the server says so
    assert greeting.answer == (
        "I could not get a result from calculator_add: it said: "
        "Invalid arguments for calculator_add: argument 'a' is missing; argument 'b' is missing."
    )
    assert run(lambda: converse("What is 1 + 2?", tool_choice="required")).rounds == [[add(1, 2)]]


def test_tool_choice_naming_an_unknown_function_leaves_no_tools() -> None:
    completion = ask(CALCULATOR_TOOLS, "What is 1 + 2?", tool_choice={"type": "function", "function": {"name": "nope"}})
    assert calls_of(completion) == []


# --- Conversations, determinism, the SDK -------------------------------------------------------------------------


def test_only_the_last_user_message_counts_and_call_ids_stay_unique(run) -> None:
    first = run(converse, "What is 1 + 2?")
    second = run(lambda: converse("multiply 3 by 4, then subtract 5", history=first.messages[1:]))
    assert second.rounds == [[mul(3, 4)], [sub(12, 5)]]
    ids = [call["id"] for message in second.messages if "tool_calls" in message for call in message["tool_calls"]]
    assert ids == ["call_1_0", "call_2_0", "call_3_0"]


def test_the_same_request_gives_the_same_completion(run) -> None:
    first, second = run(converse, "(1+2)*(3+4)"), run(converse, "(1+2)*(3+4)")
    assert first.completions == second.completions
    ids = [completion["id"] for completion in first.completions]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"chatcmpl-[0-9a-f]{24}", i) for i in ids)
    assert [call["id"] for call in message_of(first.completions[0])["tool_calls"]] == ["call_1_0", "call_1_1"]


def test_the_model_field_echoes_the_request() -> None:
    assert ask(None, "hello", model="gpt-4o-mini")["model"] == "gpt-4o-mini"
    assert ask(None, "hello")["model"] == MODEL_NAME == "mcp-teach-offline"


def test_usage_grows_with_the_conversation(run) -> None:
    conversation = run(converse, "multiply 3 by 4, then subtract 5")
    prompts = [completion["usage"]["prompt_tokens"] for completion in conversation.completions]
    assert prompts == sorted(prompts) and len(set(prompts)) == len(prompts)
    assert teaching_model.estimate_tokens("abcdefgh") == 2 and teaching_model.estimate_tokens("你好") == 2


def _mock_handler(seen: list[dict[str, Any]]) -> Callable[[httpx2.Request], httpx2.Response]:
    """Stands in for the HTTP hop only: the body the SDK sends goes to complete() unchanged."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/chat/completions"
        body = json.loads(request.content)
        seen.append(body)
        return httpx2.Response(200, json=complete(body))

    return handler


def test_the_openai_sdk_accepts_every_completion_strictly(run) -> None:
    seen: list[dict[str, Any]] = []
    llm = openai.OpenAI(
        base_url="http://offline.invalid/v1",
        api_key="x",
        http_client=httpx2.Client(transport=httpx2.MockTransport(_mock_handler(seen))),
        _strict_response_validation=True,
        max_retries=0,
    )
    messages: list[Any] = [{"role": "user", "content": "What is 1 + 2 and what is 10 / 4?"}]
    completion = llm.chat.completions.create(model=MODEL_NAME, messages=messages, tools=CALCULATOR_TOOLS, temperature=0)
    assert completion.choices[0].finish_reason == "tool_calls"
    calls = completion.choices[0].message.tool_calls
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_1_0", "calculator_add", '{"a": 1, "b": 2}'),
        ("call_1_1", "calculator_divide", '{"a": 10, "b": 4}'),
    ]
    messages.append(completion.choices[0].message.model_dump(exclude_none=True))
    messages += [
        {"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, ["3.0", "2.5"], strict=True)
    ]
    final = llm.chat.completions.create(model=MODEL_NAME, messages=messages, tools=CALCULATOR_TOOLS)
    assert final.choices[0].finish_reason == "stop"
    assert final.choices[0].message.content == "1 + 2 = 3. 10 ÷ 4 = 2.5."
    assert final.created == CREATED and final.usage.total_tokens > 0
    assert seen[0]["temperature"] == 0 and seen[1]["messages"][1]["tool_calls"][1]["id"] == "call_1_1"


def test_a_whole_loop_through_the_async_sdk(run) -> None:
    async def loop() -> tuple[list[list[str]], str]:
        llm = openai.AsyncOpenAI(
            base_url="http://offline.invalid/v1",
            api_key="x",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(_mock_handler([]))),
            _strict_response_validation=True,
            max_retries=0,
        )
        async with teaching_client(build_calculator_server()) as client:
            tools = to_openai_tools(await client.list_tools())
            messages: list[Any] = [{"role": "user", "content": "(1+2)*(3+4)"}]
            rounds = []
            while True:
                completion = await llm.chat.completions.create(model=MODEL_NAME, messages=messages, tools=tools)
                message = completion.choices[0].message
                if not message.tool_calls:
                    return rounds, message.content
                messages.append(message)
                rounds.append([call.function.arguments for call in message.tool_calls])
                for call in message.tool_calls:
                    result = await client.call_tool(call.function.name, json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": as_loop_text(result)})

    rounds, answer = run(loop)
    assert rounds == [['{"a": 1, "b": 2}', '{"a": 3, "b": 4}'], ['{"a": 3, "b": 7}']]
    assert answer == "1 + 2 = 3, 3 + 4 = 7, 3 × 7 = 21. The answer is 21."


# --- Never raises ------------------------------------------------------------------------------------------------

WORDS = [
    "1", "2.5", "0", "-", "+", "*", "/", "^", "(", ")", ",", "?", "and", "then", "it", "add", "subtract", "multiply",
    "by", "from", "of", "sum", "sqrt", "加", "减", "乘以", "除以", "然后", "再", "的", "次方", "平方根", "hello",
    "你好", "echo", "get_weather", "'x'", "=", "1e999", "x", "to", "the", "power", "squared", "mod", "%", "”", "“",
]  # fmt: skip
ODD_CONTENTS = ["3.0", "Error: x", "", None, 7, [], [{"type": "text"}], {"result": None}, "[1, 2]", '{"isError": 1}']


def _random_request(rng: random.Random, tools: list[dict[str, Any]]) -> dict[str, Any]:
    question = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 9)))
    messages: list[Any] = [{"role": "user", "content": question}]
    for round_number in range(rng.randint(0, 3)):
        names = [rng.choice([*(t["function"]["name"] for t in tools), "unknown"]) for _ in range(rng.randint(1, 2))]
        calls = [
            {"id": f"c{round_number}{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
            for i, name in enumerate(names)
        ]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [
            {"role": "tool", "tool_call_id": call["id"], "content": rng.choice(ODD_CONTENTS)} for call in calls
        ]
    choice = rng.choice(["auto", "none", "required", {"type": "function", "function": {"name": "echo"}}, None])
    request = {"model": MODEL_NAME, "messages": messages, "tools": rng.choice([tools, [], None])}
    return {key: value for key, value in {**request, "tool_choice": choice}.items() if value is not None}


def test_random_requests_never_raise_and_always_validate(run) -> None:
    async def tool_definitions() -> list[dict[str, Any]]:
        async with teaching_client(build_custom_server()) as custom, teaching_client(build_calculator_server()) as calc:
            return to_openai_tools([*await custom.list_tools(), *await calc.list_tools()])

    tools = run(tool_definitions)
    rng = random.Random(20260101)
    for _ in range(600):
        request = _random_request(rng, tools)
        completion = complete(copy.deepcopy(request))
        check_completion(completion)
        assert complete(copy.deepcopy(request)) == completion
        for name, _arguments in calls_of(completion):
            assert name in {tool["function"]["name"] for tool in request.get("tools", [])}


# --- Documents (mcp_teach.llm.teaching_docs, lesson 07) ----------------------------------------------------------


def _knowledge_page(doc_id: str) -> str:
    from mcp_teach.servers.knowledge_base import load_documents

    return load_documents()[doc_id].text


def _document_message(source: str, doc_id: str, role: str = "user") -> dict[str, str]:
    from mcp_teach.llm.teaching_docs import document_block

    return {"role": role, "content": document_block(source, _knowledge_page(doc_id))}


def test_a_document_in_the_context_is_quoted_with_its_source() -> None:
    context = _document_message("docs://transports", "transports")
    answer = message_of(ask(None, context, "What may appear on standard output?"))["content"]
    assert answer == 'From "Transports" (docs://transports): Nothing but MCP messages may appear on standard output.'
    in_system = _document_message("docs://transports", "transports", role="system")
    assert message_of(ask(CALCULATOR_TOOLS, in_system, "What may appear on standard output?"))["content"] == answer


def test_documents_do_not_change_arithmetic_greetings_or_unrelated_questions(run) -> None:
    context = _document_message("docs://tools", "tools")
    assert calls_of(ask(CALCULATOR_TOOLS, context, "What is 1 + 2?")) == [("calculator_add", {"a": 1, "b": 2})]
    hello = message_of(ask(CALCULATOR_TOOLS, context, "hello"))["content"]
    assert hello.startswith("Hello! I am mcp-teach's offline teaching model.")
    unrelated = message_of(ask(None, context, "zebra?"))["content"]
    assert unrelated == message_of(ask(None, "zebra?"))["content"]


def test_a_last_message_of_documents_only_is_context_and_a_summary_follows_the_style() -> None:
    instruction = "Summarize the document 'Transports' as three to five short bullet points."
    completion = ask(None, instruction, _document_message("docs://transports", "transports"))
    answer = message_of(completion)["content"]
    lines = answer.split("\n")
    assert lines[0] == 'Summary of "Transports" (docs://transports):'
    assert 3 <= len(lines[1:]) <= 5 and all(line.startswith("- ") for line in lines[1:])
    tweet = message_of(ask(None, "Summarize it in one sentence", _document_message("docs://tools", "tools")))
    assert tweet["content"].count("\n") == 1 and len(tweet["content"].split("\n")[1]) <= 280


def test_search_then_get_then_answer_on_the_knowledge_server(run) -> None:
    from mcp_teach.servers.knowledge import build_knowledge_server

    conversation = run(converse, "What does a resource template describe?", build_knowledge_server())
    assert conversation.rounds == [
        [("search_documents", {"query": "resource template describe"})],
        [("get_document", {"doc_id": "resources-and-prompts"})],
    ]
    assert conversation.answer.startswith(
        'From "Resources and prompts" (resources-and-prompts): A **resource template**'
    )


def test_resources_as_tools_list_then_read_then_answer(run) -> None:
    from fastmcp.server.transforms import ResourcesAsTools

    from mcp_teach.servers.knowledge import build_knowledge_server

    server = build_knowledge_server()
    server.add_transform(ResourcesAsTools(server))
    server.disable(names={"search_documents", "get_document"})
    conversation = run(converse, "How does the stdio transport send messages?", server)
    assert conversation.rounds == [[("list_resources", {})], [("read_resource", {"uri": "docs://transports"})]]
    assert conversation.answer.startswith('From "Transports" (docs://transports): With **stdio**')
    nothing = run(converse, "Which zebra?", server)
    assert nothing.rounds == [[("list_resources", {})]]
    assert nothing.answer == "list_resources found no document for this question."


def test_retrieval_failures_end_the_turn_with_a_sentence() -> None:
    search = function_tool("search_documents", "Search.", {"query": {"type": "string"}})
    get = function_tool("get_document", "Get one.", {"doc_id": {"type": "string"}})

    def after(*results: str) -> str:
        messages: list[Any] = ["What is a resource?"]
        for number, (name, content) in enumerate(zip(["search_documents", "get_document"], results, strict=False)):
            call = {"id": f"c{number}", "type": "function", "function": {"name": name, "arguments": "{}"}}
            messages += [{"role": "assistant", "content": None, "tool_calls": [call]}]
            messages += [{"role": "tool", "tool_call_id": f"c{number}", "content": content}]
        return message_of(ask([search, get], *messages))["content"]

    assert (
        after("Error: the index is down")
        == "I could not get a result from search_documents: it said: the index is down"
    )
    assert after("[]") == "search_documents found no document for this question."
    assert after('[{"doc_id": "x"}]', "Error: Unknown document 'x'.").startswith(
        "I could not get a result from get_doc"
    )
    assert (
        after('[{"doc_id": "x"}]', "# X\n\nZebras only.")
        == "I read get_document, but no sentence there mentions resource."
    )


def test_tool_choice_none_stops_a_retrieval_call(run) -> None:
    from mcp_teach.servers.knowledge import build_knowledge_server

    conversation = run(lambda: converse("What is a resource?", build_knowledge_server(), tool_choice="none"))
    assert conversation.rounds == []
    assert "search_documents" in conversation.answer and 'tool_choice "none"' in conversation.answer


def test_random_requests_with_documents_never_raise(run) -> None:
    from mcp_teach.llm.teaching_docs import document_block

    rng = random.Random(20260728)
    search = function_tool("search_documents", "Search.", {"query": {"type": "string"}})
    get = function_tool("get_document", "Get one.", {"doc_id": {"type": "string"}})
    for _ in range(300):
        request = _random_request(rng, [search, get, *CALCULATOR_TOOLS])
        if rng.random() < 0.5:
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))
            request["messages"].insert(
                0, {"role": rng.choice(["system", "user"]), "content": document_block("d", body)}
            )
        completion = complete(copy.deepcopy(request))
        check_completion(completion)
        assert complete(copy.deepcopy(request)) == completion


# --- Rule g: look up, then compute (lesson 10) ----------------------------------------------------------------

STRING = {"type": "string"}
TWO_SERVER_TOOLS = [
    function_tool("knowledge_search_documents", "Search the knowledge base.", {"query": STRING}),
    function_tool("knowledge_get_document", "Read one document.", {"doc_id": STRING}),
    function_tool("calc_calculator_multiply", "Multiply two numbers (a * b).", {"a": NUMBER, "b": NUMBER}),
]
LOOKUP_QUESTION = "How many values does a completion result list at most? Then multiply that number by 3."
HITS = json.dumps([{"doc_id": "completion", "title": "Completion"}])
PAGE = "# Completion\n\nA completion result lists up to 100 values, dated 2025-11-25."


def _tool_turn(round_number: int, name: str, arguments: dict[str, Any], result: str) -> list[dict[str, Any]]:
    call = {"id": f"call_{round_number}_0", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": result},
    ]


def test_lookup_then_compute_searches_reads_then_calls_the_calculator() -> None:
    first = ask(TWO_SERVER_TOOLS, LOOKUP_QUESTION)
    assert [name for name, _ in calls_of(first)] == ["knowledge_search_documents"]
    searched = _tool_turn(1, *calls_of(first)[0], HITS)
    second = ask(TWO_SERVER_TOOLS, LOOKUP_QUESTION, *searched)
    assert calls_of(second) == [("knowledge_get_document", {"doc_id": "completion"})]
    read = _tool_turn(2, "knowledge_get_document", {"doc_id": "completion"}, PAGE)
    third = ask(TWO_SERVER_TOOLS, LOOKUP_QUESTION, *searched, *read)
    assert calls_of(third) == [("calc_calculator_multiply", {"a": 100, "b": 3})]  # the date is no operand
    multiplied = _tool_turn(3, "calc_calculator_multiply", {"a": 100, "b": 3}, "300.0")
    final = message_of(ask(TWO_SERVER_TOOLS, LOOKUP_QUESTION, *searched, *read, *multiplied))["content"]
    assert final.startswith('From "Completion" (completion): A completion result lists up to 100 values')
    assert final.endswith("100 × 3 = 300.")


def test_lookup_without_a_number_says_so() -> None:
    searched = _tool_turn(1, "knowledge_search_documents", {"query": "x"}, HITS)
    read = _tool_turn(
        2, "knowledge_get_document", {"doc_id": "completion"}, "# Completion\n\nA completion lists values."
    )
    final = message_of(ask(TWO_SERVER_TOOLS, LOOKUP_QUESTION, *searched, *read))["content"]
    assert final.endswith("That sentence holds no number, so there is nothing to compute.")


def test_a_chain_of_arithmetic_with_then_is_not_a_lookup() -> None:
    completion = ask(TWO_SERVER_TOOLS, "Multiply 3 by 4, then multiply it by 5.")
    assert calls_of(completion) == [("calc_calculator_multiply", {"a": 3, "b": 4})]
