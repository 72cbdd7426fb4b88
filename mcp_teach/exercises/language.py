"""The checks' sentences in the lesson's language (``setup_notebook(language="zh")``); English costs nothing.

The translations are a gettext catalog per language, ``mcp_teach/locale/<language>/LC_MESSAGES/checks.po``, kept in
step with the checks by Babel (docs/zh/checks-catalog.md). The .po is read as it is, with Babel's ``read_po``, once
per kernel and only when a check first speaks that language: no compiled .mo to rebuild and commit beside it (one
file, the one translators and reviewers edit, cannot drift from what runs), and a catalog of about a thousand
messages reads in a fraction of a second, once.

A message with ``{placeholders}`` (an f-string of a check) translates any text it matches: what stood in each
placeholder is carried into the translation, translated too when it is a message of its own. ``say(...)`` prints
one message so: a summary of several lines or values is translated whole.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

from babel.messages.pofile import read_po

from mcp_teach.config import lesson_language

PLACEHOLDER = re.compile(r"\{[^{}]*\}")
#: A catalog: its messages without placeholders, then those with (most literal text first), as patterns.
Catalog = tuple[dict[str, str], list[tuple[re.Pattern[str], list[str], str]]]


def said(text: str, **values: str) -> str:
    """``text`` in the lesson's language; with ``values``, ``text`` is a sentence whose ``{name}``s they fill in."""
    if (language := lesson_language()) != "en":
        catalog = _catalog(language)
        text = catalog[0].get(text, text) if values else _translated(text, catalog)
    return text.format(**values) if values else text


def say(*values: object, sep: str = " ") -> None:
    """``print`` in the lesson's language, for what a check shows once it passed; an English lesson's output is
    ``print``'s, byte for byte (nbval compares the stored outputs)."""
    print(said(sep.join(map(str, values))))


def _translated(text: str, catalog: Catalog) -> str:
    exact, patterns = catalog
    if text in exact:
        return exact[text]
    for pattern, names, translation in patterns:
        if match := pattern.fullmatch(text):
            values = dict(zip(names, (_translated(value, catalog) for value in match.groups()), strict=True))
            return PLACEHOLDER.sub(lambda found, values=values: values.get(found[0], found[0]), translation)
    return text


@cache
def _catalog(language: str) -> Catalog:
    with files("mcp_teach").joinpath(f"locale/{language}/LC_MESSAGES/checks.po").open("rb") as po:
        messages = [message for message in read_po(po) if message.id and message.string and not message.fuzzy]
    patterns = [
        (re.compile("(.*?)".join(map(re.escape, PLACEHOLDER.split(m.id))), re.S), PLACEHOLDER.findall(m.id), m.string)
        for m in sorted(messages, key=lambda m: -len(PLACEHOLDER.sub("", m.id)))
        if PLACEHOLDER.search(m.id)
    ]
    return {message.id: message.string for message in messages}, patterns
