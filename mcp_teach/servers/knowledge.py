"""The knowledge MCP server: the course's documents as tools, resources and prompts, with completion.

One server for all three primitives, so that lesson 07 can show who decides what each one puts in front of the
model: the model calls ``search_documents``/``get_document``, the application reads ``docs://`` resources, the
user picks a prompt. Lesson 07 writes ``add_resources``, ``add_template``, ``add_prompts``, ``add_completion`` and
``build_knowledge_server`` in its cells (exported here); lessons 10 and 11 start the server. ``add_errata`` (lesson
07, *Going deeper*) adds a page that a tool changes and both eras' resource subscriptions, which fastmcp lacks.
Its errata are capped (:data:`MAX_ERRATA` of :data:`MAX_CORRECTION` characters) and a connection's subscriptions
go when it ends, but while a session lasts it may watch any URI, as many as it likes: lesson 07 keeps it short,
and ``mcp-teach serve`` never serves ``add_errata``. A server many people share bounds that too, as
:func:`mcp_teach.servers.capstone.serve_subscriptions` does. Run it with ``python -m mcp_teach.serve --server
knowledge``; the documents and the ranking live in :mod:`mcp_teach.servers.knowledge_base`.
"""

# No ``from __future__ import annotations`` here: fastmcp compares a prompt parameter's annotation with ``str``
# and, for the string ``"str"``, appends "Provide a value matching the following JSON schema" to its description.

from typing import Annotated, Any

import mcp_types
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.prompts import Message
from fastmcp.resources import BinaryResource, TextResource
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from pydantic import Field

from mcp_teach.servers import knowledge_base as kb
from mcp_teach.servers.explained_errors import ExplainingFastMCP
from mcp_teach.servers.lookup_errors import bad_argument, explain_unknown_names

SERVER_NAME = "mcp-teach-knowledge"
#: Fixed by the package, not by fastmcp, so captured ``serverInfo`` stays stable.
SERVER_VERSION = "1.0.0"
SERVER_INSTRUCTIONS = (
    "A small knowledge base about MCP for the mcp-teach course. Find pages with search_documents, "
    "read one with get_document or the docs://{doc_id} resources."
)
INDEX_URI = "docs://index"
IMAGE_URI = "docs://images/connection.png"
TEMPLATE_URI = "docs://{doc_id}"
#: The page ``add_errata`` adds: its contents change whenever ``report_erratum`` is called.
ERRATA_URI = "docs://errata"
#: The longest correction ``report_erratum`` takes, and how many the page holds: anyone can call the tool.
MAX_CORRECTION, MAX_ERRATA = 500, 100
#: The values of ``summarize_document``'s ``style``, and the instruction each one gives.
STYLES = {
    "bullet": "as three to five short bullet points",
    "paragraph": "as one paragraph of three or four sentences",
    "tweet": "in one sentence of at most 280 characters",
}


class SizedText(TextResource):
    """A text resource that reports its ``size`` in ``resources/list`` (fastmcp leaves it out)."""

    def to_mcp_resource(self, **overrides: Any) -> mcp_types.Resource:
        return super().to_mcp_resource(**overrides).model_copy(update={"size": len(self.text.encode())})


class SizedBinary(BinaryResource):
    """A binary resource that reports its ``size`` in ``resources/list``."""

    def to_mcp_resource(self, **overrides: Any) -> mcp_types.Resource:
        return super().to_mcp_resource(**overrides).model_copy(update={"size": len(self.data)})


def document(doc_id: str, refusal: type[Exception] = KeyError) -> kb.Document:
    """The document ``doc_id``, or ``refusal`` (a ``KeyError``) with a sentence naming the known ids."""
    documents = kb.load_documents()
    if doc_id not in documents:
        raise refusal(f"Unknown document {doc_id!r}. Known ids: {', '.join(documents)}.")
    return documents[doc_id]


#: ``search_documents``' ``top_k``: the range is advertised in the schema and checked in the function, so that the
#: error names the whole range.
TOP_K = Field(description="How many results, 1 to 20.", json_schema_extra={"minimum": 1, "maximum": 20})


def search_documents(
    query: Annotated[str, Field(description="Words to look for, e.g. 'streamable http session'.")],
    top_k: Annotated[int, TOP_K] = 5,
) -> list[kb.SearchHit]:
    """Rank the documents by the query's words: 3 points per word in the title, 1 per word in the text."""
    try:
        return kb.search(query, top_k)
    except ValueError as error:
        raise ToolError(str(error)) from None


def get_document(
    doc_id: Annotated[str, Field(description="A document id from search_documents or docs://index.")],
) -> str:
    """Return the whole Markdown text of one document."""
    return document(doc_id, ToolError).text


def add_resources(mcp: FastMCP) -> None:
    """The resources with a fixed URI: the index (JSON), one per page (Markdown) and an image (PNG)."""
    pages = kb.load_documents().values()
    index = [{"doc_id": p.doc_id, "title": p.title, "uri": f"docs://{p.doc_id}", "size": p.size} for p in pages]
    for_both = ["user", "assistant"]  # annotations.audience: the user and the model
    mcp.add_resource(
        SizedText(
            uri=INDEX_URI,
            name="index",
            title="Index of the documents",
            description="Every document's id, title, URI and size in bytes (JSON).",
            mime_type="application/json",
            text=kb.json_text(index),
            annotations=mcp_types.Annotations(audience=for_both, priority=1.0),
        )
    )
    for page in pages:
        mcp.add_resource(
            SizedText(
                uri=f"docs://{page.doc_id}",
                name=page.doc_id,
                title=page.title,
                description=f"The course page '{page.title}' (Markdown).",
                mime_type="text/markdown",
                text=page.text,
                annotations=mcp_types.Annotations(audience=for_both, priority=page.priority),
            )
        )
    mcp.add_resource(
        SizedBinary(
            uri=IMAGE_URI,
            name="connection-image",
            title="Host, client and server",
            description="A 16x16 PNG: two boxes joined by a line (a binary resource, read as a base64 blob).",
            mime_type="image/png",
            data=kb.load_image(),
            annotations=mcp_types.Annotations(audience=["user"], priority=0.2),
        )
    )


def add_template(mcp: FastMCP) -> None:
    """``docs://{doc_id}``: any page by its id, for a URI the client builds."""

    @mcp.resource(
        TEMPLATE_URI,
        name="document",
        title="A document by id",
        description="Any document of the index by its id; completion suggests the ids.",
        mime_type="text/markdown",
    )
    def read_template(doc_id: str) -> str:
        try:
            return document(doc_id).text
        except KeyError as error:
            # -32602 (fastmcp's ValidationError): a value the template does not name is an unknown resource.
            raise bad_argument(error.args[0]) from None


def add_prompts(mcp: FastMCP) -> None:
    """``summarize_document`` (two arguments; the page travels inside the prompt) and ``course_overview`` (none)."""

    @mcp.prompt(title="Summarize a document")
    def summarize_document(doc_id: str, style: str) -> list[Message]:
        """Ask the model to summarize one document in a chosen style: the document travels as an embedded resource.

        Args:
            doc_id: The document to summarize, e.g. 'tools' (completion suggests the ids).
            style: One of: bullet, paragraph, tweet.
        """
        if style not in STYLES:
            raise bad_argument(f"Unknown style {style!r} for summarize_document. Use one of: {', '.join(STYLES)}.")
        try:
            page = document(doc_id)
        except KeyError as error:
            raise bad_argument(f"{error.args[0]} (argument 'doc_id' of summarize_document)") from None
        contents = mcp_types.TextResourceContents(uri=f"docs://{doc_id}", text=page.text, mime_type="text/markdown")
        return [
            Message(f"Summarize the document '{page.title}' {STYLES[style]}. Use only what the document says."),
            Message(mcp_types.EmbeddedResource(type="resource", resource=contents)),
        ]

    @mcp.prompt(title="Course overview")
    def course_overview() -> str:
        """Start here: what the knowledge base holds, in reading order (a prompt without arguments)."""
        pages = "\n".join(f"- {d.doc_id}: {d.title}" for d in kb.load_documents().values())
        return (
            f"I am learning the Model Context Protocol. The knowledge base has these pages:\n{pages}\n"
            "Suggest an order to read them in, one sentence per page on what I will learn."
        )


def add_completion(mcp: FastMCP) -> None:
    """``completion/complete``: the document ids for ``doc_id`` (template and prompt), the styles for ``style``."""

    @mcp.completion
    def complete(
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: mcp_types.CompletionArgument,
        context: mcp_types.CompletionContext | None,
    ) -> list[str]:
        # Unknown prompts, templates and argument names never get here: ExplainUnknownNames refuses them first.
        values = STYLES if argument.name == "style" else kb.load_documents()
        return [value for value in values if value.startswith(argument.value.lower())]


def build_knowledge_server() -> FastMCP:
    """A fresh knowledge server: two tools, seven resources and a template, two prompts and completion."""
    mcp = ExplainingFastMCP(SERVER_NAME, instructions=SERVER_INSTRUCTIONS, version=SERVER_VERSION)
    mcp.tool(search_documents, title="Search Documents")
    mcp.tool(get_document, title="Get Document")
    add_resources(mcp)
    add_template(mcp)
    add_prompts(mcp)
    add_completion(mcp)
    return explain_unknown_names(mcp)


def serve_subscriptions(
    mcp: FastMCP, bus: InMemorySubscriptionBus
) -> tuple[dict[object, dict[str, ServerSession]], ListenHandler]:
    """Both eras' ways to watch a resource: 2025-11-25's subscribe and unsubscribe, 2026-07-28's listen streams.

    Returns the 2025-11-25 watchers (connection -> {URI: a session on it}) and the ``subscriptions/listen`` handler.
    """
    watchers: dict[object, dict[str, ServerSession]] = {}

    async def subscribe(ctx: ServerRequestContext, params: mcp_types.SubscribeRequestParams) -> mcp_types.EmptyResult:
        # A session is made per request; its connection is the client's, the same for all its requests.
        connection = ctx.session._connection
        if connection not in watchers:  # its first subscription: when the connection ends, all of them go
            watchers[connection] = {}
            connection.exit_stack.callback(watchers.pop, connection, None)
        watchers[connection][params.uri] = ctx.session
        return mcp_types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext, params: mcp_types.UnsubscribeRequestParams
    ) -> mcp_types.EmptyResult:
        watchers.get(ctx.session._connection, {}).pop(params.uri, None)
        return mcp_types.EmptyResult()

    listen = ListenHandler(bus)
    # fastmcp serves none of the three methods; the mcp SDK's low-level server takes a handler for any method.
    mcp._mcp_server.add_request_handler("resources/subscribe", mcp_types.SubscribeRequestParams, subscribe)
    mcp._mcp_server.add_request_handler("resources/unsubscribe", mcp_types.UnsubscribeRequestParams, unsubscribe)
    mcp._mcp_server.add_request_handler("subscriptions/listen", mcp_types.SubscriptionsListenRequestParams, listen)
    return watchers, listen


async def announce_update(
    bus: InMemorySubscriptionBus, watchers: dict[object, dict[str, ServerSession]], uri: str
) -> None:
    """Tell whoever watches ``uri`` that it changed, in both eras."""
    await bus.publish(ResourceUpdated(uri))  # 2026-07-28: onto each listen stream that named the URI
    for watched in list(watchers.values()):  # 2025-11-25: each connection that subscribed to it
        if uri in watched:
            await watched[uri].send_resource_updated(uri)


def add_errata(mcp: FastMCP) -> ListenHandler:
    """``docs://errata``, a page the tool ``report_erratum`` changes, and both eras' ways to watch it.

    Returns the ``subscriptions/listen`` handler: its ``close()`` ends every open stream, as a server shutting down.
    """
    errata: list[str] = []
    bus = InMemorySubscriptionBus()  # 2026-07-28: events for the open subscriptions/listen streams
    watchers, listen = serve_subscriptions(mcp, bus)

    @mcp.resource(ERRATA_URI, name="errata", title="Errata", mime_type="text/markdown")
    def read_errata() -> str:
        """Corrections readers reported, oldest first."""
        return "# Errata\n" + "".join(f"\n- {line}" for line in errata)

    @mcp.tool(title="Report an erratum")
    async def report_erratum(doc_id: str, correction: Annotated[str, Field(max_length=MAX_CORRECTION)]) -> str:
        """Add a correction to docs://errata: whoever watches that page is told it changed."""
        try:
            document(doc_id)
        except KeyError as error:
            raise ToolError(error.args[0]) from None
        if len(errata) >= MAX_ERRATA:
            raise ToolError(f"{ERRATA_URI} is full ({MAX_ERRATA} corrections): read it, yours may be there already.")
        errata.append(f"{doc_id}: {correction}")
        await announce_update(bus, watchers, ERRATA_URI)
        return f"Erratum {len(errata)} added to {ERRATA_URI}."

    return listen
