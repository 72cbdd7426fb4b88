"""Each command's help names the default it really uses (a student reads ``--help`` before the code)."""

from __future__ import annotations

import argparse

import pytest

from mcp_teach import cli, serve


def _help(capsys, main, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines: compare words


def test_the_capstone_commands_help_names_the_capstone_as_its_default(capsys, monkeypatch):
    assert "which course server to run (default: capstone;" in _help(capsys, serve.capstone_main, ["--help"])
    seen = []
    monkeypatch.setattr(serve, "run_reporting_errors", lambda command, args: seen.append(args.server) or 0)
    serve.capstone_main([])
    assert seen == ["capstone"]  # what the help says is what it runs


def test_serve_still_defaults_to_the_calculator(capsys):
    assert "which course server to run (default: calculator;" in _help(capsys, serve.main, ["--help"])
    parser = argparse.ArgumentParser()
    serve.add_serve_arguments(parser)
    assert parser.parse_args([]).server == "calculator"


def test_conformance_help_says_it_judges_the_calculator_by_default(capsys):
    text = _help(capsys, cli.main, ["conformance", "--help"])
    assert "which course server to judge (default: calculator;" in text
