"""MCP tools -> OpenAI function definitions: real servers' tools, hand-written schemas, the openai SDK."""

from __future__ import annotations

import copy
import datetime
import json
from typing import Annotated, Any, Literal

import httpx2
import jsonschema
import openai
import pytest
from fastmcp import FastMCP
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionToolParam
from openai.types.shared import FunctionDefinition
from openai.types.shared_params import FunctionDefinition as FunctionDefinitionParam
from pydantic import BaseModel, Field, TypeAdapter

from mcp_teach.client import teaching_client
from mcp_teach.llm.openai_tools import clean_schema, is_openai_name, to_openai_tool, to_openai_tools
from mcp_teach.servers.calculator import TOOLS, build_calculator_server
from mcp_teach.wire.capture import CaptureTransport

CALCULATOR_PARAMETERS = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


async def list_tools(server: FastMCP, mode: str = "auto") -> tuple[list[Any], list[dict[str, Any]]]:
    """The tools as the client returns them, and the raw tool dicts of the captured tools/list results."""
    capture = CaptureTransport(server)
    async with teaching_client(capture, mode=mode) as client:
        tools = await client.list_tools()
    raw = [tool for request in capture.capture.requests("tools/list") for tool in _result(capture, request)["tools"]]
    return tools, raw


def _result(capture: CaptureTransport, request: Any) -> dict[str, Any]:
    return capture.capture.response_to(request).message["result"]


def assert_accepted_by_openai_types(definitions: list[dict[str, Any]]) -> None:
    """The definitions fit the openai SDK's request and response types, with no key those types lack."""
    for definition in definitions:
        TypeAdapter(ChatCompletionToolParam).validate_python(definition, strict=True)
        assert set(definition) <= set(ChatCompletionFunctionToolParam.__annotations__)
        assert set(definition["function"]) <= set(FunctionDefinitionParam.__annotations__)
        FunctionDefinition.model_validate(definition["function"])
        assert is_openai_name(definition["function"]["name"])
        jsonschema.Draft202012Validator.check_schema(definition["function"]["parameters"])


# --- the real calculator -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_calculator_tools_become_openai_functions(run, mode):
    tools, _ = run(list_tools, build_calculator_server(), mode)
    definitions = to_openai_tools(tools)

    expected = [
        {
            "type": "function",
            "function": {"name": function.__name__, "description": description, "parameters": CALCULATOR_PARAMETERS},
        }
        for function, (_title, description) in TOOLS.items()
    ]
    assert definitions == expected
    assert_accepted_by_openai_types(definitions)
    # What the model never sees:
    text = json.dumps(definitions)
    for hidden in ("Calculator Add", "outputSchema", "x-fastmcp-wrap-result", "_meta", "additionalProperties"):
        assert hidden not in text


def test_raw_captured_tools_give_the_same_definitions_as_tool_objects(run):
    tools, raw = run(list_tools, build_calculator_server())
    assert "inputSchema" in raw[0] and "_meta" in raw[0]
    assert to_openai_tools(raw) == to_openai_tools(tools)
    assert [to_openai_tool(tool, clean=False) for tool in raw] == [to_openai_tool(tool, clean=False) for tool in tools]


def test_paginated_list_gives_all_tools(run):
    tools, raw = run(list_tools, build_calculator_server(list_page_size=2))
    assert len(raw) == 4  # two pages of two, both captured
    assert [d["function"]["name"] for d in to_openai_tools(tools)] == [f.__name__ for f in TOOLS]


def test_conversion_does_not_change_the_tools(run):
    tools, raw = run(list_tools, build_calculator_server())
    before_objects = [tool.model_dump(by_alias=True) for tool in tools]
    before_raw = copy.deepcopy(raw)
    to_openai_tools(tools)
    to_openai_tools(raw)
    to_openai_tool(raw[0], clean=False)["function"]["parameters"]["properties"].clear()
    assert [tool.model_dump(by_alias=True) for tool in tools] == before_objects
    assert raw == before_raw


def test_unclean_parameters_are_the_input_schema(run):
    tools, _ = run(list_tools, build_calculator_server())
    assert to_openai_tool(tools[0], clean=False)["function"]["parameters"] == tools[0].input_schema


# --- a server with richer annotations ------------------------------------------------------------


class Point(BaseModel):
    x: float
    y: float = 0.0


def build_rich_server() -> FastMCP:
    server = FastMCP("rich", version="1.0.0")

    @server.tool(tags={"text"})
    def format_number(
        value: float,
        decimals: int = 2,
        style: Literal["plain", "grouped"] = "plain",
        unit: str | None = None,
        label: Annotated[str, Field(description="Text before the number")] = "",
    ) -> str:
        """Format a number as text."""
        text = f"{value:,.{decimals}f}" if style == "grouped" else f"{value:.{decimals}f}"
        return " ".join(part for part in (label, text, unit or "") if part)

    @server.tool
    def nearest(points: list[Point], origin: Point | None = None, since: datetime.date | None = None) -> Point:
        origin = origin or Point(x=0)
        return min(points, key=lambda p: (p.x - origin.x) ** 2 + (p.y - origin.y) ** 2)

    @server.tool
    def weights(options: dict[str, int]) -> int:
        return sum(options.values())

    return server


def test_rich_server_schemas_are_cleaned(run):
    tools, _ = run(list_tools, build_rich_server())
    definitions = {d["function"]["name"]: d["function"] for d in to_openai_tools(tools)}
    assert_accepted_by_openai_types([{"type": "function", "function": f} for f in definitions.values()])

    assert definitions["format_number"]["parameters"] == {
        "type": "object",
        "properties": {
            "value": {"type": "number"},
            "decimals": {"type": "integer", "description": "Default: 2."},
            "style": {"enum": ["plain", "grouped"], "type": "string", "description": 'Default: "plain".'},
            "unit": {"type": "string"},
            "label": {"description": 'Text before the number. Default: "".', "type": "string"},
        },
        "required": ["value"],
    }
    nearest = definitions["nearest"]
    assert nearest["description"] == "Nearest"  # no docstring: fastmcp's title stands in
    assert nearest["parameters"]["properties"]["points"]["items"]["properties"]["y"] == {
        "type": "number",
        "description": "Default: 0.0.",
    }
    assert nearest["parameters"]["properties"]["origin"]["type"] == "object"
    assert nearest["parameters"]["properties"]["since"] == {"type": "string", "description": "Format: date."}
    assert definitions["weights"]["parameters"]["properties"]["options"] == {"type": "object"}


def test_arguments_valid_for_the_cleaned_schema_work_on_the_server(run):
    async def call() -> list[Any]:
        async with teaching_client(build_rich_server()) as client:
            tools = await client.list_tools()
            definitions = {d["function"]["name"]: d["function"]["parameters"] for d in to_openai_tools(tools)}
            calls = [
                ("format_number", {"value": 1234.5, "style": "grouped", "unit": "m", "label": "Total:"}),
                ("nearest", {"points": [{"x": 3, "y": 4}, {"x": 1}], "since": "2026-01-31"}),
                ("weights", {"options": {"a": 1, "b": 2}}),
            ]
            results = []
            for name, arguments in calls:
                jsonschema.validate(arguments, definitions[name])
                results.append(await client.call_tool(name, arguments))
            return results

    formatted, nearest, weights = run(call)
    assert formatted.data == "Total: 1,234.50 m"
    assert nearest.structured_content == {"x": 1.0, "y": 0.0}
    assert weights.data == 3


# --- hand-written schemas ------------------------------------------------------------------------

MESSY = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "SearchArguments",
    "type": "object",
    "additionalProperties": False,
    "x-vendor": {"anything": True},
    "properties": {
        "title": {"type": "string", "title": "Title", "description": "Words to search for"},
        "format": {"type": "string", "enum": ["x-large", "small"], "default": "small"},
        "default": {"type": "boolean"},
        "x-id": {"type": "string"},
        "filters": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "properties": {
                "since": {"type": "string", "format": "date-time", "title": "Since"},
                "tags": {
                    "type": "array",
                    "items": {"type": "object", "additionalProperties": False, "x-order": 1, "properties": {}},
                },
            },
        },
        "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None, "title": "Limit"},
        "cursor": {"anyOf": [{"type": "null"}, {"type": "string"}], "description": "Where to continue"},
        "page": {"type": ["integer", "null"], "default": 1},
        "anything": True,
        "choice": {"oneOf": [{"$ref": "#/$defs/Mode"}, {"type": "integer"}]},
    },
    "required": ["title", "cursor"],
    "$defs": {"Mode": {"type": "string", "title": "Mode", "enum": ["a", "b"], "x-fastmcp-wrap-result": True}},
}

MESSY_CLEANED = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "Words to search for"},
        "format": {"type": "string", "enum": ["x-large", "small"], "description": 'Default: "small".'},
        "default": {"type": "boolean"},
        "x-id": {"type": "string"},
        "filters": {
            "type": "object",
            "properties": {
                "since": {"type": "string", "description": "Format: date-time."},
                "tags": {"type": "array", "items": {"type": "object", "properties": {}}},
            },
        },
        "limit": {"type": "integer", "minimum": 1},
        # required, so the null branch stays: the model must be able to send null
        "cursor": {"anyOf": [{"type": "null"}, {"type": "string"}], "description": "Where to continue"},
        "page": {"type": "integer", "description": "Default: 1."},
        "anything": True,
        "choice": {"oneOf": [{"$ref": "#/$defs/Mode"}, {"type": "integer"}]},
    },
    "required": ["title", "cursor"],
    "$defs": {"Mode": {"type": "string", "enum": ["a", "b"]}},
}


def test_clean_schema_applies_every_rule_at_every_depth():
    original = copy.deepcopy(MESSY)
    assert clean_schema(MESSY) == MESSY_CLEANED
    assert original == MESSY  # the input is never changed
    jsonschema.Draft202012Validator.check_schema(MESSY_CLEANED)


def test_clean_schema_output_shares_nothing_with_its_input():
    cleaned = clean_schema(MESSY)
    cleaned["properties"]["format"]["enum"].append("huge")
    cleaned["required"].append("page")
    assert MESSY["properties"]["format"]["enum"] == ["x-large", "small"]
    assert MESSY["required"] == ["title", "cursor"]


@pytest.mark.parametrize("schema", [None, "not a schema", [], 3])
def test_a_missing_schema_becomes_a_function_without_arguments(schema):
    assert clean_schema(schema) == {"type": "object", "properties": {}}


def test_root_gets_type_and_properties():
    assert clean_schema({}) == {"type": "object", "properties": {}}
    assert clean_schema({"$schema": "x", "required": []}) == {"required": [], "type": "object", "properties": {}}


def test_description_notes_join_existing_sentences():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "description": "How many", "default": 3}}}
    assert clean_schema(schema)["properties"]["n"]["description"] == "How many. Default: 3."
    schema["properties"]["n"]["description"] = "How many?"
    assert clean_schema(schema)["properties"]["n"]["description"] == "How many? Default: 3."


def test_any_schema_and_tool_name_pass_through():
    tool = {
        "name": "search.files-v2",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    }
    definition = to_openai_tool(tool)
    assert definition == {
        "type": "function",
        "function": {
            "name": "search.files-v2",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        },
    }
    assert not is_openai_name("search.files-v2")
    assert is_openai_name("search_files-v2")
    assert not is_openai_name("x" * 65)


def test_description_falls_back_to_title():
    only_title = {"name": "t", "title": "Shown Title", "inputSchema": {}}
    both = {"name": "t", "title": "T", "description": "D", "inputSchema": {}}
    assert to_openai_tool(only_title)["function"]["description"] == "Shown Title"
    assert to_openai_tool(both)["function"]["description"] == "D"


def test_duplicate_and_missing_names_are_refused():
    tool = {"name": "same", "inputSchema": {"type": "object"}}
    with pytest.raises(ValueError, match="duplicated: same"):
        to_openai_tools([tool, copy.deepcopy(tool)])
    with pytest.raises(ValueError, match="non-empty string name"):
        to_openai_tool({"inputSchema": {}})


# --- the openai SDK sends the definitions as they are -----------------------------------------------


def test_openai_sdk_sends_the_definitions_unchanged(run):
    tools, _ = run(list_tools, build_rich_server())
    definitions = to_openai_tools(tools)
    sent: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(
            200,
            json={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "test-model",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "ok"},
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    client = openai.OpenAI(
        api_key="test-key",
        base_url="http://llm.test/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    completion = client.chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "hi"}], tools=definitions
    )
    assert completion.choices[0].message.content == "ok"
    assert sent[0]["tools"] == definitions
