"""Everything the teaching model writes, in English and Chinese.

The language follows the question: one Chinese character in it and the answer
is Chinese. Numbers are written without a useless ``.0`` (``3.0`` -> ``3``,
``2.5`` stays) and with at most 12 significant digits (``0.1 + 0.2`` shows
``0.3``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mcp_teach.llm.teaching_parse import Expr, Op
from mcp_teach.llm.teaching_tools import format_number as number

#: How answers write each operation, and its precedence (for brackets).
SYMBOLS = {"add": "+", "subtract": "−", "multiply": "×", "divide": "÷", "modulo": "mod", "power": "^", "sqrt": "√"}
PRECEDENCE = {"add": 1, "subtract": 1, "multiply": 2, "divide": 2, "modulo": 2, "power": 3, "sqrt": 4}
#: "None of my tools can do <name>".
OPERATION_NAMES = {
    "add": ("addition", "加法"), "subtract": ("subtraction", "减法"), "multiply": ("multiplication", "乘法"),
    "divide": ("division", "除法"), "power": ("powers", "乘方"), "sqrt": ("square roots", "开平方"),
    "modulo": ("remainders", "取余"),
}  # fmt: skip

#: Every sentence, as (English, Chinese) templates for ``str.format``.
TEXTS = {
    "results": ("{equations}", "计算结果：{equations}"),
    "answer": ("The answer is {number}.", "答案是 {number}。"),
    "failed": ("I could not compute {expression}: the tool {tool} said: {text}",
               "我没能算出 {expression}：工具 {tool} 报错：{text}"),
    "not_a_number": ("I could not compute {expression}: the tool {tool} did not return a number but: {text}",
                     "我没能算出 {expression}：工具 {tool} 没有返回数字，而是：{text}"),
    "returned": ("{tool} returned: {text}", "{tool} 返回：{text}"),
    "call_failed": ("I could not get a result from {tool}: it said: {text}", "调用 {tool} 失败：{text}"),
    "missing": ("To call {tool} I need a value for: {names}.", "要调用 {tool}，我还需要这些参数的值：{names}。"),
    "no_tool_for": ("None of my tools can do {operations}, which {expression} needs. My tools: {tools}.",
                    "我的工具都不会{operations}，而计算 {expression} 需要它。我的工具：{tools}。"),
    "no_tools_to_compute": (
        "To compute {expression} I need a tool, but this request has no tools (I do no arithmetic myself).",
        "要计算 {expression}，我需要工具，但这次请求没有提供工具（我自己不做计算）。"),
    "tools_off": ('To answer, I would call {tools} next, but tool use is switched off (tool_choice "none").',
                  '要回答这个问题，我接下来要调用 {tools}，但工具调用已关闭（tool_choice 为 "none"）。'),
    "hello": ("Hello! I am mcp-teach's offline teaching model. I answer by calling my tools: {tools}.",
              "你好！我是 mcp-teach 的离线教学模型，通过调用工具来回答问题。我的工具：{tools}。"),
    "hello_no_tools": (
        "Hello! I am mcp-teach's offline teaching model. I answer by calling tools, but this request has none.",
        "你好！我是 mcp-teach 的离线教学模型，通过调用工具来回答问题，但这次请求没有提供工具。"),
    "only_tools": ("I can only help with what my tools do: {tools}.", "我只能做我的工具能做的事：{tools}。"),
    # A question with numbers that the rules could not read as arithmetic (see not_understood).
    "not_understood": (
        'I could not read a calculation in "{question}": I found {numbers}, but not what to do with '
        "{them}. Ask it like this, for example: {examples}.",
        "我没能从“{question}”里读出算式：我找到了 {numbers}，但不知道要对{them}做什么运算。"
        "可以这样问，例如：{examples}。",
    ),
    # A word problem without a number it needs (teaching_parse.missing): say which, never guess it.
    "lacks": ("I cannot work this out yet: I need {what}. I only compute with numbers you give me.",
              "我还算不了：还需要知道{what}。我只用你给出的数字计算。"),
    "no_tools": ("I cannot answer that: I answer only by calling tools, and this request has none.",
                 "我回答不了这个问题：我只会通过调用工具来回答，而这次请求没有提供工具。"),
    "summary": ("The tools returned: {results}.", "工具返回的结果：{results}。"),
    # Documents (mcp_teach.llm.teaching_docs): answers quote the document and say which one it was.
    "from_document": ("From {document}: {sentence}", "摘自 {document}：{sentence}"),
    "summary_of": ("Summary of {document}:\n{summary}", "{document} 的摘要：\n{summary}"),
    "not_in_document": ("I read {sources}, but no sentence there mentions {words}.",
                        "我读了 {sources}，但其中没有句子提到 {words}。"),
    "nothing_found": ("{tool} found no document for this question.", "{tool} 没有找到与这个问题相关的文档。"),
}  # fmt: skip


def is_chinese(text: str) -> bool:
    """True if the text contains a Chinese character: the answer is then written in Chinese."""
    return re.search(r"[\u4e00-\u9fff]", text) is not None


def say(key: str, chinese: bool, **values: str) -> str:
    """The sentence ``key`` of :data:`TEXTS` in the question's language.

    A value that ends a sentence itself ("... this call.") does not get a second full stop.
    """
    english, chinese_text = TEXTS[key]
    return re.sub(r"([.。])[.。]+$", r"\1", (chinese_text if chinese else english).format(**values))


def commas(parts: Iterable[str], chinese: bool) -> str:
    """``"3 × 4 = 12, 12 − 5 = 7"``: phrases joined with the language's comma."""
    return ("，" if chinese else ", ").join(parts)


def sentences(parts: Iterable[str], chinese: bool) -> str:
    """Sentences, each ended with a full stop unless it has one: ``"1 + 2 = 3. 3 × 4 = 12."``."""
    stop = "。" if chinese else "."
    ended = [part if part.endswith((".", "!", "?", "。", "！", "？")) else part + stop for part in parts]
    return ("" if chinese else " ").join(ended)


def expression(expr: Expr) -> str:
    """``Op("multiply", (Op("add", (2, 3)), 4))`` -> ``"(2 + 3) × 4"``: brackets only where needed."""
    if not isinstance(expr, Op):
        return number(expr)
    if expr.operation == "sqrt":
        return "√" + _operand(expr.operands[0], PRECEDENCE["sqrt"])
    left, right = expr.operands
    precedence = PRECEDENCE[expr.operation]
    right_precedence = precedence if expr.operation in ("add", "multiply") else precedence + 1
    left_precedence = precedence + 1 if expr.operation == "power" else precedence
    return f"{_operand(left, left_precedence)} {SYMBOLS[expr.operation]} {_operand(right, right_precedence)}"


def _operand(expr: Expr, min_precedence: int) -> str:
    """An operand, bracketed if it binds less tightly than ``min_precedence``; negative numbers always are."""
    text = expression(expr)
    loose = PRECEDENCE[expr.operation] < min_precedence if isinstance(expr, Op) else expr < 0
    return f"({text})" if loose else text


def equation(expr: Op, result: float) -> str:
    """``"3 × 4 = 12"``."""
    return f"{expression(expr)} = {number(result)}"


def tool_descriptions(tools: Iterable[tuple[str, str]]) -> str:
    """``"calculator_add – Add two numbers (a + b); ..."``: what each tool says it does."""
    return "; ".join(
        f"{name} – {description.strip().rstrip('.')}" if description else name for name, description in tools
    )


#: What a word problem lacks (teaching_parse.missing), for the sentence "lacks".
LACKING = {
    "price": ("the price of one item", "单价（每件多少钱）"),
    "budget": ("how much money there was to begin with, or how much was paid", "一开始有多少钱（或付了多少钱）"),
    "base": ("the amount to take the percentage of", "要求百分比的那个数"),
    "numbers": ("at least two numbers to average", "至少两个要求平均的数"),
    "count": ("how many items there are", "买了多少件（数量）"),
}

#: Question words: a question with numbers and one of these asks for a calculation the rules did not read.
_ASKS = re.compile(
    r"[?？]|\b(?:how|what|calculate|compute|work out|figure out)\b|几|多少|算|求|等于", flags=re.IGNORECASE
)
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")
#: Phrasings that work, per operation: (English, Chinese) with ``{a}``/``{b}`` for the question's numbers.
EXAMPLES = {
    "multiply": ('"{a} items at {b} each"', "“每个{b}元，买{a}个多少钱”"),
    "divide": ('"{a} shared among {b}"', "“{a}个苹果分给{b}个人”"),
    "add": ('"add {a} and {b}"', "“{a}加{b}”"), "subtract": ('"subtract {b} from {a}"', "“{a}减{b}”"),
}  # fmt: skip


def not_understood(question: str, operations: Iterable[str], chinese: bool) -> str | None:
    """What to say when a question has numbers and asks something, but no rule read it as arithmetic.

    ``operations`` are those the listed tools can do (e.g. ``["add", "multiply"]``); the examples use
    the question's own numbers and only those operations. ``None`` when the question has no number or
    asks nothing ("I have 3 apples and 4 pears"), or no tool does arithmetic: the caller then says what
    the tools can do, as before.
    """
    found = _NUMBERS.findall(question)
    usable = [op for op in EXAMPLES if op in set(operations)]
    if not found or not usable or not _ASKS.search(question):
        return None
    a, b = (found[0], found[1]) if len(found) >= 2 else (found[0], "2")
    examples = ("，" if chinese else ", ").join(EXAMPLES[op][chinese].format(a=a, b=b) for op in usable[:2])
    shown = [number(float(n)) for n in dict.fromkeys(found)]
    if chinese:
        numbers, them = "、".join(shown), "它们" if len(shown) > 1 else "它"
    else:
        numbers = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
        numbers = ("the number " if len(shown) == 1 else "the numbers ") + numbers
        them = "them" if len(shown) > 1 else "it"
    short = question.strip() if len(question.strip()) <= 60 else question.strip()[:59] + "…"
    return say("not_understood", chinese, question=short, numbers=numbers, them=them, examples=examples)
