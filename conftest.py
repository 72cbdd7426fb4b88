"""Loaded for every test run, the lessons' too: the nbval run also checks that no lesson leaves anything behind."""

pytest_plugins = ["tests.nbval_leftovers"]
