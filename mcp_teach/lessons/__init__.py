"""Helpers that exist for one lesson each, named after it (``l08_double_import`` serves lesson 08), and the lessons'
``scratch`` folders.

A lesson module may import any layer below it; a helper two lessons need belongs lower down.
"""
