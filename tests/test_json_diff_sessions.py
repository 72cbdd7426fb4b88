"""mcp_teach.display.json_diff on lesson 05's real sessions: identical on every transport, a changed field named."""

from __future__ import annotations

import asyncio

import pytest
from l05_support import record_sessions

from mcp_teach.display.json_diff import diff_captures
from mcp_teach.wire.capture import CaptureTransport


@pytest.fixture(scope="module")
def sessions() -> dict[tuple[str, str], CaptureTransport]:
    return asyncio.run(record_sessions())


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
