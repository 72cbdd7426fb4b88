"""One way for every display object to show as plain text (GitHub, terminals, nbval's text/plain)."""

from __future__ import annotations

from typing import Any


class PlainText:
    """Mixin: ``repr()`` and IPython's text/plain are ``self.text()``; HTML, if any, comes from ``_repr_html_``.

    Dataclasses that use it must pass ``repr=False``, or the generated ``__repr__`` wins.
    """

    def text(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())
