"""Read arithmetic out of a question, in English or Chinese, as expression trees.

``parse_arithmetic("multiply 3 by 4, then subtract 5")`` gives one tree,
``Op("subtract", (Op("multiply", (3, 4)), 5))``; ``"What is 1 + 2 and what is
3 * 4?"`` gives two independent trees. Nothing is computed here: the trees only
say which operations to ask the tools for, and in which order.

Three passes, each a handful of rules:

1. **Rewrite** (:data:`REWRITES`): phrases become symbols, so ``"7 times 6"``,
   ``"7 multiplied by 6"`` and ``"7乘以6"`` all read ``7 * 6``; ``"2 to the power
   of 10"`` reads ``2 ^ 10``; ``"then"``, ``"然后"`` and ``"再"`` become ``then``.
2. **Tokenize** (:func:`tokenize`): numbers, operators, brackets, separators and
   the few words the grammar knows; every other word ("what", "is", "帮我算",
   "等于多少") is dropped.
3. **Parse** (:class:`_Parser`): the question is a list of *items* separated by
   ``,`` ``;`` ``?`` ``and`` ``then``. An item is an ordinary expression with the
   usual precedence (``^`` before ``* / %`` before ``+ -``, brackets first) or a
   verb phrase (``add 2 and 3``, ``subtract 5 from 12``, ``the product of 3 and
   4``). An item that lacks its first number (``then subtract 5``, ``multiply by
   4``, ``再减5``) or says ``it`` continues from the item before it: the earlier
   tree becomes part of the later one, so a chain is one tree.

A question that does not fit the grammar, or is longer than :data:`MAX_TOKENS`
tokens, gives ``[]``, never an exception.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

#: A number as written in the question: 12, 2.5, 1e308.
_NUMBER = r"\d+(?:\.\d+)?(?:e[-+]?\d+)?"

_N = rf"({_NUMBER})"
#: A unit or object after a number: "12 dollars", "3 pizzas" (at most two words).
_UNIT = r"(?:\s*[a-z$€£¥]+){0,2}"
_CN_MEASURE = "个|件|本|支|瓶|张|块|只|份|斤|人|位|名"
_FRACTIONS = {"half": "2", "third": "3", "quarter": "4", "fourth": "4", "fifth": "5", "tenth": "10"}

#: Everyday phrasings of arithmetic, rewritten first into expressions in brackets (see :data:`REWRITES`).
#: Each phrase becomes the operations a calculator has: "half of 9" is 9 / 2, "3 items at 4 each" is 3 * 4.
EVERYDAY: tuple[tuple[str, Any], ...] = (
    # "half of 9", "a third of 12", "one quarter of 8"
    (
        rf"\b(?:(?:a|an|one)\s+)?({'|'.join(_FRACTIONS)})\s+(?:of\s+)?{_N}",
        lambda m: f" ({m[2]} / {_FRACTIONS[m[1]]}) ",
    ),
    # "3 items at 4 each", "3 pizzas at 12 dollars per pizza", "3 books at $4 apiece"
    (
        rf"{_N}{_UNIT}\s+at\s+\$?{_N}{_UNIT}?\s*(?:each|apiece|a piece|per\s+[a-z]+)\b",
        r" (\1 * \2) ",
    ),
    # "12 apples shared among 4 people", "split 12 between 3", "and share them equally among 4 friends"
    (
        r"(?:\band\s+)?\b(?:shared?|split|divided|distributed?)(?:\s+(?:them|it|these|those))?"
        r"(?:\s+(?:equally|evenly))?\s+(?:among(?:st)?|between|into|with)\b",
        " / ",
    ),
    # Chinese: "12个苹果，分给4个人", "平均分成3份"
    (r",?\s*(?:平均|平)?(?:分给|分成|分到|分为)", " / "),
    # "一个披萨12元，3个多少钱？", "每本书4块，买5本多少钱"
    (
        rf"(?:每|一)(?:{_CN_MEASURE})?[^\d,;?]{{0,8}}?{_N}\s*(?:元|块钱|块|美元)[^\d?]*?{_N}\s*(?:{_CN_MEASURE})",
        r" (\1 * \2) ",
    ),
)

#: Applied in order to the lower-cased question: (pattern, replacement).
REWRITES: tuple[tuple[str, Any], ...] = (
    (r"(?<=\d),(?=\d{3}(?!\d))", ""),  # 1,000 -> 1000
    (r"\b\d{4}-\d{1,2}-\d{1,2}\b", " "),  # a date such as 2026-01-01 is not a subtraction
    *EVERYDAY,
    ("[×·]", " * "),
    ("÷", " / "),
    ("[−–]", " - "),  # minus sign and en dash
    ("√", " sqrt "),
    (r"\*\*", " ^ "),
    # English
    (r"\band then\b", " then "),
    (r"\b(?:raised )?to the power(?: of)?\b|\braised to\b", " ^ "),
    (r"\bsquare root(?: of)?\b", " sqrt "),
    (r"\bdivided by\b|\bover\b", " / "),
    (r"\bmultiplied by\b|\btimes\b", " * "),
    (r"\bplus\b", " + "),
    (r"\bminus\b", " - "),
    (r"\bmod(?:ulo)?\b", " % "),
    # Chinese
    ("然后|再", " then "),
    ("加上|加", " + "),
    ("减去|减掉|减", " - "),
    ("乘以|乘上|乘", " * "),
    ("除以|除", " / "),
    ("和|与|跟|以及|还有", " and "),
    ("结果|它", " it "),
)

#: Verbs that come before their numbers: "add 2 and 3", "subtract 5 from 12".
VERBS = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide"}
#: Nouns that name an operation: "the sum of 2 and 3", "the difference between 10 and 3".
NOUNS = {"sum": "add", "total": "add", "difference": "subtract", "product": "multiply", "quotient": "divide"}
#: The other words the grammar uses; any word not in these three tables is dropped.
WORDS = frozenset({"and", "by", "from", "to", "of", "between", "then", "it", "sqrt"})
#: Connecting words that mean nothing at the start of an item: "I want *to* add 2 and 3".
LEADING_FILLERS = frozenset({"to", "of", "by", "from", "between"})
#: Infix symbols: operation, precedence, right-associative.
INFIX = {
    "+": ("add", 1, False),
    "-": ("subtract", 1, False),
    "*": ("multiply", 2, False),
    "/": ("divide", 2, False),
    "%": ("modulo", 2, False),
    "^": ("power", 3, True),
}
#: Longer questions are not read as arithmetic (this also bounds the parser's recursion depth).
MAX_TOKENS = 200
#: Tokens that end an item.
SEPARATORS = frozenset({",", ";", "?", "!", ".", "。", "and", "then"})

_WORD = r"[a-z_][a-z0-9_']*"
_TOKEN = re.compile(rf"{_NUMBER}|[-+*/%^(),;?!.。]|{_WORD}")


@dataclass(frozen=True)
class Op:
    """One operation on operands that are numbers or other operations."""

    operation: str  # "add", "subtract", "multiply", "divide", "power", "sqrt", "modulo"
    operands: tuple[Expr, ...]


Expr = float | Op


class _NotUnderstood(Exception):
    """The question does not fit the grammar (internal: :func:`parse_arithmetic` returns ``[]``)."""


def tokenize(question: str) -> list[str | float]:
    """The question as numbers (floats) and known symbols/words; everything else is dropped."""
    text = question.replace("²", " ^ 2 ").replace("³", " ^ 3 ")  # before NFKC turns "3²" into "32"
    text = unicodedata.normalize("NFKC", text).lower()  # full-width ＋（）１？ -> +()1?
    for pattern, replacement in REWRITES:
        text = re.sub(pattern, replacement, text)
    tokens: list[str | float] = []
    for token in _TOKEN.findall(text):
        if token[0].isdigit():
            tokens.append(float(token))
        elif not re.fullmatch(_WORD, token) or token in WORDS or token in VERBS or token in NOUNS:
            tokens.append(token)
    return tokens


def parse_arithmetic(question: str) -> list[Op]:
    """The independent calculations the question asks for, in order; ``[]`` if it asks for none."""
    tokens = tokenize(question)
    if len(tokens) > MAX_TOKENS:
        return []
    try:
        items = _Parser(tokens).question()
    except _NotUnderstood:
        return []
    return [item for item in items if isinstance(item, Op)]


class _Parser:
    """Recursive descent over the tokens; one method per grammar rule."""

    def __init__(self, tokens: list[str | float]) -> None:
        self.tokens = tokens
        self.position = 0
        self.previous: Expr | None = None  # the item a continuation ("then subtract 5") builds on
        self.used_previous = False

    def peek(self, ahead: int = 0) -> str | float | None:
        index = self.position + ahead
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self) -> str | float | None:
        token = self.peek()
        self.position += 1
        return token

    def accept(self, *words: str) -> bool:
        if self.peek() in words:
            self.position += 1
            return True
        return False

    def question(self) -> list[Expr]:
        """question := item (separator+ item)*; a continuation replaces the item it continues."""
        items: list[Expr] = []
        while self.peek() is not None:
            after_then = False
            while self.peek() in SEPARATORS:
                after_then = self.take() == "then" or after_then
            if self.peek() is None:
                break
            self.used_previous = False
            item = self.item(after_then)
            if self.peek() is not None and self.peek() not in SEPARATORS:
                raise _NotUnderstood
            if self.used_previous and self.previous in items:
                items.remove(self.previous)
            items.append(item)
            self.previous = item
        return items

    def item(self, after_then: bool) -> Expr:
        """Leading fillers are skipped; after ``then``, a leading operator continues the previous result (``再减5``)."""
        while self.peek() in LEADING_FILLERS:
            self.take()
        if after_then and self.peek() in INFIX:
            return self.expression(left=self.previous_result())
        return self.expression()

    def previous_result(self) -> Expr:
        if self.previous is None:
            raise _NotUnderstood
        self.used_previous = True
        return self.previous

    def expression(self, min_precedence: int = 1, left: Expr | None = None) -> Expr:
        """Precedence climbing: ``2 + 3 * 4`` is ``2 + (3 * 4)``; ``2 ^ 3 ^ 2`` is ``2 ^ (3 ^ 2)``."""
        if left is None:
            left = self.unary()
        while self.peek() in INFIX:
            operation, precedence, right_associative = INFIX[self.peek()]
            if precedence < min_precedence:
                break
            self.take()
            right = self.expression(precedence if right_associative else precedence + 1)
            left = Op(operation, (left, right))
        return left

    def unary(self) -> Expr:
        """A sign, ``sqrt`` (of the next operand, or of the previous result when none follows), or an atom."""
        if self.accept("+"):
            return self.unary()
        if self.accept("-"):
            operand = self.unary()
            return -operand if isinstance(operand, float) else Op("subtract", (0.0, operand))
        if self.accept("sqrt"):
            return Op("sqrt", (self.unary() if self.starts_operand() else self.previous_result(),))
        return self.atom()

    def starts_operand(self) -> bool:
        token = self.peek()
        return isinstance(token, float) or token in ("(", "-", "+", "sqrt", "it") or token in VERBS or token in NOUNS

    def atom(self) -> Expr:
        token = self.take()
        if isinstance(token, float):
            if not math.isfinite(token):
                raise _NotUnderstood
            return token
        if token == "(":
            inner = self.expression()
            if not self.accept(")"):
                raise _NotUnderstood
            return inner
        if token == "it":
            return self.previous_result()
        if token in VERBS:
            return self.verb_phrase(VERBS[token])
        if token in NOUNS:
            self.accept("of", "between")
            return self.operand_list(NOUNS[token], self.expression())
        raise _NotUnderstood

    def verb_phrase(self, operation: str) -> Expr:
        """``add 2 and 3`` | ``add 3 to 2`` | ``subtract 5 from 12`` | ``multiply 3 by 4``, or, with the
        previous result as first number, ``multiply by 4`` | ``add 3``.
        """
        if self.accept("by"):
            return Op(operation, (self.previous_result(), self.expression()))
        first = self.expression()
        if self.peek() in ("and", "by", ",") and self.number_follows():
            return self.operand_list(operation, first)
        if (operation, self.peek()) in (("add", "to"), ("subtract", "from")):
            self.take()
            return Op(operation, (self.expression(), first))
        return Op(operation, (self.previous_result(), first))

    def operand_list(self, operation: str, first: Expr) -> Op:
        """``first and B`` (``by``/``,`` work too); ``add``/``multiply`` take more: ``the sum of 1, 2 and 3``."""
        result = first
        while self.peek() in ("and", "by", ",") and self.number_follows():
            self.take()
            result = Op(operation, (result, self.expression()))
            if operation not in ("add", "multiply"):
                break
        if not isinstance(result, Op):
            raise _NotUnderstood
        return result

    def number_follows(self) -> bool:
        """After ``and``/``,``: a number or bracket continues the list; a verb or ``then`` starts a new item."""
        token = self.peek(1)
        return isinstance(token, float) or token in ("(", "-", "it")
