"""The Chinese edition kept in step with the English lessons: what may differ, what is behind, what to re-translate.

A translated lesson has the English lesson's cells, in the same order and with the same ids. What may differ:

- a markdown cell: its text, which records the hash of the English cell it was translated from;
- a code cell: comments and natural-language strings (a translated string holds Chinese; the placeholders of an
  f-string or a format string stay the same), and the lesson's language given to ``setup_notebook``. A code cell
  that differs records the hash of its English cell too.

A cell is *behind* when its English cell changed after it was translated. ``status`` lists those; ``export``
writes them (and cells with no translation yet) to a text file a translator edits; ``import`` puts the text back and
records the hashes. The idea is the MCP Python SDK's ``i18n/`` (per-section hashes, an offline status command). A
tool for the repository (it works on ``notebooks/``), so it lives here and not in the package students install::

    python docs/zh/translations.py status
    python docs/zh/translations.py export --file todo.txt [notebooks/solutions/NN_x.ipynb ...]
    python docs/zh/translations.py import --file todo.txt
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import string
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

#: How a lesson asks for its language: the one code difference that is not a comment or a string.
SETUP_CALL = re.compile(r"setup_notebook\(language=\"(\w+)\"\)")
#: A translated string holds at least one Chinese character or punctuation mark.
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
FORMAT = string.Formatter()
#: ``%%% lesson cell ID KIND HASH``: a cell to translate, and the hash of the English text written under it.
BLOCK = re.compile(r"^%%% (\S+) cell (\S+) (?:markdown|code)(?: ([0-9a-f]{16}))?\n", re.MULTILINE)


def cell_hash(source: str) -> str:
    """What a translated cell records of the English cell it reflects."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def twin(english: Path, language: str) -> Path:
    """``notebooks/solutions/03_x.ipynb`` → ``notebooks/zh/solutions/03_x.ipynb`` (and the same for blank ones)."""
    solved = english.parent.name == "solutions"
    root = english.parent.parent if solved else english.parent
    return root / language / "solutions" / english.name if solved else root / language / english.name


class _Strings(ast.NodeTransformer):
    """Takes a cell's strings out of its syntax tree: what is left is the code, which must be the English code."""

    def __init__(self) -> None:
        self.found: list[tuple[str, list[str]]] = []  # (text, placeholders) in the order of the code

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.Constant:
        """An f-string: its text, and its expressions in any order (a translation may reorder them)."""
        fields = sorted(ast.dump(value) for value in node.values if isinstance(value, ast.FormattedValue))
        self.found.append(("".join(v.value for v in node.values if isinstance(v, ast.Constant)), fields))
        return ast.Constant("")

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if not isinstance(node.value, str):
            return node
        try:
            fields = sorted(
                f"{name}!{conversion}:{spec}" for _, name, spec, conversion in FORMAT.parse(node.value) if name
            )
        except ValueError:  # braces that are no format fields: a plain sentence
            fields = []
        self.found.append((node.value, fields))
        return ast.Constant("")


def _code(source: str) -> tuple[list[ast.stmt], list[tuple[str, list[str]]]]:
    """A cell's statements with every string emptied, and the strings (magics such as %pip become Python calls)."""
    strings = _Strings()
    tree = strings.visit(ast.parse(TransformerManager().transform_cell(source)))
    return tree.body, strings.found


def code_differences(english: str, translated: str) -> list[str]:
    """What differs between two code cells beyond comments, layout, translated strings and the lesson's language."""
    try:
        (ours, our_strings), (theirs, their_strings) = (
            _code(english),
            _code(SETUP_CALL.sub("setup_notebook()", translated)),
        )
    except SyntaxError as error:
        return [f"the translation is no valid Python: {error.msg} (line {error.lineno})"]
    for mine, other in zip([*ours, None], [*theirs, None], strict=False):
        if (mine and ast.dump(mine)) != (other and ast.dump(other)):
            where = f"line {other.lineno}" if other else "its end"
            return [f"the code at {where} is not the English code: only comments and strings may be translated"]
    found = []
    for (word, fields), (other, other_fields) in zip(our_strings, their_strings, strict=True):
        if word == other:
            continue
        if not CHINESE.search(other):
            found.append(f"the string {other[:60]!r} differs from the English {word[:60]!r} and is not Chinese")
        elif fields != other_fields:
            found.append(f"the string {other[:60]!r} has other placeholders than the English {word[:60]!r}")
    return found


@dataclass
class Finding:
    """One cell of a translated lesson that is not in step with its English cell."""

    lesson: str
    cell: str
    problem: str

    def __str__(self) -> str:
        return f"{self.lesson} cell {self.cell}: {self.problem}"


def findings(english_path: Path, language: str) -> list[Finding]:
    """Every cell of ``english_path``'s translation that is missing, behind, or differs where it must not."""
    path = twin(english_path, language)
    name = path.relative_to(path.parents[2] if path.parent.name == "solutions" else path.parents[1]).as_posix()
    english = nbformat.read(english_path, as_version=4).cells
    if not path.is_file():
        return [Finding(name, cell.id, "no translation yet") for cell in english]
    translated = {cell.id: cell for cell in nbformat.read(path, as_version=4).cells}
    ids = [cell.id for cell in english]
    found = [Finding(name, id, "no longer in the English lesson") for id in translated.keys() - set(ids)]
    if [id for id in ids if id in translated] != [id for id in translated if id in ids]:
        found.append(Finding(name, "-", "its cells are in another order than the English ones"))
    for cell in english:
        ours = translated.get(cell.id)
        recorded = ours.metadata.get("translation", {}).get("source") if ours else None
        if ours is None:
            found.append(Finding(name, cell.id, "new in the English lesson: not translated yet"))
        elif ours.cell_type != cell.cell_type:
            found.append(Finding(name, cell.id, f"a {ours.cell_type} cell where the English one is {cell.cell_type}"))
        elif cell.cell_type == "code" and ours.source != cell.source:
            found += [Finding(name, cell.id, problem) for problem in code_differences(cell.source, ours.source)]
            if recorded is None:
                found.append(Finding(name, cell.id, "differs from its English cell but records no translation"))
            elif recorded != cell_hash(cell.source):
                found.append(Finding(name, cell.id, "behind: its English cell changed since it was translated"))
        elif cell.cell_type == "markdown" and recorded != cell_hash(cell.source):
            problem = "not translated yet" if recorded is None else "behind: its English cell changed"
            found.append(Finding(name, cell.id, problem))
    return found


def export(english_path: Path, language: str) -> str:
    """The cells of ``english_path`` a translator has to (re-)translate, as a text file to edit.

    A block starts with a ``%%% lesson cell ID kind hash`` line; the text under it is the English cell (a markdown cell,
    or a code cell with comments or strings), to be replaced by its translation. Cells in step are left out, and so
    are new code cells with nothing to translate (import copies them).
    """
    pending = {finding.cell for finding in findings(english_path, language)}
    blocks = []
    for cell in nbformat.read(english_path, as_version=4).cells:
        readable = cell.cell_type == "markdown" or "#" in cell.source or re.search(r"[\"'][^\"'\n]* \w", cell.source)
        if cell.id in pending and readable:
            blocks.append(
                f"%%% {english_path.name} cell {cell.id} {cell.cell_type} {cell_hash(cell.source)}\n{cell.source}\n"
            )
    return "".join(blocks)


def import_text(english_path: Path, language: str, text: str) -> list[Finding]:
    """Write the translated blocks of ``text`` into the translation of ``english_path`` (created from the English
    lesson when missing, rebuilt in the English cells' order), recording each English cell's hash."""
    path = twin(english_path, language)
    english = nbformat.read(english_path, as_version=4)
    old = {cell.id: cell for cell in nbformat.read(path, as_version=4).cells} if path.is_file() else {}
    parts = BLOCK.split(text)  # text before the first block, then (lesson, id, hash, translation) for each
    edited = {
        parts[index + 1]: (parts[index + 2], parts[index + 3].removesuffix("\n"))
        for index in range(1, len(parts), 4)
        if parts[index] == english_path.name
    }
    cells = []
    for cell in english.cells:
        ours = old.get(cell.id, cell) if old.get(cell.id, cell).cell_type == cell.cell_type else cell
        ours = nbformat.from_dict({**ours, "metadata": dict(ours.metadata)})
        if cell.cell_type == "code" and cell.id not in edited and ours.source == cell.source:
            ours = cell  # in step: the English cell itself, outputs included
        if cell.id in edited:  # the hash of the English text translated: the cell is behind if it changed since
            translated_from, ours.source = edited[cell.id]
            ours.metadata["translation"] = {"source": translated_from or cell_hash(cell.source)}
        if cell.cell_type == "code" and ours.source == cell.source:
            ours.metadata.pop("translation", None)
        cells.append(ours)
    english.cells = cells
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(english, path)
    return findings(english_path, language)


def main(argv: list[str] | None = None) -> int:
    """``status``: the cells of a translation that are missing or behind; ``export``/``import``: only those, as text."""
    from mcp_teach.course.authoring import SOLUTIONS, course_notebooks

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("status", "export", "import"))
    parser.add_argument("lessons", nargs="*", type=Path, help="solved English lessons (default: all)")
    parser.add_argument("--lang", choices=("zh",), default="zh")
    parser.add_argument("--file", type=Path, help="the text to translate (export writes it, import reads it)")
    args = parser.parse_args(argv)
    lessons = args.lessons or course_notebooks(SOLUTIONS)
    if args.action != "status" and args.file is None:
        parser.error(f"{args.action} needs the text file: --file todo.txt")
    if args.action == "export":
        args.file.write_text("".join(export(lesson, args.lang) for lesson in lessons), encoding="utf-8")
        print(f"wrote {args.file}: translate the text under each %%% line, then run import")
        return 0
    text = args.file.read_text(encoding="utf-8") if args.action == "import" else ""
    found = [
        str(f)
        for lesson in lessons
        for f in (import_text(lesson, args.lang, text) if text else findings(lesson, args.lang))
    ]
    print("\n".join(found) or f"the {args.lang} edition is in step with the English lessons")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
