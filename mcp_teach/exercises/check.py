"""The checks an exercise's expectations use: specific feedback, not a bare ``AssertionError``.

::

    check = Checker("01.3")
    check.equal(requests, 2, "the number of requests", hint="a request has an 'id' and a 'method'")
    check.done()   # prints: ✔ Exercise 01.3 passed

A lesson's check cell does not call this directly: it is one line, ``check("01.3")``
(:mod:`mcp_teach.exercises.catalogue`), and the expectations live in ``mcp_teach/exercises/lNN.py``.

A failed expectation raises :class:`ExerciseFailed` whose message says what was
expected, what was found and a hint, e.g.
``Exercise 01.3 — the number of requests: expected 2, found 3. Hint: ...``, in the lesson's language
(:mod:`mcp_teach.exercises.language`: a Chinese lesson's checks answer in Chinese).
"""

from __future__ import annotations

import inspect
import re
import sys
import traceback
from collections.abc import Callable, Container
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from mcp_teach.exercises.language import said

#: Printed by :meth:`Checker.done`.
PASSED = "✔ Exercise {id} passed"
#: A failed check's feedback: the one-line message (the error's text), then the lines a lesson shows.
FEEDBACK = (
    "Exercise {id} — {what}: expected {expected}, found {found}. Hint: {hint}",
    "Exercise {id} — {what}",
    "  expected: {expected}",
    "  found:    {found}",
    "  hint:     {hint}",
)
EXERCISE_ID = re.compile(r"^\d{2}\.\d+$")
T = TypeVar("T")
#: Colours and cursor moves (pytest's, a library's): a notebook shows them as raw codes.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: Where the course's and the libraries' frames live: the student's frames are all the others.
NOT_YOURS = (str(Path(__file__).resolve().parents[1]), sys.prefix, sys.base_prefix, "<frozen")


class _FeedbackOnly(AssertionError):
    """An error that Jupyter shows as its message alone: a student needs the feedback, not the checker's frames.

    IPython calls ``_render_traceback_`` instead of formatting a traceback; nbclient and nbgrader still see an
    error, so grading scores the exercise as failed.
    """

    lines: tuple[str, ...] = ()

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[1;31m✘ {self.lines[0]}\x1b[0m", *self.lines[1:]] if self.lines else [str(self)]


class ExerciseFailed(_FeedbackOnly):
    """An exercise's check found something other than what the exercise asks for."""

    def __init__(self, message: str, lines: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.lines = lines


class ExerciseNotAttempted(_FeedbackOnly):
    """While grading: the exercise's answers are not defined (the solution cell was left blank)."""


def _shown(value: Any, limit: int = 200) -> str:
    return _cut(repr(value), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def described(error: BaseException) -> str:
    """``ValueError: bad value``: an exception as the feedback shows it."""
    return f"{type(error).__name__}: {error}"


def raised(error: BaseException) -> tuple[str, str]:
    """What the feedback says of an exception the student's code raised (the first inside an ExceptionGroup): found
    (its type, message and the line of the student's own code it came from, never the check's) and a hint."""
    frames = traceback.extract_tb(error.__traceback__)
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
        frames += traceback.extract_tb(error.__traceback__)
    found = _cut(" ".join(described(error).split()), 300)
    yours = [frame for frame in frames if not frame.filename.startswith(NOT_YOURS)]
    if not yours:
        return f"it raised {found}", "the check used your answer as the task describes it: is it of the kind asked for?"
    at = yours[-1]
    line = f"it raised {found} in {at.name}, line {at.lineno}" + (f": {at.line}" if at.line else "")
    return line, "fix that line of your code, run it again"


class Checker:
    """The checks of one exercise; every method raises :class:`ExerciseFailed` with feedback."""

    def __init__(self, exercise_id: str) -> None:
        if not EXERCISE_ID.match(exercise_id):
            raise ValueError(f"exercise ids look like '01.3' (lesson.number), not {exercise_id!r}")
        self.exercise_id = exercise_id

    def failure(self, what: str, expected: str, found: str, hint: str | None = None) -> ExerciseFailed:
        """The standard feedback message, as the error that carries it."""
        what, expected, found, hint = (said(ANSI.sub("", text or "")) for text in (what, expected, found, hint))
        hint = hint or said("the task above says what {what} should be", what=what)
        texts = {"id": self.exercise_id, "what": what, "expected": expected, "found": found, "hint": hint}
        message, *lines = (said(line, **texts) for line in FEEDBACK)
        return ExerciseFailed(message, tuple(lines))

    def fail(self, what: str, expected: str, found: str, hint: str | None = None) -> NoReturn:
        """Stop with the standard feedback message."""
        raise self.failure(what, expected, found, hint)

    def equal(self, found: Any, expected: Any, what: str, *, hint: str | None = None) -> None:
        """``found == expected``."""
        if found != expected:
            self.fail(what, _shown(expected), _shown(found), hint)

    def true(self, condition: bool, what: str, *, expected: str, found: Any = None, hint: str | None = None) -> None:
        """``condition`` holds; ``expected`` says in words what should be true."""
        if not condition:
            self.fail(what, expected, "something else" if found is None else _shown(found), hint)

    def function(self, value: Any, what: str, *, expected: str = "a function", hint: str | None = None) -> None:
        """``value`` can be called: the answer is a function (or another callable) the check will run."""
        self.true(callable(value), what, expected=expected, found=value, hint=hint)

    def async_function(self, value: Any, what: str, *, expected: str, hint: str | None = None) -> None:
        """``value`` is an ``async def``: a plain function would fail later, where the check awaits it."""
        self.true(inspect.iscoroutinefunction(value), what, expected=expected, found=value, hint=hint)

    def runs(self, function: Callable[..., T], *arguments: Any, what: str, expected: str, hint: str | None = None) -> T:
        """``function(*arguments)``, the student's code; if it raises, a failed check that shows the exception."""
        try:
            result = function(*arguments)
        except NotImplementedError:  # a stub still in place: not attempted (mcp_teach.exercises.catalogue)
            raise
        except Exception as error:  # reported as feedback
            found, where = raised(error)
            self.fail(what, expected, found, hint or where)
        if inspect.iscoroutine(result):  # an async def where a plain one is asked for: nothing in it ran
            result.close()
            self.fail(what, expected, "a coroutine (an async def's)", hint or "make it a plain def: it is not awaited")
        return result

    def contains(self, container: Container[Any], item: Any, what: str, *, hint: str | None = None) -> None:
        """``item in container``."""
        if item not in container:
            self.fail(what, f"it to contain {_shown(item)}", _shown(container), hint)

    def instance(self, value: Any, kind: type | tuple[type, ...], what: str, *, hint: str | None = None) -> None:
        """``isinstance(value, kind)``."""
        if not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            self.fail(what, f"a {names}", f"{type(value).__name__} {_shown(value)}", hint)

    def raises(
        self, call: Callable[[], Any], error: type[BaseException], what: str, *, hint: str | None = None
    ) -> None:
        """``call()`` raises ``error``."""
        try:
            call()
        except error:
            return
        except Exception as other:  # reported as feedback
            self.fail(what, f"{error.__name__} to be raised", described(other), hint)
        self.fail(what, f"{error.__name__} to be raised", "no exception", hint)

    def done(self) -> None:
        """Print the line that says the exercise passed (the grader reads it)."""
        print(said(PASSED, id=self.exercise_id))
