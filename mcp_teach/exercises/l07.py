"""Lesson 07's exercises (resources and prompts): what each one expects, for the check cells ``check("07.k")``.

- 07.1: complete ``doc_id`` of ``docs://{doc_id}`` for ``"res"``, read the document, its size in bytes;
- 07.2: the code of a missing resource in each era (-32602 in 2026-07-28, -32002 in 2025-11-25);
- 07.3: the roles and content types of a prompt's messages, and a prompt without arguments;
- 07.4: a resource put into the model's context by the application, and the answer citing it.

The expected values are computed from the knowledge server itself (its documents, its completion), not retyped.
The checks are synchronous; 07.1 lists the resources on a connection of its own with :func:`run_sync`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_teach.client import teaching_client
from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.lessons.l03_errors import code_name
from mcp_teach.llm.teaching_docs import split_documents
from mcp_teach.servers import knowledge_base as kb
from mcp_teach.servers.knowledge import build_knowledge_server
from mcp_teach.servers.lookup_errors import RESOURCE_NOT_FOUND_LEGACY

#: What 07.1 types into the completion.
TYPED = "res"
#: 07.2: the code of a missing resource in each era.
MISSING_CODES = {"2026-07-28": -32602, "2025-11-25": RESOURCE_NOT_FOUND_LEGACY}
#: 07.4: the resource and the question.
TOOLS_URI = "docs://tools"
QUESTION = "What is a tool execution error?"


async def _listed_sizes() -> dict[str, int | None]:
    async with teaching_client(build_knowledge_server()) as client:
        return {str(resource.uri): resource.size for resource in await client.list_resources()}


@exercise("07.1", answers=("completed_id", "document_size"))
def complete_then_read(check: Checker, completed_id: Any, document_size: Any) -> None:
    expected = [doc_id for doc_id in kb.load_documents() if doc_id.startswith(TYPED)]
    check.equal(
        completed_id,
        expected[0],
        "completed_id",
        hint="client.complete(ResourceTemplateReference(type='ref/resource', uri='docs://{doc_id}'), "
        "{'name': 'doc_id', 'value': 'res'}) and take .values[0]",
    )
    uri = f"docs://{completed_id}"
    listed = run_sync(_listed_sizes()).get(uri)
    check.instance(document_size, int, "document_size", hint="len(text.encode()): a number of bytes")
    check.equal(
        document_size,
        listed,
        f"document_size (the size resources/list announces for {uri})",
        hint="read the resource and count the bytes of its UTF-8 text: len(contents[0].text.encode()) — "
        "characters and bytes differ as soon as a page holds a character outside ASCII",
    )
    print(f"{TYPED!r} completes to {completed_id!r}; {uri} has {document_size} bytes, as resources/list says")


@exercise("07.2", answers=("missing_codes",))
def two_codes(check: Checker, missing_codes: Any) -> None:
    check.instance(missing_codes, Mapping, "missing_codes", hint='a dict: {"2026-07-28": code, "2025-11-25": code}')
    check.equal(
        sorted(missing_codes),
        sorted(MISSING_CODES),
        "the keys of missing_codes",
        hint='one key per era, written as the protocol version: "2026-07-28" and "2025-11-25"',
    )
    for era, code in MISSING_CODES.items():
        other = "legacy" if era == "2025-11-25" else "auto (the default)"
        check.equal(
            missing_codes[era],
            code,
            f"missing_codes[{era!r}]",
            hint=f"read docs://missing on a connection with mode={other!r} and store the MCPError's .code "
            "(an int); section 5 shows both",
        )
    print(
        f"2026-07-28: {missing_codes['2026-07-28']} ({code_name(missing_codes['2026-07-28'])}); "
        f"2025-11-25: {missing_codes['2025-11-25']} (resource not found, retired in 2026-07-28)"
    )


@exercise("07.3", answers=("prompt_roles", "content_types", "overview_count"))
def prompt_messages(check: Checker, prompt_roles: Any, content_types: Any, overview_count: Any) -> None:
    check.equal(
        list(prompt_roles) if isinstance(prompt_roles, list | tuple) else prompt_roles,
        ["user", "user"],
        "prompt_roles",
        hint="[message.role for message in result.messages] of get_prompt('summarize_document', {...})",
    )
    check.equal(
        list(content_types) if isinstance(content_types, list | tuple) else content_types,
        ["text", "resource"],
        "content_types",
        hint="[message.content.type for message in result.messages]: the instruction, then the embedded page",
    )
    check.equal(
        overview_count,
        1,
        "overview_count",
        hint="len(result.messages) of client.get_prompt('course_overview'), which takes no arguments",
    )
    print("summarize_document: two user messages (text, then the page as an embedded resource); course_overview: one")


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, Mapping) else None
    return content if isinstance(content, str) else ""


@exercise("07.4", answers=("tool_conversation", "tool_answer"))
def resource_in_context(check: Checker, tool_conversation: Any, tool_answer: Any) -> None:
    check.true(
        isinstance(tool_conversation, list) and all(isinstance(m, Mapping) for m in tool_conversation),
        "tool_conversation",
        expected="a list of chat messages (dicts with 'role' and 'content')",
        found=type(tool_conversation).__name__,
        hint="[resource_message(contents), {'role': 'user', 'content': question}]",
    )
    documents = [doc for message in tool_conversation for doc in split_documents(_message_text(message))[0]]
    sources = [doc.source for doc in documents]
    check.contains(
        sources,
        TOOLS_URI,
        "the documents in tool_conversation",
        hint="read docs://tools with client.read_resource and pass the result to resource_message",
    )
    page = kb.load_documents()["tools"].text
    check.true(
        any(doc.source == TOOLS_URI and doc.text.strip() == page.strip() for doc in documents),
        "the text of docs://tools in tool_conversation",
        expected="the whole page, as resources/read returned it",
        found=[len(doc.text) for doc in documents if doc.source == TOOLS_URI],
        hint="pass all the contents of read_resource('docs://tools') to resource_message, unchanged",
    )
    last = tool_conversation[-1] if tool_conversation else {}
    check.true(
        last.get("role") == "user" and QUESTION.lower() in _message_text(last).lower(),
        "the last message of tool_conversation",
        expected=f'the question, {{"role": "user", "content": "{QUESTION}"}}',
        found=last,
        hint="put the question after the resource message: the model answers the last user message",
    )
    check.true(
        isinstance(tool_answer, str) and TOOLS_URI in tool_answer,
        "tool_answer",
        expected=f"the model's answer, citing {TOOLS_URI}",
        found=tool_answer,
        hint="tool_answer = completion.choices[0].message.content of llm.chat.completions.create(model=model, "
        "messages=tool_conversation)",
    )
    check.true(
        "isError" in tool_answer,
        "tool_answer",
        expected="the sentence of the page about tool execution errors (it mentions isError)",
        found=tool_answer,
        hint="ask exactly the question of the task, without tools, so the model answers from the page",
    )
    print(f"the page was in the context, and the answer quotes it: {tool_answer[:80]}…")
