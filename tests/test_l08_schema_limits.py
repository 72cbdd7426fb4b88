"""mcp_teach.lessons.l08_schema_limits: a rule across two arguments passes the schema and is refused by the handler."""

from __future__ import annotations

import pytest
from jsonschema import SchemaError

from mcp_teach.lessons.l08_schema_limits import bounded, schema_limits, verdict, verdicts


def test_one_argument_rule_in_the_schema_cross_argument_rule_only_in_the_handler(run) -> None:
    limits = run(schema_limits)
    cases = {case.what: case for case in limits.cases}
    zero = cases["b = 0: a rule on one argument"]
    assert zero.listed_schema.startswith("rejects (b:") and zero.is_error
    for what in ("a * b overflows: a rule across both", "a / b overflows: a rule across both"):
        assert cases[what].listed_schema == "accepts" and cases[what].is_error
        assert "not a finite number (overflow)" in cases[what].server
    fine = cases["a * b = 1: fine, but the operands are large"]
    assert fine.bounded_schema.startswith("rejects") and not fine.is_error and fine.server == "1.0"
    assert cases["an ordinary call"].server == "6.0"
    inside = cases["a / b overflows inside the bounds"]  # the bounds are not enough for a quotient
    assert inside.listed_schema == inside.bounded_schema == "accepts" and inside.is_error


def test_bounded_leaves_the_original_schema_alone() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "number"}}}
    assert bounded(schema, 10)["properties"]["a"] == {"type": "number", "minimum": -10, "maximum": 10}
    assert schema["properties"]["a"] == {"type": "number"}


def test_verdicts_of_a_conditional_rule_and_an_invalid_schema() -> None:
    schema = {
        "type": "object",
        "if": {"properties": {"a": {"const": 0}}},
        "then": {"properties": {"b": {"minimum": 1}}},
    }
    assert verdict(schema, {"a": 0, "b": 2}) == "accepts"
    assert verdict(schema, {"a": 0, "b": 0}).startswith("rejects (b: 0 is less than the minimum of 1)")
    assert "accepts" in repr(verdicts(schema, [{"a": 1, "b": 0}]))
    with pytest.raises(SchemaError):
        verdicts({"type": "numbr"}, [{}])
