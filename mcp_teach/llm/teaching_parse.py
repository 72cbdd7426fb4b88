"""Read arithmetic out of a question, in English or Chinese, as expression trees.

``parse_arithmetic("multiply 3 by 4, then subtract 5")`` gives one tree,
``Op("subtract", (Op("multiply", (3, 4)), 5))``; ``"What is 1 + 2 and what is
3 * 4?"`` gives two independent trees. Nothing is computed here: the trees only
say which operations to ask the tools for, and in which order.

Four passes, each a handful of rules:

1. **Everyday phrasings** (:data:`EVERYDAY`): word problems become bracketed
   expressions in the calculator's four operations: ``"20% of 50"`` reads
   ``(20 * 50 / 100)``, ``"double 7"`` ``(7 * 2)``, ``"the average of 4, 8 and
   12"`` ``((4 + 8 + 12) / 3)``, ``"7的两倍"`` ``(7 * 2)``. A price times a count
   (``"7 tickets at 12 euros each"``, ``"A ticket costs 12 euros. How much do 7
   tickets cost?"``, ``"每张12元，买7张"``) reads ``{7 * 12}``: money spent, operands
   in the order the question writes them.
2. **Story** (:func:`_story`): a question about money left ("how much change",
   "还剩", "找零") becomes what there was minus each amount spent (``100 - (7 * 12)``);
   several purchases asked "in total" ("一共") become their sum. Only when every
   number is used.
3. **Rewrite** (:data:`REWRITES`) and **tokenize** (:func:`tokenize`): phrases
   become symbols, so ``"7 times 6"``, ``"7 multiplied by 6"`` and ``"7乘以6"`` all
   read ``7 * 6``; ``"then"``, ``"然后"`` and ``"再"`` become ``then``; then numbers,
   operators, brackets, separators and the few words the grammar knows are kept,
   every other word ("what", "is", "帮我算", "等于多少") is dropped.
4. **Parse** (:class:`_Parser`): the question is a list of *items* separated by
   ``,`` ``;`` ``?`` ``and`` ``then``. An item is an ordinary expression with the
   usual precedence (``^`` before ``* / %`` before ``+ -``, brackets first) or a
   verb phrase (``add 2 and 3``, ``subtract 5 from 12``, ``the product of 3 and
   4``). An item that lacks its first number (``then subtract 5``, ``multiply by
   4``, ``, minus 5``, ``再减5``) or says ``it`` continues from the item before it:
   the earlier tree becomes part of the later one, so a chain is one tree.

A question that does not fit the grammar, that leaves a number unused (``"I
buy 7 tickets at 12 euros each and pay with 100 euros."`` asks nothing of the
100: answering ``7 × 12`` would be wrong), or is longer than :data:`MAX_TOKENS`
tokens, gives ``[]``, never an exception. :func:`lacking` then says which number
a word problem lacks (a price, a count, what was paid, ...), so the model can ask
for it instead of guessing.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

#: A number as written in the question: 12, 2.5, 1e308.
_NUMBER = r"\d+(?:\.\d+)?(?:e[-+]?\d+)?"

_N = rf"(?<![\d.])({_NUMBER})(?!\.?\d)"  # a whole number, never part of one
#: A unit or object after a number: "12 dollars", "3 pizzas" (at most two words).
_UNIT = r"(?:\s*[a-z$€£¥]+){0,2}"
#: What is bought: "7 tickets", "3 kg of rice", "6 bottles of water cost" (at most four words).
_THINGS = r"(?:\s*[a-z]+){0,4}"
#: Money: "$12", "12 euros", "12元" (the number is the group).
_CURRENCY = r"(?:euros?|eur|dollars?|usd|bucks|pounds?|gbp|yuan|rmb|yen|cents?|francs?|€|\$|£|¥)"
_CN_CURRENCY = "元|块钱|块|美元|欧元|英镑"
_MONEY = rf"[$€£¥]\s*{_N}|{_N}\s*(?:{_CURRENCY}\b|{_CURRENCY}|{_CN_CURRENCY})"
#: What a price is per: "each", "apiece", "per kg", "an hour".
_EACH = r"(?:each|apiece|a piece|per\s+[a-z]+|an?\s+(?:hour|day|night|week|month|kg|kilo|pound|litre|liter|piece))\b"
_CN_MEASURE = "个|件|本|支|瓶|张|块|只|份|斤|公斤|千克|人|位|名|杯|碗|盒|包|双|条|袋|台|辆|箱|节|小时|天|次|米|套|顶"
_CN_DIGITS = {**dict(zip("二两三四五六七八九", "223456789", strict=True)), "十": "10"}
_FRACTIONS = {"half": "2", "third": "3", "quarter": "4", "fourth": "4", "fifth": "5", "tenth": "10"}
_MULTIPLES = {"double": "2", "twice": "2", "triple": "3", "treble": "3", "halve": "/2"}
#: Two or more numbers in a list: "4, 8 and 12", "4、8和12".
_LIST = rf"{_NUMBER}(?:\s*(?:,\s*and|,|、|and|和|与|及)\s*{_NUMBER})+"


def _average(match: re.Match[str]) -> str:
    """``"4, 8 and 12"`` -> ``" ((4 + 8 + 12) / 3) "``."""
    numbers = re.findall(_NUMBER, match.group("list"))
    return f" (({' + '.join(numbers)}) / {len(numbers)}) "


def _multiple(match: re.Match[str]) -> str:
    """``"double 7"`` -> ``" (7 * 2) "``, ``"halve it"`` -> ``" (it / 2) "``, ``"then double"`` -> ``" * 2 "``."""
    factor = _MULTIPLES[match.group(1)]
    operation = "/ 2" if factor == "/2" else f"* {factor}"
    return f" ({match.group(2)} {operation}) " if match.group(2) else f" {operation} "


def _price_then_count(match: re.Match[str]) -> str:
    """``"A ticket costs 12 euros. How much do 7 tickets cost?"`` -> ``"{12 * 7}"``: not when the number between is
    what was paid ("costs 12 euros. I pay with 100")."""
    if re.search(r"\b(?:with|have|had|has|give|gave)\b|\b(?:pay|paid)\b(?!\s+for)", match.group("between")):
        return match.group(0)
    return f" {{{match.group('price')} * {match.group('count')}}} "


#: Everyday phrasings of arithmetic, rewritten first into expressions in brackets (see :data:`REWRITES`).
#: Each phrase becomes the operations a calculator has: "half of 9" is 9 / 2, "20% of 50" is 20 * 50 / 100.
#: A price times a count is written in braces, ``{7 * 12}``: :func:`_story` reads braces as money spent.
EVERYDAY: tuple[tuple[str, Any], ...] = (
    # A Chinese numeral after 买/要/的 and before a measure word, 倍 or 分之, or in 打X折: "买两张" -> "买2张",
    # "三分之一" -> "3分之一", "打八折" -> "打8折"
    (rf"(?:(?<=买|要|的|了)([二两三四五六七八九十])(?=\s*(?:{_CN_MEASURE}|倍|分之))|(?<=打)([二两三四五六七八九])(?=折))",
     lambda m: _CN_DIGITS[m[1] or m[2]]),
    # "the average of 4, 8 and 12", "I scored 80, 90 and 70. What is my average?", "4、8和12的平均数"
    (rf"\b(?:the\s+)?(?:average|mean)\s+(?:of\s+)?(?P<list>{_LIST})", _average),
    (rf"(?P<list>{_LIST})[^\d]*?(?:\b(?:average|mean)\b|平均(?:数|值|分(?![给成到为]))?(?![分给成到为]))", _average),
    # "20% of 50", "20 percent of $50"; "25% off 80"; "80 euros with 25% off", "50 plus 10%"
    (rf"{_N}\s*(?:%|percent\b|per cent\b)\s*of\s+(?:the\s+|a\s+|an\s+)?\$?{_N}", r" (\1 * \2 / 100) "),
    (rf"{_N}\s*(?:%|percent\b)\s*off(?:\s+(?:on|of|from))?\s+(?:a\s+|the\s+)?\$?{_N}", r" (\2 - \2 * \1 / 100) "),
    # "a 15% tip on a 40 dollar bill", "8% tax on $50": the tip or tax itself
    (rf"{_N}\s*(?:%|percent\b)\s*(?:tip|tax|discount|interest|commission|raise)\s+(?:on|of|for)\s+(?:a\s+|an\s+|the\s+)?\$?{_N}",
     r" (\1 * \2 / 100) "),
    (rf"\$?{_N}{_UNIT}?\s+(?:with|at|after)\s+(?:a\s+)?{_N}\s*(?:%|percent\b)\s*(?:off|discount)\b",
     r" (\1 - \1 * \2 / 100) "),
    (rf"\$?{_N}{_UNIT}?\s+(?:minus|less|decreased by|reduced by)\s+{_N}\s*(?:%|percent\b)", r" (\1 - \1 * \2 / 100) "),
    (rf"\$?{_N}{_UNIT}?\s+(?:plus|increased by|with)\s+(?:a\s+)?{_N}\s*(?:%|percent\b)", r" (\1 + \1 * \2 / 100) "),
    # Chinese: "50的20%", "50的百分之20", "200元打8折"
    (rf"{_N}\s*(?:{_CN_CURRENCY})?\s*的\s*(?:{_N}\s*%|百分之\s*{_N})", lambda m: f" ({m[2] or m[3]} * {m[1]} / 100) "),
    (rf"{_N}\s*(?:{_CN_CURRENCY})?[^\d;?]{{0,8}}?打\s*{_N}\s*折", r" {\1 * \2 / 10} "),
    # "half of 9", "a third of 12", "one quarter of 8"; "9的一半", "12的3分之一"
    (rf"\b(?:(?:a|an|one)\s+)?({'|'.join(_FRACTIONS)})\s+(?:of\s+)?{_N}", lambda m: f" ({m[2]} / {_FRACTIONS[m[1]]}) "),
    (rf"{_N}\s*的\s*一半", r" (\1 / 2) "),
    (rf"{_N}\s*的\s*{_N}\s*分之一", r" (\1 / \2) "),
    # "double 7", "twice 7", "triple 4", "double it", "then halve"; "7的2倍", "7翻倍"
    (rf"\b({'|'.join(_MULTIPLES)})\b(?:\s+(?:of\s+)?({_NUMBER}|it\b|that\b))?", _multiple),
    (rf"的\s*{_N}\s*倍", r" * \1 "),
    ("翻倍|翻一番", " * 2 "),
    # "7 tickets at 12 euros each", "3 books at $4 apiece", "4 shirts for 20 dollars each", "8 hours at 15 an hour"
    (rf"{_N}{_THINGS}\s+(?:at|@)\s+(?:{_MONEY})(?:\s*{_EACH})?", lambda m: f" {{{m[1]} * {m[2] or m[3]}}} "),
    (rf"{_N}{_THINGS}\s+(?:at|@|for)\s+\$?{_N}{_UNIT}?\s*{_EACH}", r" {\1 * \2} "),
    # "5 dollars per hour for 8 hours"
    (rf"\$?{_N}{_UNIT}\s+(?:per|an?|each)\s+[a-z]+\s+for\s+{_N}", r" {\1 * \2} "),
    # "A ticket costs 12 euros. How much do 7 tickets cost?", "Each notebook is $3. What do 8 notebooks cost?"
    (rf"(?:\bcosts?|\bsells? for|\bpriced at|\b(?:is|are)(?=\s*(?:{_MONEY})))\s+\$?(?P<price>{_NUMBER})"
     rf"(?P<between>[^\d]*?\b(?:how much|what|cost of|price of|buy|bought|need|want|order|get)\b[^\d]*?)"
     rf"(?P<count>{_NUMBER})(?!\.?\d|\s*(?:%|{_CURRENCY}))",
     _price_then_count),
    # "120 km in 2 hours, how many km per hour?"
    (rf"{_N}{_UNIT}\s+in\s+{_N}{_UNIT}[\s,;.]*(?:how (?:many|much|far)|what)\b[a-z\s]*?\bper\b", r" (\1 / \2) "),
    # "12 apples shared among 4 people", "split 12 between 3", "and share them equally among 4 friends"
    (r"(?:\band\s+)?\b(?:shared?|split|divided|distributed?)(?:\s+(?:them|it|these|those))?"
     r"(?:\s+(?:equally|evenly))?\s+(?:among(?:st)?|between|into|with)\b",
     " / "),
    # Chinese: "12个苹果，分给4个人", "平均分成3份"
    (r",?\s*(?:平均|平)?(?:分给|分成|分到|分为)", " / "),
    # "买5本书，每本4元", "7张票，每张12元"
    (rf"{_N}\s*(?:{_CN_MEASURE})[^\d,;?]{{0,6}}?,?\s*(?:每|一)(?:{_CN_MEASURE})?[^\d,;?]{{0,4}}?{_N}\s*(?:{_CN_CURRENCY})",
     r" {\1 * \2} "),
    # "一个披萨12元，3个多少钱？", "每本书4块，买5本多少钱", "苹果6元一斤，买3斤"
    (rf"(?:每|一)(?:{_CN_MEASURE})?[^\d,;?]{{0,8}}?{_N}\s*(?:{_CN_CURRENCY})[^\d?]*?{_N}\s*(?:{_CN_MEASURE})",
     r" {\1 * \2} "),
    (rf"{_N}\s*(?:{_CN_CURRENCY})\s*(?:一|每)(?:{_CN_MEASURE})[^\d?]*?{_N}\s*(?:{_CN_MEASURE})", r" {\1 * \2} "),
)  # fmt: skip

#: Applied first: numbers and dates as written.
CLEANUP: tuple[tuple[str, Any], ...] = (
    (r"(?<=\d),(?=\d{3}(?!\d))", ""),  # 1,000 -> 1000
    (r"\b\d{4}-\d{1,2}-\d{1,2}\b", " "),  # a date such as 2026-01-01 is not a subtraction
)

#: Applied in order to the lower-cased question after :data:`EVERYDAY` and :func:`_story`: (pattern, replacement).
REWRITES: tuple[tuple[str, Any], ...] = (
    # Symbols: × and ·, ÷, the minus sign and the en dash, √, **, 3x4 and 3 x 4
    ("[×·]", " * "), ("÷", " / "), ("[−–]", " - "), ("√", " sqrt "), (r"\*\*", " ^ "), (r"(?<=\d)\s*x\s*(?=\d)", " * "),
    # English
    (r"\b(?:and then|after that|afterwards)\b", " then "),
    (r"\b(?:raised )?to the power(?: of)?\b|\braised to\b", " ^ "), (r"\bsquare root(?: of)?\b", " sqrt "),
    (r"\bsquared\b", " ^ 2 "), (r"\bcubed\b", " ^ 3 "),
    (r"\bdivided by\b|\bover\b", " / "), (r"\bmultiplied by\b|\btimes\b", " * "), (r"\bplus\b", " + "),
    (r"\bminus\b", " - "), (r"\bmod(?:ulo)?\b", " % "),
    (r"\b(?:the )?(?:result|answer|value) of\b", " "),  # "the result of 1 + 2" is just "1 + 2"
    (r"\b(?:the result|the answer)\b", " it "),
    # Chinese: "3和4相乘", "3与4的和" (two numbers, then the operation)
    (rf"({_NUMBER})\s*[和与跟]\s*({_NUMBER})\s*(?:相加|的和|之和)", r" \1 + \2 "),
    (rf"({_NUMBER})\s*[和与跟]\s*({_NUMBER})\s*(?:相减|的差|之差)", r" \1 - \2 "),
    (rf"({_NUMBER})\s*[和与跟]\s*({_NUMBER})\s*(?:相乘|的乘?积|之积)", r" \1 * \2 "),
    (rf"({_NUMBER})\s*[和与跟]\s*({_NUMBER})\s*(?:相除|的商|之商)", r" \1 / \2 "),
    # "17除以5的余数是多少", "17 除以 5 余几": a remainder, not a division
    (rf"({_NUMBER})\s*除以\s*({_NUMBER})\s*(?:的\s*)?余", r" \1 % \2 "),
    # "16的平方根", "根号", "2的10次方", "的平方", "的立方"
    (rf"({_NUMBER})\s*的?\s*平方根", r" sqrt \1 "), ("开根号|根号|开方", " sqrt "),
    (rf"的\s*({_NUMBER})\s*次(?:方|幂)", r" ^ \1 "), ("的平方", " ^ 2 "), ("的立方", " ^ 3 "),
    ("然后|接着|之后|随后|再", " then "), ("加上|加", " + "), ("减去|减掉|减", " - "), ("乘以|乘上|乘", " * "),
    ("除以|除", " / "), ("取余|取模", " % "), ("和|与|跟|以及|还有", " and "), ("结果|它", " it "),
)  # fmt: skip

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
    "+": ("add", 1, False), "-": ("subtract", 1, False), "*": ("multiply", 2, False), "/": ("divide", 2, False),
    "%": ("modulo", 2, False), "^": ("power", 3, True),
}  # fmt: skip
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


#: A question about money left: "how much change", "how much is left", "还剩多少", "找零".
_LEFT = re.compile(
    r"\b(?:change|left|leftover|remain(?:s|ing)?|still have)\b|还剩|剩下|剩余|剩|找零|找回|找我|找多少|应找"
)
#: A question about a sum of money: "in total", "altogether", "一共".
_TOTAL = re.compile(r"\b(?:in total|total|altogether|all together|in all)\b|一共|总共|合计|总计")
#: The money there was to begin with: "pay with 100", "I have $50", "with a 20 euro note", "付了100元", "我有50元".
#: After the money there was, no thing is counted: "I have 50 (euros) and ...", not "I have 3 kids", "我有3个孩子".
_NOT_THINGS = (
    rf"(?!\.?\d)(?:\s*{_CURRENCY}\b)?(?!\s*(?!(?:and|but|so|then|now|left|in|on|to|with|for|at|if|note|bill)\b)[a-z])"
)
_CN_NOT_THINGS = rf"(?!\.?\d|\s*(?:{_CN_MEASURE.replace('块|', '')}))"
_BUDGET = re.compile(
    rf"\b(?:pay|paid|pays|paying|hand over|handed over|give|gave)\s+(?:[a-z]+\s+){{0,2}}?(?:with\s+)?(?:an?\s+)?"
    rf"[$€£¥]?{_N}"
    rf"|\b(?:have|had|has|got|start(?:ed)? with|with|from)\s+(?:an?\s+)?[$€£¥]?{_N}{_NOT_THINGS}"
    rf"|(?:有|带了|带着|付了?|给了?(?:我|他|她|店员|老板|收银员)?|拿了|拿出)\s*{_N}{_CN_NOT_THINGS}"
)
#: Money spent: "spent 30", "costs 15", "$12", "12 euros", "花了18元".
_SPENT = re.compile(
    rf"\b(?:spend|spent|spends|spending|costs?|pay for|paid for)\s+[$€£¥]?{_N}|{_MONEY}|(?:花了?|用了?)\s*{_N}"
    rf"|\band\s+{_N}\s+on\b"  # "spent 30 on food and 25 on books"
)
#: Arithmetic written out: a question that has it is not a story about money.
_WRITTEN_OUT = re.compile(
    r"\b(?:plus|minus|times|add|subtract|multiply|divide|divided|sum|product)\b|[-+*/^%]|[加减乘除]"
)
_BRACES = re.compile(r"\{([\d.\s*/]+)\}")


def _money(masked: str) -> tuple[str | None, list[tuple[int, str]]]:
    """In a question whose purchases are masked: the money there was (only when it asks what is left) and each
    amount spent, as (position, number)."""
    budget = _BUDGET.search(masked) if _LEFT.search(masked) else None
    spent = [
        (match.start(), next(group for group in match.groups() if group))
        for match in _SPENT.finditer(masked)
        if budget is None or not budget.start() <= match.start() < budget.end()
    ]
    return (next(group for group in budget.groups() if group) if budget else None), spent


def _story(text: str) -> str:
    """A story about money as one expression: what there was minus what was spent, or the sum of what was spent.

    ``"i buy {7 * 12} and pay with 100 euros. how much change do i get?"`` -> ``"100 - (7 * 12)"``;
    ``"{3 * 2} and {4 * 3}. how much in total?"`` -> ``"(3 * 2) + (4 * 3)"``. Only when every number is used and
    no arithmetic is written out; otherwise braces become brackets.
    """
    bought = [(match.start(), match.group(1)) for match in _BRACES.finditer(text)]
    masked = _BRACES.sub(lambda match: "#" * len(match.group(0)), text)
    budget, spent = _money(masked)
    rest = _SPENT.sub(" ", _BUDGET.sub(" ", masked) if budget else masked).replace("#", "")
    amounts = [f"({amount})" for _, amount in sorted(bought + spent)]
    if amounts and not _WRITTEN_OUT.search(rest) and not re.search(r"\d", rest):
        if budget:
            return " - ".join([budget, *amounts])
        if len(amounts) > 1 and (len(bought) > 1 or _TOTAL.search(masked)):
            return " + ".join(amounts)
    return _BRACES.sub(r"(\1)", text)


def _everyday(question: str) -> str:
    """The question lower-cased, with its everyday phrasings rewritten (:data:`EVERYDAY`) but not yet a story."""
    text = question.replace("²", " ^ 2 ").replace("³", " ^ 3 ")  # before NFKC turns "3²" into "32"
    text = unicodedata.normalize("NFKC", text).lower()  # full-width ＋（）１？ -> +()1?
    for pattern, replacement in (*CLEANUP, *EVERYDAY):
        text = re.sub(pattern, replacement, text)
    return text


def tokenize(question: str) -> list[str | float]:
    """The question as numbers (floats) and known symbols/words; everything else is dropped."""
    text = _story(_everyday(question))
    for pattern, replacement in REWRITES:
        text = re.sub(pattern, replacement, text)
    known = [t for t in _TOKEN.findall(text) if not re.fullmatch(_WORD, t) or t in WORDS or t in VERBS or t in NOUNS]
    return [float(token) if token[0].isdigit() else token for token in known]


def parse_arithmetic(question: str) -> list[Op]:
    """The independent calculations the question asks for, in order; ``[]`` if it asks for none."""
    if len(tokens := tokenize(question)) > MAX_TOKENS:
        return []
    try:
        items = _Parser(tokens).question()
    except _NotUnderstood:
        return []
    # A number nothing was done with: reading the rest alone would answer another question.
    return [item for item in items if isinstance(item, Op)] if all(isinstance(item, Op) for item in items) else []


#: Questions that ask for a price, a percentage, an average.
_ASKS_PRICE = re.compile(r"\b(?:how much|price of|what do|what does)\b|多少钱|价钱|价格|花多少")
_ASKS = re.compile(r"[?？]|\b(?:how|what|calculate|compute|work out)\b|多少|算|求|几")
#: A percentage that no rule of :data:`EVERYDAY` took: a percentage of what is not said.
_PERCENT = re.compile(r"%|\bper ?cent\b|百分之")
_AVERAGE = re.compile(r"\b(?:average|mean)\b|平均(?!分[给成到为]|[给成到为])")


def lacking(question: str) -> str | None:
    """What a word problem lacks when :func:`parse_arithmetic` reads nothing in it: ``"budget"`` (what is left, but
    not how much there was), ``"base"`` (a percentage of what is not said), ``"numbers"`` (an average of fewer than
    two), ``"price"`` (what things cost, but no price), ``"count"`` (a price, but not how many); ``None`` if none."""
    masked = _BRACES.sub("#", _everyday(question))
    if not _ASKS.search(masked):
        return None
    budget, spent = _money(masked)
    numbers = re.findall(_NUMBER, masked)
    if _LEFT.search(masked) and (spent or "#" in masked) and budget is None:
        return "budget"
    if _PERCENT.search(masked):
        return "base"
    if _AVERAGE.search(masked) and len(numbers) < 2:
        return "numbers"
    if _ASKS_PRICE.search(masked) and "#" not in masked:
        if numbers and not spent:
            return "price"
        if len(spent) == 1 and len(numbers) == 1 + (budget is not None):
            return "count"
    return None


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
            separators = set()
            while self.peek() in SEPARATORS:
                separators.add(self.take())
            if self.peek() is None:
                break
            self.used_previous = False
            item = self.item("then" in separators, "and" in separators)
            if self.peek() is not None and self.peek() not in SEPARATORS:
                raise _NotUnderstood
            if self.used_previous and self.previous in items:
                items.remove(self.previous)
            items.append(item)
            self.previous = item
        return items

    def item(self, after_then: bool, after_and: bool) -> Expr:
        """Leading fillers are skipped; a leading operator continues the previous result (``再减5``, ``12 times 7,
        minus 5``), except a sign after ``and`` without ``then`` (``1 + 2 and -3 * 4`` asks twice)."""
        while self.peek() in LEADING_FILLERS:
            self.take()
        sign = self.peek() in ("+", "-") and after_and and not after_then
        if self.peek() in INFIX and (after_then or (self.previous is not None and not sign)):
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
            left = Op(operation, (left, self.expression(precedence if right_associative else precedence + 1)))
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
