"""Every exercise's expectations, kept in the package so that a check cell is one line: ``check("04.3")``.

A lesson's exercises live in ``mcp_teach/exercises/lNN.py``, one function each::

    @exercise("04.3", answers=("by_pair", "llm_received"))
    def who_talks_to_whom(check: Checker, by_pair, llm_received) -> None:
        check.equal(llm_received, 3, "llm_received", hint="...")

:func:`check` reads the answers by name from the notebook's globals (the variables a student's cell
defined), so the check cell needs no arguments and shows no expected value. An exercise whose answers
are not all defined yet is *not attempted*: in a lesson that says so and what to define, and Run All
goes on; while grading (``NBGRADER_EXECUTION`` set, by nbgrader or ``mcp-teach grade``) it raises
:class:`~mcp_teach.exercises.check.ExerciseNotAttempted`, so the exercise scores nothing.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_teach.exercises.answers import CheckTimedOut
from mcp_teach.exercises.check import EXERCISE_ID, Checker, ExerciseFailed, ExerciseNotAttempted

#: Set while a notebook is being graded (nbgrader's own name for it, also set by ``mcp-teach grade``).
GRADING_VARIABLE = "NBGRADER_EXECUTION"


@dataclass(frozen=True)
class Expectations:
    """One exercise: the names its answer defines and the function that checks them."""

    id: str
    answers: tuple[str, ...]
    function: Callable[..., None]


_CATALOGUE: dict[str, Expectations] = {}


def exercise(exercise_id: str, *, answers: tuple[str, ...]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register the decorated function as the check of ``exercise_id``; it gets a Checker and the answers."""
    if not EXERCISE_ID.match(exercise_id):
        raise ValueError(f"exercise ids look like '01.3' (lesson.number), not {exercise_id!r}")

    def register(function: Callable[..., None]) -> Callable[..., None]:
        _CATALOGUE[exercise_id] = Expectations(exercise_id, answers, function)
        return function

    return register


def expectations(exercise_id: str) -> Expectations:
    """The registered expectations of ``exercise_id`` (imports the lesson's module ``lNN`` on first use)."""
    if not EXERCISE_ID.match(exercise_id):
        raise ValueError(f"exercise ids look like '01.3' (lesson.number), not {exercise_id!r}")
    if exercise_id not in _CATALOGUE:
        try:
            importlib.import_module(f"mcp_teach.exercises.l{exercise_id[:2]}")
        except ModuleNotFoundError:
            raise ValueError(f"there is no lesson {exercise_id[:2]} with exercises") from None
    if exercise_id not in _CATALOGUE:
        raise ValueError(f"lesson {exercise_id[:2]} has no exercise {exercise_id}")
    return _CATALOGUE[exercise_id]


def check(exercise_id: str, namespace: Mapping[str, Any] | None = None) -> None:
    """Check exercise ``exercise_id`` against the answers in ``namespace`` (default: the caller's globals).

    Prints ``✔ Exercise NN.k passed``, or raises ``ExerciseFailed`` with expected / found / hint.
    """
    if namespace is None:
        caller = inspect.currentframe().f_back  # type: ignore[union-attr]
        namespace = caller.f_globals  # type: ignore[union-attr]
    found = expectations(exercise_id)
    missing = [name for name in found.answers if name not in namespace]
    if missing:
        names = ", ".join(f"`{name}`" for name in missing)
        message = (
            f"Exercise {exercise_id} — not attempted yet: write your answer in the cell above so that it "
            f"defines {names}, run that cell, then run this one again."
        )
        if os.environ.get(GRADING_VARIABLE):
            raise ExerciseNotAttempted(message)
        print(message)
        return
    checker = Checker(exercise_id)
    try:
        found.function(checker, *(namespace[name] for name in found.answers))
    except ExerciseFailed as failed:
        feedback = failed
    except CheckTimedOut as late:  # run_sync gave up on the student's code
        feedback = checker.failure(
            "running your answer",
            f"it to finish within {late.seconds:g} s",
            "it was still waiting",
            "an await in your code that never returns, or a loop that never stops (retry at most once)",
        )
    else:
        checker.done()
        return
    # Raised again here, outside any ``except``: an error a check met on the way (an ExceptionGroup from a client,
    # say) would otherwise be its context, and IPython prints the whole chain instead of the feedback alone.
    raise ExerciseFailed(str(feedback), feedback.lines)
