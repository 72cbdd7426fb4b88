"""Helpers that exist for one lesson each, named after it (``l05_diff`` serves lesson 05), and ``setup``.

``setup`` is the first cell of every lesson (:func:`~mcp_teach.lessons.setup.setup_notebook`).
A lesson module may import any layer below it; a helper two lessons need belongs lower down.
"""
