"""Lesson 06's sentences agree with its stored run: every figure the prose states that the run produces.

The latency lab states no measured number in its prose: where a sentence speaks of a measured figure, it says an
order of magnitude (``under a tenth of a millisecond``, ``tens of milliseconds``, ``ten times or more``) or an order
(``in-memory is the fastest``), and the exact numbers are what the cells print. This test reads the stored outputs
of ``notebooks/solutions/06_latency_lab.ipynb`` and holds each such sentence to them:

- every :class:`Claim` names a sentence of the lesson (verbatim, whitespace aside), the order of magnitude it states
  (a key of :data:`MAGNITUDES`, inside the sentence) and the stored figures it speaks of; each figure must fall in
  that magnitude's range. :class:`Order` and :class:`Below` hold sentences that compare figures.
- every sentence of the lesson's prose that names a duration, a ratio or a size must be one of those claims, or
  be listed in :data:`NOT_FROM_THE_RUN` with the reason it is not a figure of this run (a quoted figure, a
  parameter). A new sentence with a figure fails here until it is held to the run or listed.

So rerunning the lesson on a machine where, say, the HTTP echo takes 2.5 ms fails on "The echo takes about a
millisecond or less"; rewording a sentence fails until its claim is updated; and a new "a hundred times less" fails as
unheld. The last tests make such contradictions up and see them caught.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "solutions" / "06_latency_lab.ipynb"
INF = math.inf

#: Orders of magnitude the prose may state, each the half-open range ``[low, high)`` it claims, in ms for a
#: duration (a µs column is converted), as a plain number for a ratio, a size in bytes or a count.
MAGNITUDES: dict[str, tuple[float, float]] = {
    "a fraction of a microsecond": (0, 0.001),
    "a few microseconds to tens": (0.001, 0.1),
    "tens of microseconds": (0.01, 0.1),
    "tens to hundreds of microseconds": (0.01, 1),
    "under a tenth of a millisecond": (0, 0.1),
    "about a millisecond or less": (0, 2),
    "a few milliseconds or less": (0, 10),
    "a few milliseconds": (1, 10),
    "tens of milliseconds": (10, 100),
    "hundreds of milliseconds or more": (100, INF),
    "ten times or more": (10, INF),
    "ten times the pipe or more": (10, INF),
    "hundreds of calls": (100, 1000),
    "a few hundred bytes": (100, 1000),
    "thousands of": (1000, 10_000),
}


@dataclass(frozen=True)
class Figure:
    """One number of the stored run: in the output of the code cell whose source contains ``cell``, the table row
    ``row`` and column ``column``, or (``column`` None) the first group of the regular expression ``row`` in its
    printed text."""

    cell: str
    row: str
    column: str | None = None


@dataclass(frozen=True)
class Ratio:
    """``top`` / ``bottom``."""

    top: Figure
    bottom: Figure


@dataclass(frozen=True)
class Claim:
    """``sentence`` states the order of magnitude ``phrase`` of each of ``figures``."""

    sentence: str
    phrase: str
    figures: tuple[Figure | Ratio, ...]


@dataclass(frozen=True)
class Order:
    """``sentence`` says each group of figures is below the next (every figure of a group below every one of the
    next)."""

    sentence: str
    groups: tuple[tuple[Figure, ...], ...]


@dataclass(frozen=True)
class Below:
    """``sentence`` says none of ``parts`` comes near ``whole``: each is below ``share`` of it."""

    sentence: str
    parts: tuple[Figure, ...]
    whole: Figure
    share: float


# The stored outputs the prose speaks of, by the code cell that prints them.
CALLS = 'print("fastest first:"'
EVERYTHING = "everything = {"
CONNECTS = "connects = {name: []"
FIRST_CALL = "first = dict(zip(steps"
PIECES = 'pieces["a worker thread runs the (sync) tool"]'
PROFILE = "cProfile.Profile()"
SIZES = "line_bytes = len("
TRANSPORTS = ("in-memory", "stdio", "sse", "streamable-http")


def call(transport: str) -> Figure:
    return Figure(CALLS, transport, "median ms")


def connect(transport: str) -> Figure:
    return Figure(CONNECTS, transport, "median ms")


def piece(name: str) -> Figure:
    return Figure(PIECES, name, "median µs")


PIPE = Figure(EVERYTHING, "pipe echo", "median ms")
HTTP_ECHO = Figure(EVERYTHING, "HTTP echo", "median ms")
EVERY_CALL = tuple(call(transport) for transport in TRANSPORTS)
STDIO_CONNECT_IN_CALLS = Ratio(connect("stdio"), call("stdio"))

CLAIMS: tuple[Claim | Order | Below, ...] = (
    # section 2
    Claim(
        "A few hundred bytes is nothing for any connection",
        "a few hundred bytes",
        (Figure(SIZES, r"#5 tools/call request: (\d+) bytes"), Figure(SIZES, r"#6 its result: (\d+) bytes")),
    ),
    Claim(
        "Adding two numbers takes a fraction of a microsecond",
        "a fraction of a microsecond",
        (piece("the tool function itself"),),
    ),
    # section 4
    Claim("Every transport takes a few milliseconds or less per call", "a few milliseconds or less", EVERY_CALL),
    Order(
        "In-memory is the fastest, stdio next, and the two HTTP transports the slowest",
        ((call("in-memory"),), (call("stdio"),), (call("sse"), call("streamable-http"))),
    ),
    # section 5
    Claim(
        "A line through a pipe and back takes under a tenth of a millisecond",
        "under a tenth of a millisecond",
        (PIPE,),
    ),
    Claim(
        "A stdio `tools/call` takes ten times or more (the first ratio above)",
        "ten times or more",
        (Figure(EVERYTHING, r"stdio call / pipe echo:\s+([\d.]+) x"), Ratio(call("stdio"), PIPE)),
    ),
    Claim("The echo takes about a millisecond or less", "about a millisecond or less", (HTTP_ECHO,)),
    Claim(
        "still takes ten times the pipe or more** (the second ratio)",
        "ten times the pipe or more",
        (Figure(EVERYTHING, r"in-memory call / pipe echo:\s+([\d.]+) x"), Ratio(call("in-memory"), PIPE)),
    ),
    # section 6
    Claim("**in-memory** connects in a few milliseconds", "a few milliseconds", (connect("in-memory"),)),
    Claim(
        "**SSE and streamable HTTP** need tens of milliseconds",
        "tens of milliseconds",
        (connect("sse"), connect("streamable-http")),
    ),
    Claim(
        "**stdio** needs hundreds of milliseconds or more",
        "hundreds of milliseconds or more",
        (connect("stdio"),),
    ),
    Claim("That is hundreds of calls' worth", "hundreds of calls", (STDIO_CONNECT_IN_CALLS,)),
    Claim(
        "The **first** `tools/call` of the process takes hundreds of milliseconds or more",
        "hundreds of milliseconds or more",
        (Figure(FIRST_CALL, "first tools/call", "ms"),),
    ),
    Claim(
        "the **second** takes a few milliseconds",
        "a few milliseconds",
        (Figure(FIRST_CALL, "second tools/call", "ms"),),
    ),
    # section 7 and the summary
    Claim("A stdio connect costs hundreds of calls", "hundreds of calls", (STDIO_CONNECT_IN_CALLS,)),
    Claim(
        "A `tools/call` takes a few milliseconds or less on one machine, over every transport",
        "a few milliseconds or less",
        EVERY_CALL,
    ),
    Claim("A pipe costs under a tenth of a millisecond", "under a tenth of a millisecond", (PIPE,)),
    Claim("a loopback HTTP request about a millisecond or less", "about a millisecond or less", (HTTP_ECHO,)),
    # going deeper
    Claim(
        "no bytes, no pipe, no HTTP, and still ten times the pipe or more",
        "ten times the pipe or more",
        (Ratio(call("in-memory"), PIPE),),
    ),
    Below(
        "No single piece comes near the whole call",
        tuple(
            piece(name)
            for name in (
                "the tool function itself",
                "json: parse + write the request line",
                "pydantic: JSON line → JSON-RPC message",
                "pydantic: JSON-RPC message → JSON line",
                "jsonschema: check the result's structuredContent",
                "asyncio: a message to another task and back",
                "a worker thread runs the (sync) tool",
            )
        ),
        call("in-memory"),
        0.5,
    ),
    Claim(
        "**The tool's work** is a fraction of a microsecond",
        "a fraction of a microsecond",
        (piece("the tool function itself"),),
    ),
    Claim(
        "**JSON, pydantic and `jsonschema`** take a few microseconds to tens per message",
        "a few microseconds to tens",
        (
            piece("json: parse + write the request line"),
            piece("pydantic: JSON line → JSON-RPC message"),
            piece("pydantic: JSON-RPC message → JSON line"),
            piece("jsonschema: check the result's structuredContent"),
        ),
    ),
    Claim(
        "**Handing a message to another task and back** costs tens of microseconds",
        "tens of microseconds",
        (piece("asyncio: a message to another task and back"),),
    ),
    Claim(
        "That hop costs tens to hundreds of microseconds there and back",
        "tens to hundreds of microseconds",
        (piece("a worker thread runs the (sync) tool"),),
    ),
    Claim(
        "**Everything else is the thousands of Python steps** counted above",
        "thousands of",
        (Figure(PROFILE, "Python function calls and coroutine steps", "count"),),
    ),
)

#: Sentences of the prose that name a duration, a ratio or a size that is not a figure of this run, and why.
NOT_FROM_THE_RUN: dict[str, str] = {
    "5–15 ms over stdio and 50–200 ms over HTTP": "the figures often quoted, not measured here",
    "the quoted 5–15 ms and 50–200 ms describe a different setup": "the figures often quoted",
    "a round trip is about a millisecond within a region and 70–150 ms to another continent": "typical networks",
    "One LLM call takes roughly 300–3000 ms": "typical LLM calls",
    "even a 50 ms tool call is a few per cent of one turn": "arithmetic on the quoted figures",
    "each labelled step is ×10": "the plot's scale",
    "Connect once, call many times": "advice",
    "Save round trips and LLM turns, not microseconds": "advice",
    "each a thousand times on its own": "REPEAT, a parameter",
    "Other programs on your machine come and go over seconds": "how a machine behaves, not a figure of the run",
    "no bytes, no JSON text": "what in-memory sends, not a size",
    "a second HTTP message per call": "an ordinal",
    "how many times asyncio's scheduler went round": "what a row of the table counts",
    "(lists of ms)": "a unit for the reader's answer (exercise 06.1)",
    "Run it a few times": "advice (exercise 06.1)",
    "a `time.monotonic()` timestamp in seconds": "a unit (exercise 06.3)",
    "1 ms = 1000 µs": "a unit",
    "how many milliseconds **more** does a call take": "a question for the reader (exercise 06.2)",
    "from the request event to its response's event (same JSON-RPC `id`), in ms": "a unit for the reader's answer",
    "from each `llm-request` event to the `llm-response` after it, in ms": "a unit for the reader's answer",
}

#: A sentence names a duration, a ratio or a size when it matches this.
FIGURE_WORDS = re.compile(
    r"\d\s*(?:ms|µs|s)\b|\b(?:milli|micro)?seconds?\b|\bms\b|µs|\btimes\b|×|\bbytes\b|\b\d+\s*x\b", re.IGNORECASE
)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
SOURCES = re.compile(r"^\*\*Sources\*\*.*", re.MULTILINE | re.DOTALL)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*`(#])|\n(?=\s*(?:[-*]|\d+\.)\s)|\n\s*\n")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def prose_sentences(notebook: dict) -> list[str]:
    """Every sentence (or list item, or table row) of the lesson's markdown, whitespace flattened."""
    sentences = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            text = SOURCES.sub("", FENCE.sub("", _text(cell["source"])))
            for line in text.splitlines():
                if line.startswith("|"):  # a table row is one statement
                    sentences.append(_flat(line))
            prose = "\n".join(line for line in text.splitlines() if not line.startswith("|"))
            sentences += [_flat(part) for part in SENTENCE_END.split(prose) if part.strip()]
    return sentences


def _outputs(notebook: dict, cell: str) -> list[str]:
    """The text outputs of the one code cell whose source contains ``cell``."""
    found = [c for c in notebook["cells"] if c["cell_type"] == "code" and cell in _text(c["source"])]
    assert len(found) == 1, f"{len(found)} code cells contain {cell!r}"
    texts = []
    for output in found[0].get("outputs", []):
        if output["output_type"] == "stream":
            texts.append(_text(output["text"]))
        elif "text/plain" in output.get("data", {}):
            texts.append(_text(output["data"]["text/plain"]))
    return texts


def _cut(line: str, spans: list[tuple[int, int | None]]) -> list[str]:
    return [line[start:end].strip() for start, end in spans]


def _table_value(text: str, row: str, column: str) -> float | None:
    """``column`` of ``row`` in a plain-text table (a header line, a line of dashes marking the columns, rows)."""
    lines = text.splitlines()
    for number, line in enumerate(lines[1:], start=1):
        if re.fullmatch(r"[- ]+", line) and "-" in line:
            spans: list[tuple[int, int | None]] = [match.span() for match in re.finditer(r"-+", line)]
            spans[-1] = (spans[-1][0], None)
            header = _cut(lines[number - 1], spans)
            if column not in header:
                return None
            for data in lines[number + 1 :]:
                cells = _cut(data, spans)
                if cells[0] == row:
                    found = float(cells[header.index(column)])
                    return found / 1000 if column.endswith("µs") else found
            return None
    return None


def value(notebook: dict, figure: Figure | Ratio) -> float:
    """The stored number ``figure`` names (ms for a duration)."""
    if isinstance(figure, Ratio):
        return value(notebook, figure.top) / value(notebook, figure.bottom)
    for text in _outputs(notebook, figure.cell):
        if figure.column is None:
            if match := re.search(figure.row, text):
                return float(match.group(1))
        elif (found := _table_value(text, figure.row, figure.column)) is not None:
            return found
    raise AssertionError(f"no stored figure {figure}")


def contradictions(notebook: dict, claims: tuple[Claim | Order | Below, ...] = CLAIMS) -> list[str]:
    """What the lesson's prose says that its stored run contradicts, or that is not held to the run at all."""
    prose = [_flat(_text(c["source"])) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    problems = []
    for claim in claims:
        if not any(claim.sentence in cell for cell in prose):
            problems.append(f"no longer in the lesson (reworded? update its claim): {claim.sentence!r}")
            continue
        if isinstance(claim, Claim):
            if claim.phrase not in claim.sentence.lower():
                problems.append(f"{claim.sentence!r} does not say {claim.phrase!r}")
                continue
            low, high = MAGNITUDES[claim.phrase]
            for figure in claim.figures:
                found = value(notebook, figure)
                if not low <= found < high:
                    problems.append(f"{claim.sentence!r}: {claim.phrase} is [{low}, {high}), the run has {found:g}")
        elif isinstance(claim, Order):
            groups = [[value(notebook, figure) for figure in group] for group in claim.groups]
            for lower, higher in itertools.pairwise(groups):
                if max(lower) >= min(higher):
                    problems.append(f"{claim.sentence!r}: the run has {groups}")
        else:
            whole = value(notebook, claim.whole)
            for part in claim.parts:
                if value(notebook, part) >= claim.share * whole:
                    problems.append(f"{claim.sentence!r}: {part.row} is {value(notebook, part):g} of {whole:g}")
    held = [claim.sentence for claim in claims] + list(NOT_FROM_THE_RUN)
    for sentence in prose_sentences(notebook):
        if FIGURE_WORDS.search(sentence) and not any(known in sentence for known in held):
            problems.append(f"a figure not held to the run (add a claim, or say why it is not the run's): {sentence!r}")
    return problems


def lesson() -> dict:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def test_every_sentence_with_a_figure_agrees_with_the_stored_run() -> None:
    assert contradictions(lesson()) == []


def test_every_listed_sentence_not_from_the_run_is_still_in_the_lesson() -> None:
    prose = " ".join(prose_sentences(lesson()))
    assert [sentence for sentence in NOT_FROM_THE_RUN if sentence not in prose] == []


def test_the_magnitudes_read_as_they_say() -> None:
    assert MAGNITUDES["under a tenth of a millisecond"] == (0, 0.1)
    assert all(low < high for low, high in MAGNITUDES.values())


def _with_prose(notebook: dict, old: str, new: str) -> dict:
    """``notebook`` with the words ``old`` (whitespace aside) written as ``new``."""
    changed = copy.deepcopy(notebook)
    pattern = re.compile(r"\s+".join(map(re.escape, old.split())))
    for cell in changed["cells"]:
        source = _text(cell["source"])
        if cell["cell_type"] == "markdown" and pattern.search(source):
            cell["source"] = pattern.sub(lambda _: new, source, count=1)
            return changed
    raise AssertionError(f"{old!r} is not in the lesson")


def _with_figure(notebook: dict, figure: Figure, new: str) -> dict:
    """``notebook`` with the stored table cell ``figure`` written as ``new``."""
    changed = copy.deepcopy(notebook)
    for cell in changed["cells"]:
        if cell["cell_type"] == "code" and figure.cell in _text(cell["source"]):
            for output in cell["outputs"]:
                data = output.get("data", {})
                if "text/plain" in data:
                    lines = _text(data["text/plain"]).splitlines()
                    for number, line in enumerate(lines):
                        if line.startswith(figure.row + "  "):
                            columns = line.split()
                            lines[number] = line.replace(f" {columns[-4]} ", f" {new} ", 1)
                    data["text/plain"] = "\n".join(lines)
            return changed
    raise AssertionError(f"no cell {figure.cell!r}")


def test_a_run_that_contradicts_a_sentence_is_caught() -> None:
    slower_echo = _with_figure(lesson(), HTTP_ECHO, "2.50")
    assert value(slower_echo, HTTP_ECHO) == 2.50
    problems = contradictions(slower_echo)
    assert any("The echo takes about a millisecond or less" in problem for problem in problems), problems
    assert any("a loopback HTTP request about a millisecond or less" in problem for problem in problems), problems


def test_a_sentence_the_run_contradicts_is_caught() -> None:
    # the lesson's old words (review 2026-12-05), which its run contradicted: 49 times the pipe, an echo of 0.8 ms
    told = _with_prose(
        lesson(),
        "A line through a pipe and back takes under a tenth of a millisecond. "
        "A stdio `tools/call` takes ten times or more (the first ratio above).",
        "A line through a pipe and back takes hundredths of a millisecond, "
        "a hundred times less than a stdio `tools/call` or more.",
    )
    told = _with_prose(told, "The echo takes about a millisecond or less.", "The echo takes about half a millisecond.")
    problems = contradictions(told)
    assert any("a hundred times less" in problem and "not held" in problem for problem in problems), problems
    assert any("about half a millisecond" in problem and "not held" in problem for problem in problems), problems
    gone = [problem for problem in problems if "no longer in the lesson" in problem]
    assert len(gone) == 3, problems  # the pipe, the ratio, the echo


def test_a_claim_held_to_the_wrong_figure_is_caught() -> None:
    # "tens of milliseconds" is true of the HTTP connects, not of the stdio one
    wrong = Claim("**SSE and streamable HTTP** need tens of milliseconds", "tens of milliseconds", (connect("stdio"),))
    problems = contradictions(lesson(), (*CLAIMS, wrong))
    assert len(problems) == 1 and "the run has" in problems[0], problems
