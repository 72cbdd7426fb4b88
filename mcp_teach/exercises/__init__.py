"""Exercises that check themselves, student copies made from the lessons, and batch grading."""

from mcp_teach.exercises.check import Checker, ExerciseFailed, checker

__all__ = ["Checker", "ExerciseFailed", "checker"]
