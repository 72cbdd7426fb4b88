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
from IPython.core.inputtransformer2 import TransformerManager

from mcp_teach.client import teaching_client
from mcp_teach.exercises import ExerciseNotAttempted, check, l02
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "02_tools_list.ipynb"
ANSWERS = {
    "02.1": ("power_server", "power_capture", "power_tool"),
    "02.2": ("predicted_schema", "search_schema"),
    "02.3": ("pages_capture", "all_names", "page_sizes"),
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
    """Raise base to the power of exponent."""
    return base**exponent


def listed(capture: CaptureTransport) -> list[dict]:
    reply = capture.capture.response_to(capture.capture.requests("tools/list")[-1])
    return reply.message["result"]["tools"]


def power_answers(function=calculator_power, **options) -> dict:
    """The solution of 02.1, run for real (``options`` go to ``power_server.tool``)."""
    power_server = build_calculator_server()
    power_server.tool(
        function,
        **{"title": "Calculator Power", "description": "Raise the first number to the power of the second.", **options},
    )
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
    return {"predicted_schema": copy.deepcopy(PREDICTION), "search_schema": listed(notes_capture)[0]["inputSchema"]}


def pages_answers(page_size: int = 3, stop_after: int | None = None) -> dict:
    """The solution of 02.3, run for real (``stop_after`` pages: a student who stops too early)."""
    pages_capture = CaptureTransport(build_calculator_server(list_page_size=page_size))
    all_names, page_sizes = [], []

    async def solve():
        async with teaching_client(pages_capture) as client:
            cursor = None
            while True:
                page = await client.list_tools_mcp(cursor=cursor)
                all_names.extend(tool.name for tool in page.tools)
                page_sizes.append(len(page.tools))
                cursor = page.next_cursor
                if cursor is None or len(page_sizes) == stop_after:
                    break

    asyncio.run(solve())
    return {"pages_capture": pages_capture, "all_names": all_names, "page_sizes": page_sizes}


# 02.1


def test_02_1_the_real_solution_passes(capsys):
    check("02.1", power_answers())
    assert "calculator_power(2, 10) = 1024.0" in passed(capsys, "02.1")


def test_02_1_passes_inside_a_running_event_loop(capsys):
    """As in a lesson cell: the check's own client runs while another event loop is busy."""
    answers = power_answers()

    async def cell():
        check("02.1", answers)

    asyncio.run(cell())
    passed(capsys, "02.1")


def test_02_1_a_tool_object_instead_of_the_wire_dict_fails():
    answers = power_answers()

    async def tool_object():
        async with teaching_client(answers["power_server"]) as client:
            return next(tool for tool in await client.list_tools() if tool.name == "calculator_power")

    failed_with("02.1", {**answers, "power_tool": asyncio.run(tool_object())}, "power_tool", "captured message")


def test_02_1_an_int_exponent_is_an_integer_in_the_schema():
    def calculator_power(base: float, exponent: int) -> float:
        return base**exponent

    answers = power_answers(calculator_power)
    failed_with("02.1", answers, "properties of its inputSchema", "float becomes number")


def test_02_1_a_wrong_result_fails():
    def calculator_power(base: float, exponent: float) -> float:
        return base * exponent

    failed_with("02.1", power_answers(calculator_power), "calculator_power(base=2, exponent=10)", "base ** exponent")


def test_02_1_another_title_fails():
    failed_with("02.1", power_answers(title="Power"), "its title", "title='Calculator Power'")


def test_02_1_a_capture_without_the_tool_fails():
    answers = power_answers()
    other = CaptureTransport(build_calculator_server())

    async def solve():
        async with teaching_client(other) as client:
            await client.list_tools()

    asyncio.run(solve())
    failed_with("02.1", {**answers, "power_capture": other}, "tool names", "before you connect")


def test_02_1_a_server_instead_of_a_capture_fails():
    answers = power_answers()
    failed_with("02.1", {**answers, "power_capture": answers["power_server"]}, "power_capture", "CaptureTransport")


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


def test_02_2_a_wrong_required_list_fails(schema_answers):
    predicted = {**copy.deepcopy(PREDICTION), "required": ["query", "limit"]}
    failed_with("02.2", {**schema_answers, "predicted_schema": predicted}, "'required'", "without a default")


def test_02_2_forgetting_additional_properties_fails(schema_answers):
    predicted = {key: value for key, value in PREDICTION.items() if key != "additionalProperties"}
    failed_with("02.2", {**schema_answers, "predicted_schema": predicted}, "top-level keys", "forbids arguments")


def test_02_2_a_schema_not_from_the_wire_fails(schema_answers):
    failed_with("02.2", {**schema_answers, "search_schema": {"type": "object"}}, "search_schema", "captured")


# 02.3


def test_02_3_the_real_solution_passes(capsys):
    check("02.3", pages_answers())
    assert "page sizes [3, 1]" in passed(capsys, "02.3")


def test_02_3_stopping_after_the_first_page_fails():
    failed_with("02.3", pages_answers(stop_after=1), "last page", "keep asking")


def test_02_3_the_wrong_page_size_fails():
    failed_with("02.3", pages_answers(page_size=2), "first page", "list_page_size=3")


def test_02_3_wrong_page_sizes_fail():
    answers = pages_answers()
    failed_with("02.3", {**answers, "page_sizes": [4]}, "page_sizes", "len(page.tools)")


def test_02_3_names_out_of_order_fail():
    answers = pages_answers()
    failed_with("02.3", {**answers, "all_names": sorted(answers["all_names"])}, "all_names", "in order")


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
