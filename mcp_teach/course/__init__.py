"""The course's own tooling, for students and instructors: the course folder ``mcp-teach lessons`` copies, the blank
lessons built from the solved ones, the nbgrader course, the terminal demo and chat, and the conformance runner.

The tools import from every layer below them; the conformance runner alone sits lower, beside ``client``, because
lesson 13's checks run it (``tests/test_layers.py``).
"""
