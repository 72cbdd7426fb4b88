"""Everyday phrasings of arithmetic become the operations a calculator has (teaching_parse), and a question the
rules cannot read gets a sentence that says so, with phrasings that work (teaching_text.not_understood)."""

from __future__ import annotations

import pytest

from mcp_teach.llm.teaching_parse import Op, parse_arithmetic
from mcp_teach.llm.teaching_text import EXAMPLES, expression, not_understood

ALL = ["add", "subtract", "multiply", "divide"]

EVERYDAY = {
    "half of 9": "9 ÷ 2",
    "What is half of 9?": "9 ÷ 2",
    "a third of 12": "12 ÷ 3",
    "one quarter of 8": "8 ÷ 4",
    "如果我有12个苹果，分给4个人，每人几个？": "12 ÷ 4",
    "3 items at 4 each": "3 × 4",
    "3 pizzas at 12 dollars per pizza": "3 × 12",
    "3 books at $4 apiece": "3 × 4",
    "12 apples shared among 4 people": "12 ÷ 4",
    "If I have 12 apples and share them equally among 4 friends, how many does each get?": "12 ÷ 4",
    "30 dollars split between 3": "30 ÷ 3",
    "一个披萨12元，3个多少钱？": "12 × 3",
    "每本书4块，买5本多少钱": "4 × 5",
    "把12分成3份，每份几个？": "12 ÷ 3",
    # Brought back (issue 37): phrasings removed once because no test reached them.
    "double 7": "7 × 2",
    "twice 7": "7 × 2",
    "triple 4": "4 × 3",
    "A pizza costs 12 dollars; how much do 3 pizzas cost?": "12 × 3",
    "One ticket costs $5, what do 4 tickets cost?": "5 × 4",
    "20 percent of 50": "20 × 50 ÷ 100",
    "What is 20% of 50?": "20 × 50 ÷ 100",
    "5 dollars per hour for 8 hours": "5 × 8",
    "120 km in 2 hours, how many km per hour?": "120 ÷ 2",
    "9的一半": "9 ÷ 2",
    "7的两倍": "7 × 2",
    "7的3倍是多少": "7 × 3",
    "12的三分之一": "12 ÷ 3",
    "50的20%": "20 × 50 ÷ 100",
    "50的百分之20": "20 × 50 ÷ 100",
    "3和4相乘是多少？": "3 × 4",
    "3与4的和": "3 + 4",
    "2的10次方是多少": "2 ^ 10",
    "16的平方根": "√16",
    "What is 3 squared?": "3 ^ 2",
    "2 cubed": "2 ^ 3",
    "3x4": "3 × 4",
    "17取余5": "17 mod 5",
    "1加2，接着乘3": "(1 + 2) × 3",
    "add 1 and 2, after that multiply by 3": "(1 + 2) × 3",
    "the result of 1 + 2": "1 + 2",
    # Money stories: what there was minus what was spent, or the sum of what was bought
    "I buy 7 tickets at 12 euros each and pay with 100 euros. How much change do I get?": "100 − 7 × 12",
    "我有100元，买了3本书，每本12元，还剩多少钱？": "100 − 3 × 12",
    "I buy 3 apples at 2 euros each and 4 pears at 3 euros each. How much in total?": "3 × 2 + 4 × 3",
    "What is the average of 4, 8 and 12?": "(4 + 8 + 12) ÷ 3",
    "What is 12 times 7, minus 5?": "12 × 7 − 5",
}


@pytest.mark.parametrize(("question", "expected"), EVERYDAY.items(), ids=list(EVERYDAY))
def test_everyday_phrasings(question: str, expected: str) -> None:
    [tree] = parse_arithmetic(question)
    assert expression(tree) == expected


def test_everyday_phrasings_combine_with_the_grammar() -> None:
    [tree] = parse_arithmetic("What is half of 9, then add 1?")
    assert tree == Op("add", (Op("divide", (9.0, 2.0)), 1.0))
    assert [expression(t) for t in parse_arithmetic("half of 8 and half of 10")] == ["8 ÷ 2", "10 ÷ 2"]
    assert [expression(t) for t in parse_arithmetic("double 7 and half of 10")] == ["7 × 2", "10 ÷ 2"]
    assert [expression(t) for t in parse_arithmetic("1 + 2 and -3 * 4")] == ["1 + 2", "(-3) × 4"]  # two questions


@pytest.mark.parametrize(
    "question",
    [
        "I buy 7 tickets at 12 euros each and pay with 100 euros.",  # asks nothing of the 100: not 7 × 12 alone
        "I have 3 apples, what is 2 + 2?",
        "I have 50 euros and buy 3 books. How much is left?",  # no price: not 50 − 3
    ],
)
def test_a_number_left_unused_means_no_reading(question: str) -> None:
    """A number nothing was done with would make any answer wrong: the question is not read at all."""
    assert parse_arithmetic(question) == []


@pytest.mark.parametrize(
    "question",
    ["I have 3 apples and 4 pears", "What is the capital of France?", "half of the class", "share it with me", ""],
)
def test_what_is_not_arithmetic_stays_so(question: str) -> None:
    assert parse_arithmetic(question) == []


@pytest.mark.parametrize(("question", "expected"), [("7 % 2", "7 mod 2"), ("1,000 + 2", "1000 + 2")])
def test_old_readings_are_unchanged(question: str, expected: str) -> None:
    [tree] = parse_arithmetic(question)
    assert expression(tree) == expected


def test_not_understood_names_the_numbers_and_gives_examples_that_work() -> None:
    said = not_understood("How many legs do 3 spiders have?", ALL, chinese=False)
    assert said == (
        'I could not read a calculation in "How many legs do 3 spiders have?": I found the number 3, but not '
        'what to do with it. Ask it like this, for example: "3 items at 2 each", "3 shared among 2".'
    )
    two = not_understood("If a train leaves at 3 and arrives at 5, how long was it?", ["add", "subtract"], False)
    assert "I found the numbers 3 and 5, but not what to do with them" in two
    assert two.endswith('"add 3 and 5", "subtract 5 from 3".')
    chinese = not_understood("3只蜘蛛有几条腿？", ALL, chinese=True)
    assert chinese.startswith("我没能从“3只蜘蛛有几条腿？”里读出算式：我找到了 3")


@pytest.mark.parametrize("chinese", [False, True])
@pytest.mark.parametrize("operation", list(EXAMPLES))
def test_every_example_is_read_as_its_operation(operation: str, chinese: bool) -> None:
    example = EXAMPLES[operation][chinese].format(a="12", b="4").strip('"“”')
    [tree] = parse_arithmetic(example)
    assert tree.operation == operation


@pytest.mark.parametrize(
    ("question", "operations"),
    [
        ("I have 3 apples and 4 pears", ALL),  # asks nothing
        ("What is the capital of France?", ALL),  # no number
        ("What is 3 spiders' legs?", ["echo"]),  # no tool does arithmetic
        ("", ALL),
    ],
)
def test_not_understood_leaves_other_questions_alone(question: str, operations: list[str]) -> None:
    assert not_understood(question, operations, chinese=False) is None
