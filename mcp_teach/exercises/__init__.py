"""Exercises that check themselves, student copies made from the lessons, and batch grading.

``check`` (the checker a check cell calls), ``convention`` (how exercise cells are marked),
``student_copy``, ``grading`` and ``kernel`` (run a notebook in a fresh kernel).
May import every layer up to display.
"""

from mcp_teach.exercises.check import Checker, ExerciseFailed, checker

__all__ = ["Checker", "ExerciseFailed", "checker"]
