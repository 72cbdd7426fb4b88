"""mcp_teach.lessons.l08_wire_diff: the fastmcp and the low-level calculator differ on the wire where fastmcp adds."""

from __future__ import annotations

import pytest

from mcp_teach.lessons.l08_wire_diff import FASTMCP, LOWLEVEL, compare_servers, json_differences, message_diff


@pytest.fixture(scope="module", params=["auto", "legacy"])
def comparison(request, run):
    return run(compare_servers, request.param)


def test_json_differences_names_each_side() -> None:
    found = json_differences({"x": 1, "y": {"z": 2}}, {"x": 1, "y": {"z": 3}, "w": 0})
    assert [(path, a, b) for path, a, b in found if path != "w"] == [("y.z", 2, 3)]
    assert [path for path, *_ in found] == ["y.z", "w"]


def test_the_requests_are_the_same_and_fastmcp_adds_fields(comparison) -> None:
    assert comparison.requests_identical
    listed = comparison.paths("tools/list")
    assert {"tools.*.title", "tools.*.outputSchema", "tools.*._meta"} <= listed
    assert {f.path for f in comparison.only(LOWLEVEL)} >= {"tools.*.inputSchema.properties.b.not"}
    only_fastmcp = {f.path for f in comparison.only(FASTMCP)}
    assert "structuredContent" in only_fastmcp and "capabilities.prompts" in only_fastmcp
    title = next(f for f in comparison.findings if f.path == "tools.*.title")
    assert (title.count, title.fastmcp, title.lowlevel) == (4, '"Calculator Add"', "—")
    same = comparison.same["tools/list"]
    assert {"tools.*.name", "tools.*.description", "tools.*.inputSchema.additionalProperties"} <= set(same)


def test_the_answers_differ_where_validation_differs(comparison) -> None:
    answers = {why: (fast, low) for why, _, fast, low in comparison.answers}
    fast, low = answers['b = "2": a string, not a number']
    assert fast.startswith("isError: false") and '"3.0"' in fast  # pydantic's lax mode turns "2" into 2.0
    assert low.startswith("isError: true") and "must be a number" in low
    overflow = answers["overflow: a rule across both"]
    assert overflow[0] == overflow[1]  # the same sentence from both
    assert "structuredContent" in answers["a result"][0] and "structuredContent" not in answers["a result"][1]
    assert "Different answers to the same call: 2 of 5 calls." in comparison.summary()


def test_the_message_by_message_diff_agrees(comparison) -> None:
    diff = message_diff(comparison)
    assert not diff.identical
    assert all(d is None for row in diff.rows if row.direction == "client → server" for d in row.differences)
