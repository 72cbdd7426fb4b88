"""The knowledge server: tools, resources, prompts and completion on every transport, in both eras.

Real servers, no mocks: in memory, ``python -m mcp_teach.serve --server knowledge`` over stdio, SSE and
streamable HTTP on 127.0.0.1; fastmcp's client in both eras and the mcp SDK's own ``ClientSession``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from fastmcp.client.transports import StdioTransport
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from support import CONNECTION_MODE_IDS, CONNECTION_MODES, HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.servers import knowledge_base as kb
from mcp_teach.servers.by_name import SERVER_NAMES, build_server
from mcp_teach.servers.knowledge import build_knowledge_server
from mcp_teach.transports.in_process import PLAIN_LOGS, serve_http

PYTHON_M = [sys.executable, "-m", "mcp_teach.serve"]
MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
DOC_IDS = ["mcp-overview", "protocol-eras", "resources-and-prompts", "tools", "transports"]
IMAGE_URI = "docs://images/connection.png"
RESOURCE_URIS = ["docs://index", *(f"docs://{d}" for d in DOC_IDS), IMAGE_URI]
HAS = "This server has: " + ", ".join(RESOURCE_URIS) + " (template docs://{doc_id})."
PINNED_SERVER = {"name": "mcp-teach-knowledge", "version": "1.0.0"}
CASES, IDS = CONNECTION_MODES, CONNECTION_MODE_IDS


# --- the knowledge base: pure functions ---------------------------------------------------------------------


def test_documents_load_from_the_package_with_titles_and_sizes():
    documents = kb.load_documents()
    assert list(documents) == DOC_IDS
    assert documents["tools"].title == "Tools"
    assert all(d.text.startswith(f"# {d.title}\n") and d.size == len(d.text.encode()) for d in documents.values())
    assert kb.load_image().startswith(b"\x89PNG\r\n\x1a\n")


def test_search_scores_are_title_and_body_counts_ties_broken_by_id():
    hits = kb.search("Transports stdio", top_k=20)
    first = hits[0]
    assert first.doc_id == "transports"
    assert first.score == kb.TITLE_WEIGHT * first.title_matches + first.body_matches
    assert first.title_matches == 1  # "Transports" in the title; "stdio" is not
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    tied = [h for h in kb.search("json", top_k=20) if h.score == 1]
    assert [h.doc_id for h in tied] == sorted(h.doc_id for h in tied)
    assert kb.search("zebra") == []


@pytest.mark.parametrize("top_k", [0, 21, -3])
def test_top_k_outside_the_range_is_refused_not_clamped(top_k):
    with pytest.raises(ValueError, match=rf"top_k must be between 1 and 20, got {top_k}"):
        kb.search("tools", top_k)


def test_the_catalogue():
    assert SERVER_NAMES[:2] == ("calculator", "knowledge")
    assert build_server("knowledge").name == "mcp-teach-knowledge"
    with pytest.raises(ValueError, match="choose one of calculator, knowledge"):
        build_server("weather")


# --- every request, on every transport, in both eras --------------------------------------------------------


@contextlib.asynccontextmanager
async def knowledge_target(connection: str, log_file: Path) -> AsyncIterator[Any]:
    """What ``teaching_client`` connects to; an HTTP server stops when the block ends."""
    if connection == "in-memory":
        yield build_knowledge_server()
    elif connection == "stdio":
        yield StdioTransport(
            sys.executable,
            ["-m", "mcp_teach.serve", "--server", "knowledge", "--transport", "stdio"],
            env=PLAIN_LOGS,
            log_file=log_file,
            keep_alive=False,
        )
    else:
        async with serve_http(connection, server=build_knowledge_server()) as url:
            yield url


async def _error(request) -> tuple[int, str]:
    with pytest.raises(MCPError) as caught:
        await request
    return caught.value.error.code, caught.value.error.message


async def use_everything(client) -> dict[str, Any]:
    """Every request of the knowledge server once, good and bad; returns what a test compares."""
    prompt_ref = mcp_types.PromptReference(type="ref/prompt", name="summarize_document")
    template_ref = mcp_types.ResourceTemplateReference(type="ref/resource", uri="docs://{doc_id}")
    resources = await client.list_resources()
    [template] = await client.list_resource_templates()
    [index] = await client.read_resource("docs://index")
    [image] = await client.read_resource(IMAGE_URI)
    [via_template] = await client.read_resource("docs://tools")
    prompts = await client.list_prompts()
    summary = await client.get_prompt("summarize_document", {"doc_id": "tools", "style": "bullet"})
    overview = await client.get_prompt("course_overview")
    search = await client.call_tool("search_documents", {"query": "Transports stdio", "top_k": 2})
    document = await client.call_tool("get_document", {"doc_id": "transports"})
    too_many = await client.call_tool("search_documents", {"query": "tools", "top_k": 21}, raise_on_error=False)
    unknown_doc = await client.call_tool("get_document", {"doc_id": "faq"}, raise_on_error=False)
    return {
        "protocol": client.protocol_version,
        "capabilities": client.server_capabilities.model_dump(exclude_none=True),
        "server": client.server_info.model_dump(exclude_none=True),
        "resources": [(r.uri, r.mime_type, r.size, r.annotations and r.annotations.priority) for r in resources],
        "template": (template.uri_template, template.mime_type),
        "index": (index.mime_type, [entry["doc_id"] for entry in json.loads(index.text)]),
        "image": (image.mime_type, base64.b64decode(image.blob) == kb.load_image()),
        "via_template": (via_template.mime_type, via_template.text == kb.load_documents()["tools"].text),
        "prompts": {p.name: [(a.name, a.required) for a in p.arguments or []] for p in prompts},
        "summary": [(m.role, m.content.type) for m in summary.messages],
        "summary_resource": summary.messages[1].content.resource.uri,
        "overview": overview.messages[0].content.text.count("\n- "),
        "complete_style": (await client.complete(prompt_ref, {"name": "style", "value": "p"})).values,
        "complete_prompt_doc": (await client.complete(prompt_ref, {"name": "doc_id", "value": "t"})).values,
        "complete_template": (await client.complete(template_ref, {"name": "doc_id", "value": ""})).values,
        "search": [(h["doc_id"], h["score"]) for h in search.structured_content["result"]],
        "document": document.data.splitlines()[0],
        "too_many": (too_many.is_error, too_many.content[0].text),
        "unknown_doc": (unknown_doc.is_error, unknown_doc.content[0].text),
        "unknown_uri": await _error(client.read_resource("file:///etc/passwd")),
        "bad_template_value": await _error(client.read_resource("docs://faq")),
        "missing_argument": await _error(client.get_prompt("summarize_document", {"style": "bullet"})),
        "unknown_prompt": await _error(client.get_prompt("summarise", {})),
        "bad_style": await _error(client.get_prompt("summarize_document", {"doc_id": "tools", "style": "haiku"})),
        "complete_unknown_prompt": await _error(
            client.complete(mcp_types.PromptReference(name="x"), {"name": "a", "value": ""})
        ),
        "complete_unknown_argument": await _error(client.complete(prompt_ref, {"name": "tone", "value": ""})),
        "complete_unknown_variable": await _error(client.complete(template_ref, {"name": "page", "value": ""})),
    }


def check_everything(outcome: dict[str, Any], modern: bool) -> None:
    """What every transport answers, in the era of ``modern``: codes and messages that say what to fix."""
    assert outcome["protocol"] == ("2026-07-28" if modern else "2025-11-25")
    assert outcome["server"] == PINNED_SERVER
    # All three primitives and completion. listChanged is promised only where a session can carry the
    # notification (2025-11-25); resource subscriptions are not offered in either era.
    changes = {"list_changed": not modern}
    expected = {
        "logging": {},
        "prompts": changes,
        "resources": {"subscribe": False, **changes},
        "tools": changes,
        "completions": {},
    }
    if modern:
        expected["extensions"] = {"io.modelcontextprotocol/ui": {}}
    assert outcome["capabilities"] == expected
    sizes = {d: len(kb.load_documents()[d].text.encode()) for d in DOC_IDS}
    assert outcome["resources"][1:] == [
        *((f"docs://{d}", "text/markdown", sizes[d], 1.0 if d == "mcp-overview" else 0.5) for d in DOC_IDS),
        (IMAGE_URI, "image/png", len(kb.load_image()), 0.2),
    ]
    assert outcome["resources"][0][:2] == ("docs://index", "application/json")
    assert outcome["template"] == ("docs://{doc_id}", "text/markdown")
    assert outcome["index"] == ("application/json", DOC_IDS)
    assert outcome["image"] == ("image/png", True)
    assert outcome["via_template"] == ("text/markdown", True)
    assert outcome["prompts"] == {"summarize_document": [("doc_id", True), ("style", True)], "course_overview": []}
    assert outcome["summary"] == [("user", "text"), ("user", "resource")]
    assert outcome["summary_resource"] == "docs://tools"
    assert outcome["overview"] == len(DOC_IDS)
    assert outcome["complete_style"] == ["paragraph"]
    assert outcome["complete_prompt_doc"] == ["tools", "transports"]
    assert outcome["complete_template"] == DOC_IDS
    assert outcome["search"] == [(h.doc_id, h.score) for h in kb.search("Transports stdio", 2)]
    assert outcome["search"][0][0] == "transports"
    assert outcome["document"] == "# Transports"
    # Tool execution errors (isError), which a model can read and correct.
    assert outcome["too_many"] == (True, "top_k must be between 1 and 20, got 21. Ask for 1 to 20 results.")
    known = "Known ids: " + ", ".join(DOC_IDS) + "."
    assert outcome["unknown_doc"] == (True, f"Unknown document 'faq'. {known}")
    # Protocol errors: a missing resource is -32002 up to 2025-11-25, -32602 in 2026-07-28.
    not_found = -32602 if modern else -32002
    assert outcome["unknown_uri"] == (not_found, f"Unknown resource: 'file:///etc/passwd'. {HAS}")
    assert outcome["bad_template_value"] == (not_found, f"Unknown resource: 'docs://faq'. {HAS}")
    assert outcome["missing_argument"] == (
        -32602,
        "Missing argument 'doc_id' for prompt summarize_document: it takes doc_id (required), style (required).",
    )
    assert outcome["unknown_prompt"] == (
        -32602,
        "Unknown prompt: 'summarise'. This server has: course_overview, summarize_document.",
    )
    assert outcome["bad_style"] == (
        -32602,
        "Unknown style 'haiku' for summarize_document. Use one of: bullet, paragraph, tweet.",
    )
    assert outcome["complete_unknown_prompt"] == (
        -32602,
        "Unknown prompt: 'x'. This server has: course_overview, summarize_document.",
    )
    assert outcome["complete_unknown_argument"] == (
        -32602,
        "The prompt summarize_document has no argument 'tone': its arguments are doc_id, style.",
    )
    assert outcome["complete_unknown_variable"] == (
        -32602,
        "The template docs://{doc_id} has no argument 'page': its arguments are doc_id.",
    )


@pytest.mark.parametrize(("connection", "mode"), CASES, ids=IDS)
def test_every_request_on_every_transport(run, tmp_path, connection, mode):
    log_file = tmp_path / "server.log"

    async def scenario():
        async with knowledge_target(connection, log_file) as target, teaching_client(target, mode=mode) as client:
            return await use_everything(client)

    check_everything(run(scenario), modern=mode == "auto" and connection != "sse")
    if connection == "stdio":
        assert "Traceback" not in log_file.read_text()  # refused values are logged at DEBUG, not as crashes


# --- the command line and the mcp SDK's own client ---------------------------------------------------------


@pytest.fixture(scope="module")
def http_url(cli_server):
    """``python -m mcp_teach.serve --server knowledge`` over streamable HTTP, shared by the tests below."""
    server = cli_server([*PYTHON_M, "--server", "knowledge", "--transport", "streamable-http", "--port", "0"])
    yield server.url
    code, stdout, stderr = server.stop(signal.SIGTERM)
    assert code == 0, stderr
    assert stdout == ""
    assert stderr.startswith(f"mcp-teach knowledge: streamable-http on {server.url}")


async def _sdk_session(read, write, era: str) -> dict[str, Any]:
    """A plain ``mcp.ClientSession``: handshake or discover, then resources, a prompt, completion and errors."""
    async with ClientSession(read, write) as session:
        if era == "legacy":
            await session.initialize()
        else:
            await session.discover()
        resources = await session.list_resources()
        image = await session.read_resource(IMAGE_URI)
        prompt = await session.get_prompt("summarize_document", {"doc_id": "tools", "style": "tweet"})
        completion = await session.complete(
            mcp_types.ResourceTemplateReference(type="ref/resource", uri="docs://{doc_id}"),
            {"name": "doc_id", "value": "re"},
        )
        search = await session.call_tool("search_documents", {"query": "prompt"})
        with pytest.raises(MCPError) as missing:
            await session.read_resource("docs://faq")
        return {
            "server": session.server_info.model_dump(exclude_none=True),
            "capabilities": sorted(session.server_capabilities.model_dump(exclude_none=True)),
            "uris": [str(r.uri) for r in resources.resources],
            "image": (image.contents[0].mime_type, base64.b64decode(image.contents[0].blob)[:4]),
            "prompt": len(prompt.messages),
            "completion": completion.completion.values,
            "search": search.structured_content["result"][0]["doc_id"],
            "missing": (missing.value.error.code, missing.value.error.message),
        }


def _check_sdk(outcome: dict[str, Any], modern: bool) -> None:
    assert outcome["server"] == PINNED_SERVER
    assert {"completions", "prompts", "resources", "tools"} <= set(outcome["capabilities"])
    assert outcome["uris"] == RESOURCE_URIS
    assert outcome["image"] == ("image/png", b"\x89PNG")
    assert outcome["prompt"] == 2
    assert outcome["completion"] == ["resources-and-prompts"]
    assert outcome["search"] == "resources-and-prompts"
    assert outcome["missing"] == (-32602 if modern else -32002, f"Unknown resource: 'docs://faq'. {HAS}")


@pytest.mark.parametrize("era", ["legacy", "discover"])
def test_mcp_sdk_client_over_streamable_http(run, http_url, era):
    async def scenario():
        async with streamable_http_client(http_url) as (read, write):
            return await _sdk_session(read, write, era)

    _check_sdk(run(scenario), modern=era == "discover")


@pytest.mark.parametrize("era", ["legacy", "discover"])
def test_mcp_sdk_client_over_stdio_with_mcp_teach_serve(run, tmp_path, era):
    params = StdioServerParameters(command=MCP_TEACH, args=["serve", "--server", "knowledge"], cwd=str(tmp_path))

    async def scenario():
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                return await _sdk_session(read, write, era)

    _check_sdk(run(scenario), modern=era == "discover")
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()


def test_calculator_stays_the_default_and_an_unknown_server_is_refused(run, cli_server):
    server = cli_server([*PYTHON_M, "--transport", "sse", "--port", "0"])

    async def names():
        async with teaching_client(server.url) as client:
            return [tool.name for tool in await client.list_tools()]

    assert run(names)[0] == "calculator_add"
    assert server.stop()[2].startswith("mcp-teach calculator: sse on")
    refused = subprocess.run([*PYTHON_M, "--server", "weather"], capture_output=True, text=True, timeout=HANG_TIMEOUT)
    assert refused.returncode == 2
    assert "invalid choice: 'weather' (choose from 'calculator', 'knowledge'" in refused.stderr


def test_stdio_serving_imports_only_the_chosen_server():
    code = (
        "import sys; from mcp_teach import serve; from mcp_teach.servers import by_name;"
        "by_name.build_server('calculator');"
        "print(sorted(m for m in sys.modules if m.startswith('mcp_teach.servers.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_TIMEOUT, check=True
    )
    assert "knowledge" not in loaded.stdout
    assert "mcp_teach.servers.calculator" in loaded.stdout


def test_large_class_workers_each_build_the_knowledge_server(run, cli_server):
    class_mode = ["--workers", "2", "--stateless", "--port", "0", "--transport", "streamable-http"]
    server = cli_server([MCP_TEACH, "serve", "--server", "knowledge", *class_mode])

    async def scenario():
        async with teaching_client(server.url, mode="legacy") as client:
            return [str(r.uri) for r in await client.list_resources()], (
                await client.get_prompt("course_overview")
            ).messages

    uris, messages = run(scenario)
    assert uris == RESOURCE_URIS and len(messages) == 1
    code, _, stderr = server.stop(signal.SIGTERM)
    assert code == 0
    assert "mcp-teach knowledge: worker process" in stderr
