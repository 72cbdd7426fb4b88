"""mcp_teach.lessons.l07_context: resources and prompts become chat messages the teaching model reads."""

from __future__ import annotations

import base64

import mcp_types

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l07_context import contents_text, prompt_messages, resource_message
from mcp_teach.llm.teaching_docs import split_documents
from mcp_teach.servers import knowledge_base as kb
from mcp_teach.servers.knowledge import build_knowledge_server


def test_a_read_resource_becomes_one_message_with_the_whole_page(run) -> None:
    async def read():
        async with teaching_client(build_knowledge_server()) as client:
            return await client.read_resource("docs://tools")

    message = resource_message(run(read))
    assert message["role"] == "user"
    documents, rest = split_documents(message["content"])
    assert rest == "" and [d.source for d in documents] == ["docs://tools"]
    assert documents[0].text == kb.load_documents()["tools"].text.strip()
    assert resource_message(run(read), role="system")["role"] == "system"


def test_binary_contents_are_described_not_pasted() -> None:
    blob = mcp_types.BlobResourceContents(
        uri="docs://x.png", mime_type="image/png", blob=base64.b64encode(b"1234").decode()
    )
    assert contents_text(blob) == "(The resource docs://x.png is binary, image/png, 4 bytes: not shown to the model.)"
    assert contents_text({"uri": "docs://a", "text": "hi"}) == '<document source="docs://a">\nhi\n</document>'


def test_a_prompt_keeps_its_roles_and_embeds_its_page(run) -> None:
    async def get():
        async with teaching_client(build_knowledge_server()) as client:
            return await client.get_prompt("summarize_document", {"doc_id": "transports", "style": "bullet"})

    messages = prompt_messages(run(get))
    assert [m["role"] for m in messages] == ["user", "user"]
    assert messages[0]["content"].startswith("Summarize the document 'Transports'")
    assert split_documents(messages[1]["content"])[0][0].source == "docs://transports"


def test_other_content_blocks_become_sentences() -> None:
    result = mcp_types.GetPromptResult(
        messages=[
            mcp_types.PromptMessage(
                role="assistant", content=mcp_types.ResourceLink(type="resource_link", uri="docs://a", name="a")
            ),
            mcp_types.PromptMessage(
                role="user", content=mcp_types.ImageContent(type="image", data="AA==", mime_type="image/png")
            ),
        ]
    )
    assert prompt_messages(result) == [
        {"role": "assistant", "content": "(A link to the resource docs://a: the application may read it.)"},
        {"role": "user", "content": "(An image block, image/png: not shown to this text-only model.)"},
    ]
