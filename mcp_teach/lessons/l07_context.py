"""What a host does with resources and prompts before the model sees anything: turn them into chat messages.

MCP says what a resource or a prompt *is*; it does not say how an application shows it to a model. The
OpenAI chat API takes ``{"role": ..., "content": "<text>"}`` messages, so lesson 07's host makes text of both:

- :func:`resource_message`: the contents of a ``resources/read`` result, each text inside a
  ``<document source="<uri>">`` block (the form the offline teaching model reads,
  :func:`mcp_teach.llm.teaching_docs.document_block`; a real model reads any clear wording);
- :func:`prompt_messages`: the ``messages`` of a ``prompts/get`` result, one chat message each, with the
  same role; an embedded resource becomes a document block, a resource link or an image a sentence that
  says what was left out.

Binary contents (a ``blob``) are never pasted as base64: the message says what they are instead.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from mcp_teach.llm.teaching_docs import document_block


def _field(item: Any, *names: str) -> Any:
    for name in names:
        value = item.get(name) if isinstance(item, dict) else getattr(item, name, None)
        if value is not None:
            return value
    return None


def contents_text(contents: Any) -> str:
    """One resource content as text for the model: its ``text`` in a document block, or a note for a ``blob``."""
    uri, mime = str(_field(contents, "uri")), _field(contents, "mime_type", "mimeType") or "unknown type"
    text = _field(contents, "text")
    if isinstance(text, str):
        return document_block(uri, text)
    blob = _field(contents, "blob")
    size = len(base64.b64decode(blob)) if isinstance(blob, str) else 0
    return f"(The resource {uri} is binary, {mime}, {size} bytes: not shown to the model.)"


def resource_message(contents: Iterable[Any], *, role: str = "user") -> dict[str, str]:
    """A chat message holding what ``client.read_resource(uri)`` returned (a list of contents)."""
    return {"role": role, "content": "\n\n".join(contents_text(item) for item in contents)}


def _content_text(content: Any) -> str:
    kind = _field(content, "type")
    if kind == "text":
        return str(_field(content, "text"))
    if kind == "resource":
        return contents_text(_field(content, "resource"))
    if kind == "resource_link":
        return f"(A link to the resource {_field(content, 'uri')}: the application may read it.)"
    article = "An" if str(kind)[:1] in "aeiou" else "A"
    return f"({article} {kind} block, {_field(content, 'mime_type', 'mimeType')}: not shown to this text-only model.)"


def prompt_messages(result: Any) -> list[dict[str, str]]:
    """The ``messages`` of a ``prompts/get`` result as chat messages, in order, roles kept (``user``/``assistant``)."""
    return [
        {"role": str(_field(message, "role")), "content": _content_text(_field(message, "content"))}
        for message in _field(result, "messages") or []
    ]
