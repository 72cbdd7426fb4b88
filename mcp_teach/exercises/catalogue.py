"""Every exercise's expectations, kept in the package so that a check cell is one line: ``check("04.3")``.

A lesson's exercises live in ``mcp_teach/exercises/lNN.py``, one function each::

    @exercise("04.3", answers=("by_pair", "llm_received"))
    def who_talks_to_whom(check: Checker, by_pair, llm_received) -> None:
        check.equal(llm_received, 3, "llm_received", hint="...")

:func:`check` reads the answers by name from the notebook's globals (the variables a student's cell
defined), so the check cell needs no arguments and shows no expected value. An exercise whose answers
are not all defined yet, or whose function is still the blank lesson's (``# YOUR CODE HERE``, ``pass``), is
*not attempted*: in a lesson that says so and what to define, with no hint, and Run All goes on; while grading
(``NBGRADER_EXECUTION`` set, by nbgrader or ``mcp-teach grade``) it raises
:class:`~mcp_teach.exercises.check.ExerciseNotAttempted`, so the exercise scores nothing.

Whatever else a check meets is feedback, never a traceback: what the student's code raises (inside an
ExceptionGroup too), or a check raises on an answer of another kind, becomes expected / found / hint naming
the exception and the line of the student's own code it came from (:func:`~mcp_teach.exercises.check.raised`).
"""

from __future__ import annotations

import dis
import gc
import importlib
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from mcp_teach.exercises.answers import CheckTimedOut
from mcp_teach.exercises.check import EXERCISE_ID, Checker, ExerciseFailed, ExerciseNotAttempted, raised
from mcp_teach.exercises.convention import PLACEHOLDER
from mcp_teach.exercises.language import said

#: Set while a notebook is being graded (nbgrader's own name for it, also set by ``mcp-teach grade``).
GRADING_VARIABLE = "NBGRADER_EXECUTION"
PACKAGE = "mcp_teach.exercises"
#: What ``mcp-teach grade`` runs in place of each check cell: it takes the checking modules out of ``sys.modules``,
#: so the import runs their files again, and calls :func:`graded` of that fresh copy. Statements only (a name the
#: notebook defined is never called), and the two names it binds are removed again.
GRADED_CHECK = """# check("{id}"), run by mcp-teach grade
import sys as _graded_modules
_graded_modules = {{
    n: _graded_modules.modules.pop(n) for n in [*_graded_modules.modules] if n.startswith("mcp_teach.exercises")
}}
from mcp_teach.exercises.catalogue import graded as _graded_check
_graded_check("{id}", _graded_modules)"""
GRADED_NAMES = ("_graded_modules", "_graded_check")


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
    _check(expectations(exercise_id), namespace, grading=bool(os.environ.get(GRADING_VARIABLE)))


def graded(exercise_id: str, notebook_modules: dict[str, ModuleType]) -> None:
    """The check as ``mcp-teach grade`` runs it (:data:`GRADED_CHECK`), in this module imported afresh: no name,
    change or registration of a notebook's cell reaches it, and an unanswered exercise raises whatever the
    environment says. The expectations are the package's; only an exercise the package lacks is checked by what
    the notebook registered itself. The notebook's own modules are put back afterwards."""
    namespace = inspect.currentframe().f_back.f_globals  # type: ignore[union-attr]
    try:
        try:
            found = expectations(exercise_id)
        except ValueError:
            registered = getattr(notebook_modules.get(__name__), "_CATALOGUE", {})
            if exercise_id not in registered:
                raise
            found = registered[exercise_id]
        _check(found, namespace, grading=True)
    finally:
        for name in GRADED_NAMES:
            namespace.pop(name, None)
        for name in [name for name in sys.modules if name.startswith(PACKAGE)]:
            del sys.modules[name]
        sys.modules.update(notebook_modules)
        if PACKAGE in notebook_modules:
            sys.modules["mcp_teach"].exercises = notebook_modules[PACKAGE]  # type: ignore[attr-defined]


def _check(found: Expectations, namespace: Mapping[str, Any], *, grading: bool) -> None:
    exercise_id = found.id
    missing = [name for name in found.answers if name not in namespace]
    blank = [name for name in found.answers if is_placeholder(namespace.get(name))]
    if missing or blank:
        what = f"defines {_names(missing)}" if missing else f"fills in the body of {_names(blank)}"
        return _not_attempted(exercise_id, what, grading)
    checker = Checker(exercise_id)
    answers = [namespace[name] for name in found.answers]
    # A coroutine the check never awaited (an async def where a plain one is asked for) warns with the check's file:
    # freed here, under the filter. The young generations hold what the check made; the whole heap (slow in a big
    # process) only needs a look when an answer is an async function.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
        feedback = _feedback(checker, found, answers)
        gc.collect(2 if any(_is_async_function(answer) for answer in answers) else 1)
    if feedback is NotImplemented:  # an nbgrader-style stub, still in place
        return _not_attempted(exercise_id, "no longer raises NotImplementedError", grading)
    if feedback is None:
        checker.done()
        return
    # Raised here, outside any ``except``: an error a check met on the way (an ExceptionGroup from a client, say)
    # would otherwise be its context, and IPython prints the whole chain instead of the feedback alone.
    raise ExerciseFailed(*feedback)


def _is_async_function(answer: Any) -> bool:
    """An ``async def`` (or a method of one); asks nothing of an object of another kind, whose every use may raise."""
    return (inspect.isfunction(answer) or inspect.ismethod(answer)) and inspect.iscoroutinefunction(answer)


def _names(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _not_attempted(exercise_id: str, what: str, grading: bool) -> None:
    """Say the exercise is not attempted yet (no hint: it would hold the answer); while grading, raise it."""
    message = said(
        "Exercise {id} — not attempted yet: write your answer in the cell above so that it {what}, "
        "run that cell, then run this one again.",
        id=exercise_id,
        what=said(what),
    )
    if grading:
        raise ExerciseNotAttempted(message)
    print(message)


def _feedback(checker: Checker, found: Expectations, answers: list[Any]) -> Any:
    """Run the check: None if it passed, NotImplemented for a stub, else its feedback (message, lines). Whatever the
    student's code raises on the way, or an answer of the wrong kind makes the check raise, is feedback too."""
    try:
        found.function(checker, *answers)
    except ExerciseFailed as failed:
        return str(failed), failed.lines
    except ExerciseNotAttempted:
        raise
    except NotImplementedError:
        return NotImplemented
    except CheckTimedOut as late:  # run_sync gave up on the student's code
        feedback = checker.failure(
            "running your answer",
            f"it to finish within {late.seconds:g} s",
            "it was still waiting",
            "an await in your code that never returns, or a loop that never stops (retry at most once)",
        )
    except Exception as error:  # the student's code raised, or an answer of another kind broke the check
        names = ", ".join(found.answers)
        feedback = checker.failure(f"checking your {names}", "it works as the task describes", *raised(error))
    else:
        return None
    return str(feedback), feedback.lines


#: What a blank lesson's function (a docstring and ``pass``) compiles to, an ``async def``'s start left out.
BLANK_BODY = ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


def is_placeholder(function: Any) -> bool:
    """``function`` is still a blank lesson's: it does nothing but return None, and says ``# YOUR CODE HERE``."""
    try:
        source = inspect.getsource(function) if inspect.isfunction(function) else ""
    except (OSError, TypeError):  # its source is not known: not from a lesson's cell
        return False
    skipped = ("RESUME", "NOP", "RETURN_GENERATOR", "POP_TOP")
    body = [(i.opname, i.argval) for i in dis.get_instructions(function) if i.opname not in skipped] if source else []
    return PLACEHOLDER[0] in source and body in BLANK_BODY
