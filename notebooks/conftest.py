"""``pytest`` in this folder runs the lessons as the course's own tests do: each cell again, its output compared with
the stored one (nbval), with what differs from run to run (ports, session ids, versions, temporary paths) replaced
first by the rules in ``nbval_sanitize.cfg`` beside this file. ``pytest 03_tools_call.ipynb`` runs one lesson."""

from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.option.nbval = config.option.nbval or not config.option.nbval_lax
    config.option.nbval_current_env = True
    if config.option.nbval_sanitize_with is None:
        config.option.nbval_sanitize_with = str(Path(__file__).with_name("nbval_sanitize.cfg"))
