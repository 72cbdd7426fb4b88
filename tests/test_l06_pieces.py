"""mcp_teach.lessons.l06_pieces: every building block of one call timed, its steps counted."""

from __future__ import annotations

from l06_support import all_positive

from mcp_teach.lessons.l06_pieces import count_steps, measure_pieces


def test_measure_pieces_times_every_piece(run):
    pieces = run(measure_pieces, 20)
    assert len(pieces) == 7
    assert any("pydantic" in name for name in pieces)
    assert any("jsonschema" in name for name in pieces)
    for samples in pieces.values():
        assert len(samples) == 20
        assert all_positive(samples)


def test_count_steps_counts_per_call(run):
    counts = run(count_steps, 5)
    assert list(counts) == [
        "Python function calls and coroutine steps",
        "event-loop turns",
        "pydantic validations",
        "pydantic serialisations",
    ]
    assert all(value >= 1 for value in counts.values())
    assert counts["Python function calls and coroutine steps"] > counts["event-loop turns"]
