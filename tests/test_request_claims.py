"""A lesson's "every request carries `X`" holds for the requests the lesson shows and those the course's client sends.

The review found two lessons saying fastmcp's client puts ``_meta.progressToken`` on every request while their
own captures of ``server/discover`` and ``tools/list`` had none. This check is the cheapest honest one:

1. **Claims** are found by pattern in each solved lesson's markdown (paragraphs and table rows; not Sources): *every*
   / *each* / *all* … *request* … *carries* / *has* / *includes* / *contains* / *sends* … and a backticked name in
   the same clause, or a backticked name … *added* / *sent* / *included* … *to* / *on* / *in* *every* … *request*.
   The name is the claimed key. "not every …" and "sends no `X`" are no such claim.
2. **Requests** it is checked on: (a) those the lesson's stored outputs show: every message of a ``show()`` view is
   in its HTML, folded ones too; every exchange of a ``show_http()`` view, with the headers that view displays;
   (b) the course's client re-made (:func:`reference_requests`): ``teaching_client`` in both eras, in memory, sending
   every kind of request the lessons send (discover or handshake, tools, resources, prompts) — about a second.
   Only requests answered with a result (or a 2xx) count: the lessons send hand-written bad requests on purpose.
3. **Scope**: a claim naming one era (``2026-07-28`` or ``2025-11-25``: in its sentence, else alone in its cell,
   else alone in its ``##`` section) is checked on that era's requests only (a 2026-07-28 request carries
   ``io.modelcontextprotocol/`` keys).
4. **Check**: a JSON-RPC key (its last part: ``_meta.progressToken`` → ``progressToken``;
   ``…/protocolVersion`` → ``protocolVersion``, which a folded envelope still names) must appear in each request's
   body, unless ``fold=``/``max_items`` hid part of it; an HTTP header (``MCP-Protocol-Version``, ``Authorization:
   Bearer …``) in the request headers of each exchange of every ``show_http`` view that displays that header at
   all (a view that hides it proves nothing, and is skipped).

Not checked: claims phrased otherwise; requests a lesson sends but neither shows nor the client above sends (a
raw request a claim is about passes unless shown).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOLVED = sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))
ERAS = ("2026-07-28", "2025-11-25")
_VERB = r"(?:carr(?:y|ies)|has|have|includes?|contains?|sends?|bears?)"
#: every … request … carries … `X` (no clause break between the verb and the name).
CLAIM = re.compile(
    rf"\b(?:every|each|all)\b[^.;:|\n]{{0,120}}?\brequests?\b[^.;:|`\n]{{0,80}}?\b{_VERB}\b[^.;:|`\n]{{0,60}}?`([^`]+)`",
    re.IGNORECASE,
)
#: `X` … added … to every … request.
ADDED = re.compile(
    r"`([^`]+)`[^.;\n`]{0,60}?\b(?:added|sent|included|put)\b[^.;\n`]{0,40}?\b(?:to|on|in)\s+(?:every|each|all)\b"
    r"[^.;\n`]{0,40}?\brequests?\b",
    re.IGNORECASE,
)
HEADER = re.compile(r"^(?:[A-Z][A-Za-z]*(?:-[A-Za-z]+)+|Authorization)(?::.*)?$")
_TAG = re.compile(r"<[^>]+>")
#: A value ``show(fold=...)`` or ``max_items`` folded: what it hid is unknown (the envelope's placeholder names it).
FOLDED = re.compile(r"\{… \d+ keys?\}|\[… \d+ items?\]|… \d+ more")
_DETAILS = re.compile(r"<details[^>]*>\s*<summary[^>]*>(.*?)</summary>(.*?)</details>", re.S)


@dataclass(frozen=True)
class Claim:
    cell: int
    sentence: str
    key: str
    era: str | None

    @property
    def is_header(self) -> bool:
        return bool(HEADER.match(self.key))

    @property
    def name(self) -> str:
        """What must appear: the header's name, or the JSON key's last part."""
        if self.is_header:
            return self.key.split(":", 1)[0].strip()
        return re.split(r"[./]", self.key.strip())[-1]


def _text(fragment: str) -> str:
    return html.unescape(_TAG.sub("", fragment))


def _era_of(text: str) -> str | None:
    named = [era for era in ERAS if era in text]
    return named[0] if len(named) == 1 else None


def _blocks(markdown: str) -> list[str]:
    """A markdown cell as blocks a claim cannot cross: paragraphs (lines joined), and each table row alone."""
    blocks, paragraph = [], []
    for line in [*markdown.split("**Sources**")[0].splitlines(), ""]:
        if line.lstrip().startswith("|") or not line.strip():
            if paragraph:
                blocks.append(" ".join(paragraph))
                paragraph = []
            if line.strip():
                blocks.append(line)
        else:
            paragraph.append(line.strip())
    return blocks


def claims(notebook: Path) -> list[Claim]:
    """Every claim of the lesson, with the era its sentence names, else its cell, else its section (``##``)."""
    found = []
    cells = nbformat.read(notebook, as_version=4).cells
    section_of, texts = [], [""]  # each cell's section (a "## " heading starts one), each section's markdown
    for cell in cells:
        if cell.cell_type == "markdown" and re.search(r"^## ", cell.source, re.MULTILINE):
            texts.append("")
        if cell.cell_type == "markdown":
            texts[-1] += cell.source + "\n"
        section_of.append(len(texts) - 1)
    for number, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        section_text = texts[section_of[number]]
        for block in _blocks(cell.source):
            for match in [*CLAIM.finditer(block), *ADDED.finditer(block)]:
                if re.search(r"\b(?:no|not|never|without)\b", block[max(match.start() - 5, 0) : match.start(1)], re.I):
                    continue  # "sends no `X`", "not every request": no claim that every request has it
                start = block.rfind(". ", 0, match.start()) + 1
                end = block.find(". ", match.end())
                sentence = block[start : end if end != -1 else len(block)].strip()
                era = _era_of(sentence) or _era_of(cell.source) or _era_of(section_text)
                found.append(Claim(number, sentence, match.group(1), era))
    return found


@dataclass(frozen=True)
class ShownRequest:
    cell: int
    headline: str
    body: str
    answered: bool  # with a result (JSON-RPC) or a 2xx (HTTP)

    @property
    def era(self) -> str:
        return "2026-07-28" if "io.modelcontextprotocol/" in self.body else "2025-11-25"


def shown_requests(notebook: Path) -> tuple[list[ShownRequest], list[tuple[int, list[ShownRequest]]]]:
    """The JSON-RPC requests the stored ``show()`` views hold, and each ``show_http()`` view's HTTP requests."""
    messages, views = [], []
    for number, cell in enumerate(nbformat.read(notebook, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            if "mcp-teach-capture" in page:
                entries = [(_text(summary), _text(body)) for summary, body in _DETAILS.findall(page)]
                results = {
                    m.group(1) for h, _ in entries if (m := re.search(r"\bresult of .*\(response id=([^)]+)\)", h))
                }
                for headline, body in entries:
                    request = re.search(r"client → server .*\(request id=([^)]+)\)", headline)
                    if request:
                        messages.append(ShownRequest(number, headline, body, request.group(1) in results))
            elif "mcp-teach-http" in page:
                exchanges = []
                for summary, body in _DETAILS.findall(page):
                    status = re.search(r"→ (\d{3})", _text(summary))
                    request_part = body.split("<div style='border-left", 2)[1] if "border-left" in body else body
                    names = re.findall(r"<span style='color: #6e7781'>([^<:]+):</span>", request_part)
                    answered = bool(status and status.group(1).startswith("2"))
                    exchanges.append(ShownRequest(number, _text(summary), "\n".join(names).lower(), answered))
                views.append((number, exchanges))
    return messages, views


async def _reference_session() -> list[ShownRequest]:
    """What the course's client sends, re-made: every kind of request the lessons send through ``teaching_client``
    (discover or handshake, tools, resources, prompts), in both eras, in memory."""
    from mcp_teach.client import teaching_client
    from mcp_teach.servers.calculator import build_calculator_server
    from mcp_teach.servers.knowledge import build_knowledge_server
    from mcp_teach.wire.capture import CaptureTransport

    requests = []
    for mode in ("auto", "legacy"):
        for server in (build_calculator_server(), build_knowledge_server()):
            capture = CaptureTransport(server)
            async with teaching_client(capture, mode=mode) as client:
                tools = await client.list_tools()
                if tools:
                    arguments = {"a": 1, "b": 2} if tools[0].name.startswith("calculator") else {}
                    await client.call_tool(tools[0].name, arguments, raise_on_error=False)
                resources = await client.list_resources()
                if resources:
                    await client.read_resource(resources[0].uri)
                prompts = await client.list_prompts()
                for prompt in prompts:  # each with no required argument (there is always one: course_overview)
                    if not any(argument.required for argument in prompt.arguments or []):
                        await client.get_prompt(prompt.name)
            messages = list(capture.capture)
            for wire in capture.capture.requests():
                answers = [
                    m for m in messages if m.method is None and m.id == wire.id and m.direction != wire.direction
                ]
                answered = bool(answers) and "result" in answers[0].message
                label = f"{wire.method} ({mode}, the course's client)"
                requests.append(ShownRequest(-1, label, json.dumps(wire.message), answered))
    return requests


def reference_requests() -> list[ShownRequest]:
    return asyncio.run(_reference_session())


def contradictions(notebook: Path, reference: list[ShownRequest] = ()) -> list[str]:
    """Each (claim, request) where a request the lesson shows, or one of ``reference`` (what the course's client
    sends, :func:`reference_requests`), lacks the key a claim of the lesson says every request carries."""
    messages, views = shown_requests(notebook)
    problems = []
    for claim in claims(notebook):
        if claim.is_header:
            for _, exchanges in views:
                shown = [exchange for exchange in exchanges if exchange.answered]
                if not any(claim.name.lower() in exchange.body.split("\n") for exchange in shown):
                    continue  # this view does not display that header: it proves nothing
                problems += [
                    f"cell {claim.cell} says {claim.sentence!r}; cell {exchange.cell} shows {exchange.headline} without"
                    f" {claim.name}"
                    for exchange in shown
                    if claim.name.lower() not in exchange.body.split("\n")
                ]
        else:
            in_scope = [m for m in [*messages, *reference] if m.answered and (claim.era is None or m.era == claim.era)]
            in_scope = [m for m in in_scope if claim.name in m.body or not FOLDED.search(m.body)]
            problems += [
                f"cell {claim.cell} says {claim.sentence!r}; "
                + (f"cell {m.cell} shows" if m.cell >= 0 else "re-made,")
                + f" {m.headline.split('  {')[0]} without {claim.name}"
                for m in in_scope
                if claim.name not in m.body
            ]
    return problems


def test_the_claims_are_found_with_their_key_and_era(tmp_path):
    lesson = nbformat.v4.new_notebook()
    lesson.cells = [
        nbformat.v4.new_markdown_cell(
            "Every request fastmcp's client sends carries `_meta.progressToken` (its id). "
            "In 2026-07-28 every request must carry `MCP-Protocol-Version`. "
            "`progressToken` | added by fastmcp to every request, equal to the `id`.\n\n"
            "Every request's `_meta` carries the version; servers MUST implement `server/discover`."
        )
    ]
    path = tmp_path / "99_x.ipynb"
    nbformat.write(lesson, path)
    found = [(claim.key, claim.name, claim.era, claim.is_header) for claim in claims(path)]
    assert found == [
        ("_meta.progressToken", "progressToken", "2026-07-28", False),  # the cell names one era
        ("MCP-Protocol-Version", "MCP-Protocol-Version", "2026-07-28", True),
        ("progressToken", "progressToken", "2026-07-28", False),
    ]


@pytest.fixture(scope="module")
def reference() -> list[ShownRequest]:
    return reference_requests()


def test_the_reference_session_has_requests_of_both_eras_without_a_progress_token(reference):
    eras = {request.era for request in reference if request.answered}
    methods = {request.headline.split()[0] for request in reference if request.answered}
    assert eras == set(ERAS)
    assert {"server/discover", "initialize", "tools/list", "tools/call", "resources/read", "prompts/get"} <= methods
    assert any("progressToken" not in request.body for request in reference if request.era == "2026-07-28")


@pytest.mark.parametrize("notebook", SOLVED, ids=[path.stem for path in SOLVED])
def test_every_request_claim_holds_for_the_requests_the_lesson_shows(notebook: Path, reference):
    assert contradictions(notebook, reference) == []
