"""Helpers that exist for one lesson each, named after it (``l08_double_import`` serves lesson 08), the
notebook ``setup`` and the lessons' ``scratch`` folders.

``setup`` is the first cell of every lesson (:func:`~mcp_teach.lessons.setup.setup_notebook`).
A lesson module may import any layer below it; a helper two lessons need belongs lower down.
"""
