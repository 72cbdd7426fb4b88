"""How captures and traces look in a notebook (HTML) and anywhere else (plain text).

``show`` (numbered, paired, foldable messages; tables), ``diagram`` (sequence
diagrams with matplotlib), ``explorer`` (an ipywidgets stepper), ``glossary``
(what each method and error code means). May import every layer below it, up to ``llm``.
"""
