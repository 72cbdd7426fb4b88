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
}


@pytest.mark.parametrize(("question", "expected"), EVERYDAY.items(), ids=list(EVERYDAY))
def test_everyday_phrasings(question: str, expected: str) -> None:
    [tree] = parse_arithmetic(question)
    assert expression(tree) == expected


def test_everyday_phrasings_combine_with_the_grammar() -> None:
    [tree] = parse_arithmetic("What is half of 9, then add 1?")
    assert tree == Op("add", (Op("divide", (9.0, 2.0)), 1.0))
    assert [expression(t) for t in parse_arithmetic("half of 8 and half of 10")] == ["8 ÷ 2", "10 ÷ 2"]


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
