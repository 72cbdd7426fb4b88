"""mcp_teach.lessons.l05_diff: the lesson's session is identical on every transport; a changed field is named."""

from __future__ import annotations

import asyncio

import pytest
from l05_support import record_sessions

from mcp_teach.lessons.l05_diff import diff_captures, differing_paths
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Capture, WireMessage


@pytest.fixture(scope="module")
def sessions() -> dict[tuple[str, str], CaptureTransport]:
    return asyncio.run(record_sessions())


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
def test_differing_paths(a, b, paths):
    assert differing_paths(a, b) == paths


def test_the_same_session_is_identical_on_every_transport(sessions):
    legacy = diff_captures({k[0]: v for k, v in sessions.items() if k[1] == "legacy"})
    assert legacy.identical and legacy.differences() == []
    assert len(legacy.rows) == 9
    modern = diff_captures({k[0]: v for k, v in sessions.items() if k[1] == "auto"})
    assert modern.identical and len(modern.rows) == 8
    assert "identical: all 8 messages are equal in both captures" in repr(modern)


def test_diff_names_the_fields_that_differ_and_handles_shifted_captures(sessions):
    diff = diff_captures({"2026": sessions["memory", "auto"], "2025": sessions["memory", "legacy"]}, max_paths=2)
    assert not diff.identical
    first = diff.differences()[0]
    assert first[:2] == (1, "2025")
    assert first[2][:2] == ["method", "params._meta"]
    text = repr(diff)
    assert "#1  client → server  server/discover" in text
    assert "differs: method, params._meta, … (+3)" in text
    assert "differs: direction" in text
    assert "extra: tools/call (result)" in text  # the legacy capture has one message more
    assert text.endswith("9 of 9 positions differ")
    shorter = diff_captures({"2025": sessions["memory", "legacy"], "2026": sessions["memory", "auto"]})
    assert shorter.rows[-1].differences == (["(missing)"],)
    assert repr(shorter).splitlines()[-2].split() == [
        "#9",
        "server",
        "→",
        "client",
        "tools/call",
        "(result)",
        "missing",
    ]


def test_diff_notices_a_single_changed_value():
    def capture(value: float) -> Capture:
        return Capture(
            [
                WireMessage(CLIENT_TO_SERVER, {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                WireMessage(SERVER_TO_CLIENT, {"jsonrpc": "2.0", "id": 1, "result": {"v": value}}),
            ]
        )

    diff = diff_captures({"a": capture(1.0), "b": capture(1.0), "c": capture(2.0)})
    assert diff.differences() == [(2, "c", ["result.v"])]
    assert "ping (result)" in repr(diff)
    assert "color: #cf222e" in diff._repr_html_()
    with pytest.raises(ValueError, match="at least two"):
        diff_captures({"a": capture(1.0)})
