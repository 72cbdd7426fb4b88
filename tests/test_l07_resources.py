"""mcp_teach.lessons.l07_resources: the tables of lesson 07, computed from real captures of the knowledge server."""

from __future__ import annotations

import mcp_types
import pytest

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l03_errors import attempt
from mcp_teach.lessons.l07_resources import (
    ABSENT,
    advertised,
    blob_bytes,
    caching_table,
    capabilities_table,
    error_table,
    prompt_table,
    resources_table,
)
from mcp_teach.servers.knowledge import build_knowledge_server
from mcp_teach.wire.capture import CaptureTransport


async def _visit(mode: str) -> CaptureTransport:
    capture = CaptureTransport(build_knowledge_server())
    async with teaching_client(capture, mode=mode) as client:
        await client.list_resources()
        await client.read_resource("docs://images/connection.png")
        await attempt(client.read_resource("docs://nope"))
        await client.get_prompt("course_overview")
    return capture


@pytest.fixture(scope="module")
def captures(run) -> dict[str, CaptureTransport]:
    return {"2026-07-28": run(_visit, "auto"), "2025-11-25": run(_visit, "legacy")}


def test_capabilities_side_by_side(captures) -> None:
    modern, legacy = captures["2026-07-28"], captures["2025-11-25"]
    assert advertised(modern)["resources"] == {"subscribe": False, "listChanged": False}
    assert advertised(legacy)["resources"] == {"subscribe": False, "listChanged": True}
    rows = {row[0]: row[1:] for row in capabilities_table(modern, legacy).rows}
    assert rows["resources.listChanged"] == ("false", "true")
    assert rows["completions"] == ("{}", "{}")
    assert rows["extensions.io.modelcontextprotocol/ui"] == ("{}", ABSENT)


def test_caching_hints_one_row_per_method(captures) -> None:
    rows = {row[0]: row[1:] for row in caching_table(captures["2026-07-28"]).rows}
    assert list(rows) == ["server/discover", "resources/list", "resources/read", "prompts/get"]
    assert rows["resources/read"] == ("complete", "0", "private", "MUST carry hints")
    assert rows["prompts/get"] == ("complete", ABSENT, ABSENT, "not cacheable")
    legacy = {row[0]: row[1:] for row in caching_table(captures["2025-11-25"]).rows}
    assert legacy["resources/list"][:3] == (ABSENT, ABSENT, ABSENT)


def test_error_codes_by_era(captures) -> None:
    rows = error_table(captures, "resources/read").rows
    assert [(row[0], row[1]) for row in rows] == [("2026-07-28", "-32602"), ("2025-11-25", "-32002")]
    assert all("docs://nope" in row[2] for row in rows)


def test_resources_blob_and_prompt_tables(run) -> None:
    async def scenario():
        async with teaching_client(build_knowledge_server()) as client:
            resources = await client.list_resources()
            image = await client.read_resource("docs://images/connection.png")
            page = await client.read_resource("docs://tools")
            prompt = await client.get_prompt("summarize_document", {"doc_id": "tools", "style": "tweet"})
        return resources, image, page, prompt

    resources, image, page, prompt = run(scenario)
    rows = resources_table(resources).rows
    assert rows[-1] == ("docs://images/connection.png", "image/png", "98", "user", "0.2")
    assert blob_bytes(image[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert blob_bytes(image[0].model_dump(mode="json"))[:4] == b"\x89PNG"  # a captured dict works too
    with pytest.raises(ValueError, match="text resource"):
        blob_bytes(page[0])
    assert [row[1:3] for row in prompt_table(prompt).rows] == [("user", "text"), ("user", "resource")]
    assert "docs://tools (text/markdown, 935 characters)" in prompt_table(prompt).rows[1][3]


def test_not_a_capture_is_refused() -> None:
    with pytest.raises(TypeError, match="Capture"):
        advertised([])
    with pytest.raises(ValueError, match="server/discover or initialize"):
        advertised(CaptureTransport(build_knowledge_server()))
    assert mcp_types  # the module is imported for the reference types the lesson uses
