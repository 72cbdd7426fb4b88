"""How captures and traces look in a notebook (HTML) and anywhere else (plain text).

``show`` (numbered, paired, foldable messages; tables), ``diagram`` (sequence
diagrams with matplotlib), ``explorer`` (an ipywidgets stepper), ``glossary``
(what each method and error code means), ``json_diff`` (captures compared field by field), ``http_views`` (the HTTP
requests under a capture), ``console`` (a command run as in a terminal, its output shown in the notebook).
May import every layer below it, up to ``llm``.
"""
