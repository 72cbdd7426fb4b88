"""Lesson 02's exercise checks (mcp_teach.exercises.l02): real answers pass, wrong ones fail with feedback, and
missing ones are "not attempted" (an error while grading)."""

from __future__ import annotations

import ast
import asyncio
import copy
import datetime
import inspect
from pathlib import Path
from typing import Literal

import nbformat
import pytest
from exercise_support import failed_with, passed
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from IPython.core.inputtransformer2 import TransformerManager

from mcp_teach.client import teaching_client
from mcp_teach.exercises import ExerciseNotAttempted, check, l02
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "02_tools_list.ipynb"
ANSWERS = {
    "02.1": ("power_server", "power_capture", "power_tool"),
    "02.2": ("predicted_schema", "notes_capture", "search_schema"),
    "02.3": ("walk_pages", "pages_capture", "all_names", "page_sizes"),
}
PREDICTION = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "default": 10},
        "sort": {"type": "string", "enum": ["new", "top"], "default": "top"},
        "after": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}], "default": None},
    },
    "required": ["query"],
}


def search(
    query: str, limit: int = 10, sort: Literal["new", "top"] = "top", after: datetime.date | None = None
) -> list[str]:
    """Search the notes and return the titles that match."""
    return []


def calculator_power(base: float, exponent: float) -> float:
    """Raise base to the power of exponent; a negative base needs a whole exponent."""
    if base < 0 and not float(exponent).is_integer():
        raise ToolError(f"({base}) ** {exponent} has no real result: a negative base needs a whole exponent.")
    return base**exponent


def listed(capture: CaptureTransport) -> list[dict]:
    reply = capture.capture.response_to(capture.capture.requests("tools/list")[-1])
    return reply.message["result"]["tools"]


def power_server_with(function=calculator_power, **options) -> FastMCP:
    """A calculator with ``function`` as its fifth tool, registered as the task says (``options`` override that)."""
    power_server = build_calculator_server()
    power_server.tool(
        function,
        **{"title": "Calculator Power", "description": "Raise the first number to the power of the second.", **options},
    )
    return power_server


def power_answers(function=calculator_power, **options) -> dict:
    """The solution of 02.1, run for real (``options`` go to ``power_server.tool``)."""
    power_server = power_server_with(function, **options)
    power_capture = CaptureTransport(power_server)

    async def solve():
        async with teaching_client(power_capture) as client:
            await client.list_tools()

    asyncio.run(solve())
    power_tool = next(tool for tool in listed(power_capture) if tool["name"] == function.__name__)
    return {"power_server": power_server, "power_capture": power_capture, "power_tool": power_tool}


@pytest.fixture(scope="module")
def schema_answers() -> dict:
    """The solution of 02.2, run for real."""
    notes = FastMCP("mcp-teach-notes", version="1.0.0")
    notes.tool(search)
    notes_capture = CaptureTransport(notes)

    async def solve():
        async with teaching_client(notes_capture) as client:
            await client.list_tools()

    asyncio.run(solve())
    return {
        "predicted_schema": copy.deepcopy(PREDICTION),
        "notes_capture": notes_capture,
        "search_schema": listed(notes_capture)[0]["inputSchema"],
    }


async def walk_pages(client) -> tuple[list[str], list[int]]:
    """The solution of 02.3: every page of tools/list, following nextCursor."""
    names, sizes, cursor = [], [], None
    while True:
        page = await client.list_tools_mcp(cursor=cursor)
        names += [tool.name for tool in page.tools]
        sizes.append(len(page.tools))
        cursor = page.next_cursor
        if cursor is None:
            return names, sizes


async def first_page_only(client) -> tuple[list[str], list[int]]:
    """A student who stops too early."""
    page = await client.list_tools_mcp()
    return [tool.name for tool in page.tools], [len(page.tools)]


def pages_answers(page_size: int = 3, walk=walk_pages) -> dict:
    """02.3 answered with ``walk`` as walk_pages, run for real on a calculator listing ``page_size`` tools a page."""
    pages_capture = CaptureTransport(build_calculator_server(list_page_size=page_size))

    async def solve():
        async with teaching_client(pages_capture) as client:
            return await walk(client)

    all_names, page_sizes = asyncio.run(solve())
    return {"walk_pages": walk, "pages_capture": pages_capture, "all_names": all_names, "page_sizes": page_sizes}


@pytest.fixture(scope="module")
def power_solution() -> dict:
    return power_answers()


@pytest.fixture(scope="module")
def pages_solution() -> dict:
    return pages_answers()


def hint(message: str) -> str:
    """The hint of a check's feedback: it names the mistake, and must not hold the answer."""
    return message.split("Hint:", 1)[1]


# 02.1


def test_02_1_the_real_solution_passes(power_solution, capsys):
    check("02.1", power_solution)
    assert "calculator_power(2, 10) = 1024.0" in passed(capsys, "02.1")


def test_02_1_passes_inside_a_running_event_loop(power_solution, capsys):
    """As in a lesson cell: the check's own client runs while another event loop is busy."""

    async def cell():
        check("02.1", power_solution)

    asyncio.run(cell())
    passed(capsys, "02.1")


@pytest.mark.wrong_answer("02.1")
def test_02_1_a_tool_object_instead_of_the_wire_dict_fails(power_solution):
    async def tool_object():
        async with teaching_client(power_solution["power_server"]) as client:
            return next(tool for tool in await client.list_tools() if tool.name == "calculator_power")

    answers = {**power_solution, "power_tool": asyncio.run(tool_object())}
    failed_with("02.1", answers, "power_tool", "captured message")


@pytest.mark.wrong_answer("02.1")
def test_02_1_an_int_exponent_is_an_integer_in_the_schema():
    def calculator_power(base: float, exponent: int) -> float:
        return base**exponent

    answers = power_answers(calculator_power)
    failed_with("02.1", answers, "properties of its inputSchema", "float becomes number")


@pytest.mark.wrong_answer("02.1")
def test_02_1_a_wrong_result_fails(power_solution):
    def calculator_power(base: float, exponent: float) -> float:
        return base * exponent

    answers = {**power_solution, "power_server": power_server_with(calculator_power)}
    failed_with("02.1", answers, "calculator_power(base=2, exponent=10)", "base ** exponent")


def int_power(base: float, exponent: float) -> float:
    return int(base) ** int(exponent)


def int_exponent_power(base: float, exponent: float) -> float:
    return base ** int(exponent)


def complex_power(base: float, exponent: float) -> float:
    """The task's first step alone: (-8) ** 0.5 is a complex number."""
    return base**exponent


def magnitude_power(base: float, exponent: float) -> float:
    """A real number where there is none."""
    return -(abs(base) ** exponent) if base < 0 else base**exponent


@pytest.mark.wrong_answer("02.1")
@pytest.mark.parametrize(
    ("function", "fragments"),
    [
        pytest.param(int_power, ["calculator_power(base=6.25, exponent=0.5)", "int() would drop"], id="int-of-both"),
        pytest.param(
            int_exponent_power, ["calculator_power(base=6.25, exponent=0.5)", "int() would drop"], id="int-exponent"
        ),
        pytest.param(
            complex_power,
            ["isError of calculator_power(base=-8, exponent=0.5)", "Invalid structured content", "complex number"],
            id="a-complex-result",
        ),
        pytest.param(
            magnitude_power, ["isError of calculator_power(base=-8, exponent=0.5)", "raise ToolError"], id="no-refusal"
        ),
    ],
)
def test_02_1_a_wrong_power_fails_with_its_hint(power_solution, capfd, function, fragments):
    answers = {**power_solution, "power_server": power_server_with(function, name="calculator_power")}
    message = failed_with("02.1", answers, *fragments)
    assert "is_integer" not in message and "base < 0" not in message
    assert "Warning" not in capfd.readouterr().err  # pydantic's warning on a complex number stays out of the lesson


@pytest.mark.wrong_answer("02.1")
@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        pytest.param({"title": "Power"}, ["its title", "title='Calculator Power'"], id="another-title"),
        pytest.param(
            {"title": None, "description": "x"},
            ["its title, listed and as registered", "fastmcp makes one from the name"],
            id="no-title-and-description-x",
        ),
        pytest.param({"description": "x"}, ["its description", "a word or two"], id="description-x"),
        pytest.param({"description": "Power."}, ["its description", "a word or two"], id="a-one-word-description"),
    ],
)
def test_02_1_a_missing_title_or_description_fails(options, fragments):
    failed_with("02.1", power_answers(**options), *fragments)


@pytest.mark.wrong_answer("02.1")
def test_02_1_a_capture_without_the_tool_fails(power_solution):
    other = CaptureTransport(build_calculator_server())

    async def solve():
        async with teaching_client(other) as client:
            await client.list_tools()

    asyncio.run(solve())
    failed_with("02.1", {**power_solution, "power_capture": other}, "tool names", "before you connect")


@pytest.mark.wrong_answer("02.1")
def test_02_1_a_server_instead_of_a_capture_fails(power_solution):
    answers = {**power_solution, "power_capture": power_solution["power_server"]}
    failed_with("02.1", answers, "power_capture", "CaptureTransport")


# 02.2


def test_02_2_the_real_solution_passes(schema_answers, capsys):
    check("02.2", schema_answers)
    passed(capsys, "02.2")


def test_02_2_the_reference_schema_is_what_the_wire_carries(schema_answers):
    from fastmcp.tools import Tool

    assert Tool.from_function(l02.search).to_mcp_tool().input_schema == schema_answers["search_schema"]


def test_02_2_the_lesson_defines_the_same_search_as_the_check():
    notebook = nbformat.read(LESSON, as_version=4)
    (cell,) = [
        c for c in notebook.cells if "exercise:02.2" in c.metadata.get("tags", []) and "solution" in c.metadata.tags
    ]
    given = cell.source.split("### BEGIN SOLUTION")[0]
    namespace: dict = {}
    exec(compile(given, "02.2 given lines", "exec"), namespace)
    assert inspect.signature(namespace["search"]) == inspect.signature(l02.search)
    assert namespace["search"].__doc__ == l02.search.__doc__.split("\n")[0]


@pytest.mark.wrong_answer("02.2")
@pytest.mark.parametrize(
    ("name", "wrong", "fragment"),
    [
        ("limit", {"type": "integer"}, "published as 'default'"),
        ("sort", {"type": "string", "default": "top"}, "'enum'"),
        ("after", {"type": "string", "format": "date", "default": None}, "anyOf"),
        ("query", {"type": "str"}, "only its JSON type"),
    ],
)
def test_02_2_a_wrong_property_fails_with_its_hint(schema_answers, name, wrong, fragment):
    predicted = copy.deepcopy(PREDICTION)
    predicted["properties"][name] = wrong
    failed_with("02.2", {**schema_answers, "predicted_schema": predicted}, repr(name), fragment)


@pytest.mark.wrong_answer("02.2")
def test_02_2_a_wrong_required_list_fails(schema_answers):
    predicted = {**copy.deepcopy(PREDICTION), "required": ["query", "limit"]}
    failed_with("02.2", {**schema_answers, "predicted_schema": predicted}, "'required'", "without a default")


@pytest.mark.wrong_answer("02.2")
def test_02_2_forgetting_additional_properties_fails(schema_answers):
    predicted = {key: value for key, value in PREDICTION.items() if key != "additionalProperties"}
    failed_with("02.2", {**schema_answers, "predicted_schema": predicted}, "top-level keys", "forbids arguments")


@pytest.fixture(scope="module")
def calculator_capture() -> CaptureTransport:
    """A capture that listed the calculator's tools: not search's."""
    capture = CaptureTransport(build_calculator_server())

    async def solve():
        async with teaching_client(capture) as client:
            await client.list_tools()

    asyncio.run(solve())
    return capture


@pytest.mark.wrong_answer("02.2")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        pytest.param(
            lambda answers, calculator: {**answers, "search_schema": answers["predicted_schema"]},
            ["search_schema", "your prediction itself", "crossed the wire"],
            id="the-prediction-copied",
        ),
        pytest.param(
            lambda answers, calculator: {**answers, "search_schema": {"type": "object"}},
            ["search_schema", "captured"],
            id="a-schema-not-from-the-wire",
        ),
        pytest.param(
            lambda answers, calculator: {**answers, "search_schema": listed(calculator)[0]["inputSchema"]},
            ["search_schema", "captured"],
            id="another-tool's-schema",
        ),
        pytest.param(
            lambda answers, calculator: {**answers, "notes_capture": calculator},
            ["the tools listed in notes_capture", "list search's server"],
            id="a-capture-without-search",
        ),
        pytest.param(
            lambda answers, calculator: {**answers, "notes_capture": CaptureTransport(FastMCP("never-connected"))},
            ["the tools listed in notes_capture", "list search's server"],
            id="a-capture-never-connected",
        ),
    ],
)
def test_02_2_a_schema_not_captured_fails(schema_answers, calculator_capture, wrong, fragments):
    message = failed_with("02.2", wrong(schema_answers, calculator_capture), *fragments)
    assert "'integer'" not in message  # the prediction's answer is not shown


# 02.3


def test_02_3_the_real_solution_passes(pages_solution, capsys):
    check("02.3", pages_solution)
    assert "page sizes [3, 1]" in passed(capsys, "02.3")


@pytest.mark.wrong_answer("02.3")
def test_02_3_stopping_after_the_first_page_fails():
    failed_with("02.3", pages_answers(walk=first_page_only), "last page", "keep asking")


@pytest.mark.wrong_answer("02.3")
def test_02_3_the_wrong_page_size_fails():
    failed_with("02.3", pages_answers(page_size=2), "first page", "list_page_size=3")


@pytest.mark.wrong_answer("02.3")
def test_02_3_wrong_page_sizes_fail(pages_solution):
    failed_with("02.3", {**pages_solution, "page_sizes": [4]}, "page_sizes", "len(page.tools)")


@pytest.mark.wrong_answer("02.3")
def test_02_3_names_out_of_order_fail(pages_solution):
    names = sorted(pages_solution["all_names"])
    failed_with("02.3", {**pages_solution, "all_names": names}, "all_names", "in order")


async def listed_then_typed(client):
    """client.list_tools() walks the pages out of sight; the sizes are typed in."""
    return [tool.name for tool in await client.list_tools()], [3, 1]


async def two_fixed_pages(client):
    first = await client.list_tools_mcp()
    second = await client.list_tools_mcp(cursor=first.next_cursor)
    return [tool.name for tool in first.tools + second.tools], [len(first.tools), len(second.tools)]


async def stops_on_a_falsy_cursor(client):
    names, sizes, cursor = [], [], None
    while True:
        page = await client.list_tools_mcp(cursor=cursor)
        names += [tool.name for tool in page.tools]
        sizes.append(len(page.tools))
        cursor = page.next_cursor
        if not cursor:
            return names, sizes


async def drops_an_empty_cursor(client):
    names, sizes, cursor = [], [], None
    while True:
        page = await client.list_tools_mcp(cursor=cursor or None)
        names += [tool.name for tool in page.tools]
        sizes.append(len(page.tools))
        cursor = page.next_cursor
        if cursor is None:
            return names, sizes


@pytest.mark.wrong_answer("02.3")
@pytest.mark.parametrize(
    "walk",
    [
        pytest.param(listed_then_typed, id="list_tools-and-typed-sizes"),
        pytest.param(two_fixed_pages, id="two-fixed-pages"),
        pytest.param(stops_on_a_falsy_cursor, id="stops-on-a-falsy-cursor"),
        pytest.param(drops_an_empty_cursor, id="drops-an-empty-cursor"),
    ],
)
def test_02_3_a_walk_that_only_fits_the_lesson_s_server_fails(pages_solution, walk):
    """Each passes on the lesson's calculator; the check's own server has 3 pages and the cursors "" and "0"."""
    assert pages_answers(walk=walk)["page_sizes"] == [3, 1]
    message = failed_with(
        "02.3", {**pages_solution, "walk_pages": walk}, "walk_pages(client) on the check's server", "'' is a cursor"
    )
    assert "[3, 1]" not in hint(message) and "calculator_multiply" not in hint(message)


@pytest.mark.wrong_answer("02.3")
def test_02_3_a_plain_function_fails(pages_solution):
    def plain(client):
        return pages_solution["all_names"], pages_solution["page_sizes"]

    failed_with("02.3", {**pages_solution, "walk_pages": plain}, "walk_pages", "async def walk_pages(client)")


# not attempted


@pytest.mark.parametrize("exercise_id", sorted(ANSWERS))
def test_missing_answers_are_not_attempted(exercise_id, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check(exercise_id, {})
    out = capsys.readouterr().out
    assert f"Exercise {exercise_id} — not attempted yet" in out
    for name in ANSWERS[exercise_id]:
        assert f"`{name}`" in out


@pytest.mark.parametrize("exercise_id", sorted(ANSWERS))
def test_missing_answers_raise_while_grading(exercise_id, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(ExerciseNotAttempted):
        check(exercise_id, {})


def defined_names(source: str) -> set[str]:
    """The names a cell's code binds (assignments, loops, imports, functions, classes); magics read as IPython does."""
    python = TransformerManager().transform_cell(source)
    tree = compile(python, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


@pytest.mark.parametrize("exercise_id", sorted(ANSWERS))
def test_the_answers_are_not_defined_before_the_exercise(exercise_id):
    """A blank lesson must look unattempted: no answer name is bound anywhere before its exercise."""
    notebook = nbformat.read(LESSON, as_version=4)
    defined: set[str] = set()
    for cell in notebook.cells:
        if f"exercise:{exercise_id}" in cell.metadata.get("tags", []):
            break
        if cell.cell_type == "code":
            defined |= defined_names(cell.source)
    assert not defined & set(ANSWERS[exercise_id])
