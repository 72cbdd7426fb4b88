"""Exercises that check themselves, blank lessons and student copies made from the solved ones, and grading.

``catalogue`` (``check("04.3")``, the one line of a check cell) with one module of expectations per
lesson (``l00`` … ``l08``) built on ``check`` (:class:`Checker`: expected / found / hint);
``convention`` (how exercise cells are marked, nbgrader's metadata included), ``student_copy``
(blank exercises), ``grading`` and ``kernel`` (run a notebook in a fresh kernel).
May import every layer below it, lessons included.
"""

from mcp_teach.exercises.catalogue import check, exercise
from mcp_teach.exercises.check import Checker, ExerciseFailed, ExerciseNotAttempted

__all__ = ["Checker", "ExerciseFailed", "ExerciseNotAttempted", "check", "exercise"]
