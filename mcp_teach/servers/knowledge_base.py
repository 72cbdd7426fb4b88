"""The knowledge base behind the knowledge server: the course's documents and a keyword search over them.

Pure functions, no MCP: the documents are Markdown files shipped in ``knowledge_docs/`` (one per id, the
first line ``# Title``), and the ranking is simple enough to check by hand, so a lesson can explain every score.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources

#: The folder of the package that holds the documents and the image.
DOCS_PACKAGE = "mcp_teach.servers"
DOCS_FOLDER = "knowledge_docs"
#: The binary file served as a ``blob`` resource.
IMAGE_FILE = "connection.png"
#: A word of the query found in a title counts this many times as one found in the body.
TITLE_WEIGHT = 3
#: ``search_documents`` refuses a ``top_k`` outside this range (refused, not clamped: the caller learns the limit).
TOP_K_RANGE = (1, 20)
#: How important each document is for a model's context (resource ``annotations.priority``); others get 0.5.
PRIORITIES = {"mcp-overview": 1.0}

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Document:
    """One page of the knowledge base: ``doc_id`` is its file name without ``.md``."""

    doc_id: str
    title: str
    text: str

    @property
    def size(self) -> int:
        """Bytes of the UTF-8 text: what ``resources/list`` reports as ``size``."""
        return len(self.text.encode())

    @property
    def priority(self) -> float:
        return PRIORITIES.get(self.doc_id, 0.5)


@dataclass(frozen=True)
class SearchHit:
    """One ranked document, with the counts its score is made of: ``score = 3 * title_matches + body_matches``."""

    doc_id: str
    title: str
    score: int
    title_matches: int
    body_matches: int


def words(text: str) -> list[str]:
    """Lower-case words of letters and digits: ``"Streamable-HTTP!"`` gives ``["streamable", "http"]``."""
    return _WORD.findall(text.lower())


@functools.cache
def load_documents() -> dict[str, Document]:
    """Every document by id, sorted by id; read once per process from the package."""
    folder = resources.files(DOCS_PACKAGE) / DOCS_FOLDER
    documents = {}
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.name.endswith(".md"):
            text = entry.read_text(encoding="utf-8")
            title = text.splitlines()[0].removeprefix("# ").strip()
            doc_id = entry.name.removesuffix(".md")
            documents[doc_id] = Document(doc_id, title, text)
    return documents


@functools.cache
def load_image() -> bytes:
    """The PNG shipped with the package (16x16: host, client and server joined by a line)."""
    return (resources.files(DOCS_PACKAGE) / DOCS_FOLDER / IMAGE_FILE).read_bytes()


def search(query: str, top_k: int = 5) -> list[SearchHit]:
    """The ``top_k`` documents that contain a word of ``query``, best first, ties broken by id.

    Each distinct query word adds ``TITLE_WEIGHT`` per occurrence in the title and one per occurrence in the
    text (the title line excluded). Documents that contain none of the words are left out.
    """
    low, high = TOP_K_RANGE
    if not low <= top_k <= high:
        raise ValueError(f"top_k must be between {low} and {high}, got {top_k}. Ask for {low} to {high} results.")
    terms = set(words(query))
    if not terms:
        raise ValueError(f"The query {query!r} has no words to search for: give one or more words, e.g. 'transport'.")
    hits = []
    for document in load_documents().values():
        in_title = sum(word in terms for word in words(document.title))
        in_body = sum(word in terms for word in words(document.text.split("\n", 1)[-1]))
        if score := TITLE_WEIGHT * in_title + in_body:
            hits.append(SearchHit(document.doc_id, document.title, score, in_title, in_body))
    hits.sort(key=lambda hit: (-hit.score, hit.doc_id))
    return hits[:top_k]


def json_text(value: object) -> str:
    """Indented JSON, the text of ``docs://index``: stable, and readable when a lesson prints it."""
    return json.dumps(value, indent=2)
