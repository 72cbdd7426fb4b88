"""Everyday questions for the offline teaching model, in English and Chinese, with what it must do.

Each case: the question, the calculator tool calls expected in order (name and arguments), and the answer:

- a number: the final answer's last number (``"7 × 12 = 84, 100 − 84 = 16. The answer is 16."`` -> 16);
- ``LACKS_*``: no call; the answer says what is missing and has no number the question did not have;
- ``TOOLS`` / ``HELLO``: no call; the answer says what the tools can do / says hello;
- ``FAILS``: the tool's error is explained.

The language of the answer is the case's ``language``. Run by ``tests/test_teaching_corpus.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Call = tuple[str, dict[str, Any]]

LACKS_PRICE, LACKS_COUNT, LACKS_BUDGET, LACKS_BASE, LACKS_NUMBERS = (
    "lacks:price",
    "lacks:count",
    "lacks:budget",
    "lacks:base",
    "lacks:numbers",
)
TOOLS, HELLO, FAILS = "tools", "hello", "fails"


def add(a: float, b: float) -> Call:
    return ("calculator_add", {"a": a, "b": b})


def sub(a: float, b: float) -> Call:
    return ("calculator_subtract", {"a": a, "b": b})


def mul(a: float, b: float) -> Call:
    return ("calculator_multiply", {"a": a, "b": b})


def div(a: float, b: float) -> Call:
    return ("calculator_divide", {"a": a, "b": b})


@dataclass(frozen=True)
class Case:
    kind: str
    question: str
    calls: list[Call]
    answer: float | str
    language: str  # "en" or "zh"


def en(kind: str, question: str, calls: list[Call], answer: float | str) -> Case:
    return Case(kind, question, calls, answer, "en")


def zh(kind: str, question: str, calls: list[Call], answer: float | str) -> Case:
    return Case(kind, question, calls, answer, "zh")


CASES: list[Case] = [
    # --- English: a price and a count ---
    en("price", "A ticket costs 12 euros. How much do 7 tickets cost?", [mul(12, 7)], 84),
    en("price", "One pizza costs $9; what do 4 pizzas cost?", [mul(9, 4)], 36),
    en("price", "Apples cost 2 dollars each. How much are 6 apples?", [mul(2, 6)], 12),
    en("price", "If a book costs 15 euros, how much do 3 books cost?", [mul(15, 3)], 45),
    en("price", "7 tickets at 12 euros each", [mul(7, 12)], 84),
    en("price", "How much are 5 coffees at 3.5 euros each?", [mul(5, 3.5)], 17.5),
    en("price", "I buy 4 shirts for 20 dollars each. How much do I pay?", [mul(4, 20)], 80),
    en("price", "Each notebook is 3 dollars. What is the cost of 8 notebooks?", [mul(3, 8)], 24),
    en("price", "3 kg of rice at 2.5 euros per kg", [mul(3, 2.5)], 7.5),
    en("price", "5 dollars per hour for 8 hours", [mul(5, 8)], 40),
    en("price", "I work 8 hours at 15 dollars an hour. How much do I earn?", [mul(8, 15)], 120),
    en("price", "What do 12 eggs cost at 0.25 each?", [mul(12, 0.25)], 3),
    en("price", "A coffee is 3 euros. How much are 4 coffees?", [mul(3, 4)], 12),
    en("price", "Tickets are 12 euros each and I need 7. How much is that?", [mul(12, 7)], 84),
    en("price", "3 pizzas at 12 dollars each", [mul(3, 12)], 36),
    en("price", "How much do 6 bottles of water cost at 1.5 euros each?", [mul(6, 1.5)], 9),
    en("price", "3 books at $4 apiece", [mul(3, 4)], 12),
    en("price", "A movie ticket costs $8. How much do I pay for 5 tickets?", [mul(8, 5)], 40),
    # --- English: a total of several purchases ---
    en(
        "total",
        "I buy 3 apples at 2 euros each and 4 pears at 3 euros each. How much in total?",
        [mul(3, 2), mul(4, 3), add(6, 12)],
        18,
    ),
    en(
        "total",
        "2 sandwiches at 4.5 euros each and 3 juices at 2 euros each. What do I pay?",
        [mul(2, 4.5), mul(3, 2), add(9, 6)],
        15,
    ),
    en(
        "total",
        "I spent 12 euros on lunch and 8 euros on coffee. How much did I spend in total?",
        [add(12, 8)],
        20,
    ),
    en(
        "total",
        "Lunch was $15, dinner was $25 and the taxi was $10. What did I spend altogether?",
        [add(15, 25), add(40, 10)],
        50,
    ),
    # --- English: money left, change ---
    en(
        "left",
        "I buy 7 tickets at 12 euros each and pay with 100 euros. How much change do I get?",
        [mul(7, 12), sub(100, 84)],
        16,
    ),
    en("left", "I have 50 dollars and spend 18. How much is left?", [sub(50, 18)], 32),
    en(
        "left",
        "I have 20 euros and buy 3 sandwiches at 4 euros each. How much money do I have left?",
        [mul(3, 4), sub(20, 12)],
        8,
    ),
    en("left", "A book costs 15 euros. I pay with a 20 euro note. What change do I get?", [sub(20, 15)], 5),
    en(
        "left",
        "I had 100 dollars, spent 30 on food and 25 on books. How much is left?",
        [sub(100, 30), sub(70, 25)],
        45,
    ),
    en(
        "left",
        "How much change do I get from 50 euros if I buy 3 coffees at 4 euros each?",
        [mul(3, 4), sub(50, 12)],
        38,
    ),
    en(
        "left",
        "I pay with a 50 dollar bill for 2 books at 18 dollars each. What is my change?",
        [mul(2, 18), sub(50, 36)],
        14,
    ),
    en(
        "left",
        "Tom has 40 euros. He buys 2 books at 12 euros each. How much money does he have left?",
        [mul(2, 12), sub(40, 24)],
        16,
    ),
    en(
        "left",
        "I give the cashier 100 euros for 7 tickets at 12 euros each. How much change?",
        [mul(7, 12), sub(100, 84)],
        16,
    ),
    en("left", "I start with 200 dollars and pay 45 dollars for a jacket. How much remains?", [sub(200, 45)], 155),
    en(
        "left",
        "I have 100 euros. I buy 2 shirts at 20 euros each and 3 socks at 5 euros each. How much is left?",
        [mul(2, 20), mul(3, 5), sub(100, 40), sub(60, 15)],
        45,
    ),
    # --- English: percentages ---
    en("percent", "What is 20% of 50?", [mul(20, 50), div(1000, 100)], 10),
    en("percent", "20 percent of 80", [mul(20, 80), div(1600, 100)], 16),
    en("percent", "How much is 15% of 200 euros?", [mul(15, 200), div(3000, 100)], 30),
    en("percent", "What is 25% off 80 euros?", [mul(80, 25), div(2000, 100), sub(80, 20)], 60),
    en(
        "percent",
        "A jacket costs 80 euros with 25% off. What do I pay?",
        [mul(80, 25), div(2000, 100), sub(80, 20)],
        60,
    ),
    en("percent", "What is 50 plus 10%?", [mul(50, 10), div(500, 100), add(50, 5)], 55),
    en("percent", "What is a 15% tip on a 40 dollar bill?", [mul(15, 40), div(600, 100)], 6),
    en("percent", "What is 10% of 250?", [mul(10, 250), div(2500, 100)], 25),
    en("percent", "100 minus 20%", [mul(100, 20), div(2000, 100), sub(100, 20)], 80),
    # --- English: doubling, halving, fractions ---
    en("double", "double 7", [mul(7, 2)], 14),
    en("double", "What is twice 8?", [mul(8, 2)], 16),
    en("double", "triple 4", [mul(4, 3)], 12),
    en("double", "half of 9", [div(9, 2)], 4.5),
    en("double", "What is a third of 12?", [div(12, 3)], 4),
    en("double", "one quarter of 100", [div(100, 4)], 25),
    en("double", "double 7, then add 1", [mul(7, 2), add(14, 1)], 15),
    en("double", "What is half of 50 plus 10?", [div(50, 2), add(25, 10)], 35),
    en("double", "add 3 and 4, then double it", [add(3, 4), mul(7, 2)], 14),
    en("double", "Take 100, halve it, then add 5", [div(100, 2), add(50, 5)], 55),
    # --- English: averages ---
    en("average", "What is the average of 4, 8 and 12?", [add(4, 8), add(12, 12), div(24, 3)], 8),
    en("average", "average of 3 and 5", [add(3, 5), div(8, 2)], 4),
    en("average", "the mean of 10, 20, 30 and 40", [add(10, 20), add(30, 30), add(60, 40), div(100, 4)], 25),
    en(
        "average",
        "I scored 80, 90 and 70 on my tests. What is my average?",
        [add(80, 90), add(170, 70), div(240, 3)],
        80,
    ),
    # --- English: several steps ---
    en("steps", "What is 12 times 7, minus 5?", [mul(12, 7), sub(84, 5)], 79),
    en("steps", "What is 2 plus 3, times 4?", [add(2, 3), mul(5, 4)], 20),
    en("steps", "Add 3 and 4, then multiply by 5", [add(3, 4), mul(7, 5)], 35),
    en("steps", "Start with 10, add 5, then double it", [add(10, 5), mul(15, 2)], 30),
    en("steps", "Take 100, subtract 20, then divide by 4", [sub(100, 20), div(80, 4)], 20),
    en("steps", "multiply 3 by 4, then subtract 5", [mul(3, 4), sub(12, 5)], 7),
    en("steps", "What is 6 times 7 and then plus 8?", [mul(6, 7), add(42, 8)], 50),
    en("steps", "10 plus 5, then times 2, then minus 6", [add(10, 5), mul(15, 2), sub(30, 6)], 24),
    en("steps", "What is 20 divided by 4, plus 3?", [div(20, 4), add(5, 3)], 8),
    en("steps", "What is 7 times 12, and then subtract it from 100?", [mul(7, 12), sub(100, 84)], 16),
    # --- English: plain arithmetic ---
    en("plain", "What is 7 + 5?", [add(7, 5)], 12),
    en("plain", "12 divided by 4", [div(12, 4)], 3),
    en("plain", "multiply 6 by 7", [mul(6, 7)], 42),
    en("plain", "the sum of 1, 2 and 3", [add(1, 2), add(3, 3)], 6),
    en("plain", "3x4", [mul(3, 4)], 12),
    en("plain", "what's 9 minus 3", [sub(9, 3)], 6),
    en("plain", "15 plus 27", [add(15, 27)], 42),
    en("plain", "subtract 5 from 12", [sub(12, 5)], 7),
    en("plain", "What is 1 + 2 and what is 3 * 4?", [add(1, 2), mul(3, 4)], 12),
    en("plain", "What is 100 divided by 8?", [div(100, 8)], 12.5),
    en("plain", "What is 0.1 + 0.2?", [add(0.1, 0.2)], 0.3),
    en("plain", "What is (2 + 3) * 4?", [add(2, 3), mul(5, 4)], 20),
    en("plain", "7 divided by 0", [div(7, 0)], FAILS),
    # --- English: a number is missing ---
    en("refusal", "How much do 7 tickets cost?", [], LACKS_PRICE),
    en("refusal", "A ticket costs 12 euros. How much change do I get?", [], LACKS_BUDGET),
    en("refusal", "What is 20% of my salary?", [], LACKS_BASE),
    en("refusal", "What is my average?", [], LACKS_NUMBERS),
    en("refusal", "I buy 3 books. How much is left?", [], LACKS_PRICE),
    en("refusal", "I have 50 euros and buy 3 books. How much is left?", [], LACKS_PRICE),
    en("refusal", "A ticket costs 12 euros. How much do the tickets cost?", [], LACKS_COUNT),
    en("refusal", "What is the average of 7?", [], LACKS_NUMBERS),
    en("refusal", "I have 3 kids and buy 2 tickets at 10 euros each. How much is left?", [], LACKS_BUDGET),
    # --- English: off topic ---
    en("off-topic", "What is the capital of France?", [], TOOLS),
    en("off-topic", "Tell me a joke", [], TOOLS),
    en("off-topic", "Hello!", [], HELLO),
    en("off-topic", "Who wrote Hamlet?", [], TOOLS),
    en("off-topic", "What's the weather like today?", [], TOOLS),
    en("off-topic", "I have 3 apples and 4 pears", [], TOOLS),
    # --- Chinese: a price and a count ---
    zh("price", "一张票12元，7张票多少钱？", [mul(12, 7)], 84),
    zh("price", "一个披萨12元，3个多少钱？", [mul(12, 3)], 36),
    zh("price", "每本书4块，买5本多少钱", [mul(4, 5)], 20),
    zh("price", "买5本书，每本4元，一共多少钱？", [mul(5, 4)], 20),
    zh("price", "苹果每斤6元，买3斤要多少钱？", [mul(6, 3)], 18),
    zh("price", "一杯咖啡3.5元，买4杯多少钱？", [mul(3.5, 4)], 14),
    zh("price", "我买了7张票，每张12元，一共花了多少钱？", [mul(7, 12)], 84),
    zh("price", "铅笔2元一支，买6支需要多少钱？", [mul(2, 6)], 12),
    zh("price", "一件衬衫80元，买两件多少钱？", [mul(80, 2)], 160),
    zh("price", "每小时工资15元，工作8小时能挣多少钱？", [mul(15, 8)], 120),
    zh("price", "一瓶水1.5元，买6瓶多少钱？", [mul(1.5, 6)], 9),
    zh("price", "买3个苹果，每个2元，多少钱？", [mul(3, 2)], 6),
    zh("price", "一张电影票8元，买5张多少钱？", [mul(8, 5)], 40),
    # --- Chinese: a total of several purchases ---
    zh("total", "买3个苹果每个2元，4个梨每个3元，一共多少钱？", [mul(3, 2), mul(4, 3), add(6, 12)], 18),
    zh("total", "我午饭花了25元，晚饭花了30元，一共花了多少钱？", [add(25, 30)], 55),
    zh(
        "total",
        "笔记本每本5元，买了4本；钢笔每支8元，买了2支。总共多少钱？",
        [mul(5, 4), mul(8, 2), add(20, 16)],
        36,
    ),
    zh("total", "早饭8元，午饭20元，晚饭15元，一共多少钱？", [add(8, 20), add(28, 15)], 43),
    # --- Chinese: money left, change ---
    zh("left", "我买了7张票，每张12元，付了100元，找零多少？", [mul(7, 12), sub(100, 84)], 16),
    zh("left", "我有50元，花了18元，还剩多少钱？", [sub(50, 18)], 32),
    zh("left", "我有100元，买了3本书，每本12元，还剩多少钱？", [mul(3, 12), sub(100, 36)], 64),
    zh("left", "一支笔3元，买4支，给了20元，应该找回多少钱？", [mul(3, 4), sub(20, 12)], 8),
    zh("left", "妈妈给我50元，我买文具花了23元，还剩多少钱？", [sub(50, 23)], 27),
    zh("left", "我带了200元，买了一件衣服150元，还剩多少？", [sub(200, 150)], 50),
    zh("left", "钱包里有80元，午饭花了35元，晚饭花了28元，还剩多少钱？", [sub(80, 35), sub(45, 28)], 17),
    zh("left", "一本书15元，我付了20元，应找多少钱？", [sub(20, 15)], 5),
    zh("left", "买2个面包每个6元，付了50元，找零多少？", [mul(2, 6), sub(50, 12)], 38),
    zh("left", "我有100元，买了2本书每本20元，还剩多少钱？", [mul(2, 20), sub(100, 40)], 60),
    zh("left", "妈妈买了5斤苹果，每斤6元，付了50元，应找回多少元？", [mul(5, 6), sub(50, 30)], 20),
    # --- Chinese: percentages ---
    zh("percent", "50的20%是多少？", [mul(20, 50), div(1000, 100)], 10),
    zh("percent", "200的百分之15是多少", [mul(15, 200), div(3000, 100)], 30),
    zh("percent", "80元的25%是多少钱？", [mul(25, 80), div(2000, 100)], 20),
    zh("percent", "一件衣服200元，打8折，现在多少钱？", [mul(200, 8), div(1600, 10)], 160),
    zh("percent", "300元打八折是多少钱？", [mul(300, 8), div(2400, 10)], 240),
    zh("percent", "1000的百分之5", [mul(5, 1000), div(5000, 100)], 50),
    zh("percent", "250的10%等于多少？", [mul(10, 250), div(2500, 100)], 25),
    # --- Chinese: doubling, halving, fractions ---
    zh("double", "7的两倍是多少？", [mul(7, 2)], 14),
    zh("double", "7的3倍是多少", [mul(7, 3)], 21),
    zh("double", "9的一半是多少？", [div(9, 2)], 4.5),
    zh("double", "12的三分之一", [div(12, 3)], 4),
    zh("double", "15翻倍是多少？", [mul(15, 2)], 30),
    zh("double", "3加4，然后翻倍", [add(3, 4), mul(7, 2)], 14),
    zh("double", "100的一半再加5", [div(100, 2), add(50, 5)], 55),
    zh("double", "20的四分之一是多少？", [div(20, 4)], 5),
    zh("double", "8的三倍是多少？", [mul(8, 3)], 24),
    # --- Chinese: averages ---
    zh("average", "4、8和12的平均数是多少？", [add(4, 8), add(12, 12), div(24, 3)], 8),
    zh("average", "求3和5的平均值", [add(3, 5), div(8, 2)], 4),
    zh("average", "我三次考试分别考了80、90和70分，平均分是多少？", [add(80, 90), add(170, 70), div(240, 3)], 80),
    zh("average", "10、20、30、40的平均数", [add(10, 20), add(30, 30), add(60, 40), div(100, 4)], 25),
    zh("average", "6和10的平均数是几？", [add(6, 10), div(16, 2)], 8),
    # --- Chinese: several steps ---
    zh("steps", "12乘以7，再减5", [mul(12, 7), sub(84, 5)], 79),
    zh("steps", "12乘7，减5等于多少？", [mul(12, 7), sub(84, 5)], 79),
    zh("steps", "先算3加4，然后乘以5", [add(3, 4), mul(7, 5)], 35),
    zh("steps", "10加5，再乘2，再减6", [add(10, 5), mul(15, 2), sub(30, 6)], 24),
    zh("steps", "100减20，然后除以4", [sub(100, 20), div(80, 4)], 20),
    zh("steps", "3和4相乘是多少？", [mul(3, 4)], 12),
    zh("steps", "5与6的和是多少", [add(5, 6)], 11),
    zh("steps", "20除以4，再加3", [div(20, 4), add(5, 3)], 8),
    zh("steps", "6乘以7，接着加8", [mul(6, 7), add(42, 8)], 50),
    zh("steps", "200元的衣服打八折后再减20元，多少钱？", [mul(200, 8), div(1600, 10), sub(160, 20)], 140),
    # --- Chinese: plain arithmetic ---
    zh("plain", "帮我算 1+2", [add(1, 2)], 3),
    zh("plain", "1加2等于多少", [add(1, 2)], 3),
    zh("plain", "计算 10 除以 4", [div(10, 4)], 2.5),
    zh("plain", "15减7是多少？", [sub(15, 7)], 8),
    zh("plain", "6乘以7等于几？", [mul(6, 7)], 42),
    zh("plain", "100除以8是多少", [div(100, 8)], 12.5),
    zh("plain", "25加上17", [add(25, 17)], 42),
    zh("plain", "3×4是多少", [mul(3, 4)], 12),
    zh("plain", "把12分成3份，每份几个？", [div(12, 3)], 4),
    zh("plain", "如果我有12个苹果，分给4个人，每人几个？", [div(12, 4)], 3),
    zh("plain", "（2+3）×4等于多少？", [add(2, 3), mul(5, 4)], 20),
    zh("plain", "7除以0等于多少", [div(7, 0)], FAILS),
    # --- Chinese: a number is missing ---
    zh("refusal", "7张票多少钱？", [], LACKS_PRICE),
    zh("refusal", "一张票12元，找零多少？", [], LACKS_BUDGET),
    zh("refusal", "我工资的20%是多少？", [], LACKS_BASE),
    zh("refusal", "我的平均分是多少？", [], LACKS_NUMBERS),
    zh("refusal", "我有50元，买了3本书，还剩多少钱？", [], LACKS_PRICE),
    zh("refusal", "一张票12元，买一些票要多少钱？", [], LACKS_COUNT),
    zh("refusal", "买了一本书花了30元，还剩多少钱？", [], LACKS_BUDGET),
    zh("refusal", "百分之20是多少？", [], LACKS_BASE),
    zh("refusal", "我有3个孩子，买了2张票，每张10元，还剩多少钱？", [], LACKS_BUDGET),
    # --- Chinese: off topic ---
    zh("off-topic", "法国的首都是哪里？", [], TOOLS),
    zh("off-topic", "你好", [], HELLO),
    zh("off-topic", "给我讲个笑话", [], TOOLS),
    zh("off-topic", "今天天气怎么样？", [], TOOLS),
    zh("off-topic", "你是谁？", [], TOOLS),
    zh("off-topic", "谢谢你的帮助", [], TOOLS),
]
