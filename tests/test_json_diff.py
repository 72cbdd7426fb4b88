"""mcp_teach.display.json_diff: the differing fields of two JSON values, and captures compared message by message."""

from __future__ import annotations

import pytest

from mcp_teach.display.json_diff import MISSING, Difference, diff_captures, grouped, json_differences
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture, WireMessage


@pytest.mark.parametrize(
    ("a", "b", "paths"),
    [
        ({"x": 1, "y": [1, 2]}, {"y": [1, 2], "x": 1}, []),  # key order does not matter
        ({"x": 1}, {"x": 2}, ["x"]),
        ({"x": {"y": 1, "z": 2}}, {"x": {"y": 1}}, ["x.z"]),
        ({"x": 1}, {"x": 1, "w": 0}, ["w"]),
        ({"l": [1, {"k": 1}]}, {"l": [1, {"k": 2}]}, ["l.1.k"]),
        ({"l": [1, 2]}, {"l": [1, 2, 3]}, ["l"]),
        ({"n": 3}, {"n": 3.0}, ["n"]),  # different JSON numbers on the wire
        ({"n": 1}, {"n": True}, ["n"]),
        ("a", "b", [""]),
    ],
)
def test_differing_paths(a, b, paths) -> None:
    assert [difference.path for difference in json_differences(a, b)] == paths


def test_each_difference_carries_both_values() -> None:
    found = json_differences({"x": 1, "y": {"z": 2}}, {"x": 1, "y": {"z": 3}, "w": 0})
    assert found == [Difference("y.z", 2, 3), Difference("w", MISSING, 0)]
    assert json_differences({"t": {"a": 1}}, {}) == [Difference("t", {"a": 1}, MISSING)]
    assert repr(MISSING) == "—"


def test_list_items_are_grouped() -> None:
    assert grouped("result.tools.3.title") == "result.tools.*.title"
    assert grouped("0.content.12") == "*.content.*"
    assert grouped("result.v2.x") == "result.v2.x"


def _capture(*results: dict) -> Capture:
    messages = []
    for number, result in enumerate(results, start=1):
        messages.append(WireMessage(CLIENT_TO_SERVER, {"jsonrpc": "2.0", "id": number, "method": "tools/list"}))
        messages.append(WireMessage(SERVER_TO_CLIENT, {"jsonrpc": "2.0", "id": number, "result": result}))
    return Capture(messages)


def test_identical_captures_and_a_single_changed_value() -> None:
    diff = diff_captures({"a": _capture({"v": 1.0}), "b": _capture({"v": 1.0}), "c": _capture({"v": 2.0})})
    assert not diff.identical
    assert diff.differences() == [(2, "c", ["result.v"])]
    assert "tools/list (result)" in repr(diff) and "color: #cf222e" in diff._repr_html_()
    same = diff_captures({"a": _capture({"v": 1.0}), "b": _capture({"v": 1.0})})
    assert same.identical and repr(same).endswith(
        "identical: all 2 messages are equal in both captures (as JSON values)"
    )
    with pytest.raises(ValueError, match="at least two"):
        diff_captures({"a": _capture()})


def test_shorter_longer_and_reversed_captures() -> None:
    one, two = _capture({"v": 1}), _capture({"v": 1}, {"v": 2})
    longer = diff_captures({"one": one, "two": two})
    assert longer.rows[2].differences == (["(extra: tools/list)"],)
    assert "extra: tools/list (result)" in repr(longer)
    shorter = diff_captures({"two": two, "one": one})
    assert shorter.rows[-1].differences == (["(missing)"],)
    turned = Capture([WireMessage(SERVER_TO_CLIENT, m.message) for m in one])
    assert diff_captures({"one": one, "turned": turned}).rows[0].differences == (["direction"],)


def test_max_paths_names_some_paths_or_only_counts_them() -> None:
    a = _capture({"p": 1, "q": 1, "r": 1})
    b = _capture({"p": 2, "q": 2, "r": 2})
    assert "differs: result.p, result.q, … (+1)" in repr(diff_captures({"a": a, "b": b}, max_paths=2))
    assert "differs in 3 fields" in repr(diff_captures({"a": a, "b": b}, max_paths=0))


def test_fields_group_tools_and_merge_repeated_differences() -> None:
    def tools(title: bool) -> dict:
        listed = [{"name": f"t{n}", **({"title": f"T{n}"} if title else {})} for n in range(3)]
        return {"tools": listed, "_meta": {"server": "fast" if title else "low"}}

    fast = _capture(tools(True), {"_meta": {"server": "fast"}, "text": "0.25"})
    low = _capture(tools(False), {"_meta": {"server": "low"}, "text": "0.250000000000000000000000000000001"})
    diff = diff_captures({"fastmcp": fast, "low-level": low})
    rows = [line.split() for line in repr(diff.fields()).splitlines()[2:]]
    assert repr(diff.fields()).splitlines()[0].split() == ["messages", "field", "of", "result", "fastmcp", "low-level"]
    assert rows[0] == ["#2", "tools.*.title", "(×3)", '"T0"', "—"]
    assert rows[1] == ["#2,", "#4", "_meta.server", '"fast"', '"low"']  # the same difference in two answers
    assert rows[2][:3] == ["#4", "text", '"0.25"'] and rows[2][3].endswith("…")  # cut to the width
    assert repr(diff.fields("low-level")) == repr(diff.fields())  # the second capture is the default
