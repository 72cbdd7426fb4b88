"""The capstone MCP server: every fixture the official conformance suite calls by name, in both protocol eras.

The suite (npm ``@modelcontextprotocol/conformance``, run by :mod:`mcp_teach.course.conformance`) asks a server under
test for tools, resources and prompts with fixed names (``test_simple_text``, ``test://static-text``,
``test_simple_prompt``...) and checks what comes back. This is the course's reference solution of lesson 13, where the
learner writes the same steps into a project of their own (``my-capstone/``, which imports nothing of the course:
:mod:`mcp_teach.lessons.l13_project`); ``tests/test_learner_project.py`` holds the two to the same suites and the same
tools, resources and prompts. Each ``add_*`` function below is a step of the lesson, and :func:`build_capstone_server`
is their composition; the exercises' checks put a learner's step in place of one. Plain fastmcp decorators where fastmcp
can, the mcp SDK where it must (resource subscriptions, the ``subscriptions/listen`` stream, a request the server sends
to the client). What each fixture must return is read from the suite's scenarios (``src/scenarios/server/*.ts`` in
github.com/modelcontextprotocol/conformance); the python-sdk's conformance "everything server"
(``examples/servers/everything-server`` in github.com/modelcontextprotocol/python-sdk) was the reference for the values.

Its :func:`serve_subscriptions` is lesson 07's within the bounds a server many people share needs: what a client
watches is checked, counted per session and per person, and forgotten when its session ends.

Run it with ``mcp-teach serve --server capstone``, or check it with
``mcp-teach conformance --server capstone --requirements 2026-07-28``.

The steps, in the lesson's order (and the scenarios that check each one):

1. content tools: text, image, audio, embedded resource, mixed content, an error (``tools-call-*``);
2. progress and logging (``tools-call-with-progress``, ``tools-call-with-logging``, ``server-stateless``);
3. asking the client, 2025-11-25 (``tools-call-sampling``, ``tools-call-elicitation``,
   ``elicitation-sep1034-defaults``, ``elicitation-sep1330-enums``);
4. asking the client, 2026-07-28 (``input-required-result-*``);
5. resources, a template and subscriptions (``resources-*``, ``sep-2164-resource-not-found``);
6. prompts and completion (``prompts-*``, ``completion-complete``);
7. list changes on ``subscriptions/listen`` (``server-stateless``).
"""

# No ``from __future__ import annotations``: fastmcp reads the prompts' parameter annotations as real types.

import base64
import json
from typing import Any

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.prompts import Message
from fastmcp.utilities.types import Audio, Image
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateSecurity
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, PromptsListChanged, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from mcp_teach.servers import knowledge
from mcp_teach.servers.assistant import answerable, ask_client, elicit_form, is_modern
from mcp_teach.servers.explained_errors import ExplainingFastMCP, short_repr
from mcp_teach.servers.github_facts import add_github_tool
from mcp_teach.servers.knowledge import announce_update
from mcp_teach.servers.listen_limits import person_of, serve_listen
from mcp_teach.servers.lookup_errors import explain_unknown_names, invalid_params, resource_not_found_code

SERVER_NAME = "mcp-teach-capstone"
#: Fixed by the package, not by fastmcp, so captured ``serverInfo`` stays stable.
SERVER_VERSION = "1.0.0"
SERVER_INSTRUCTIONS = "The conformance suite's fixtures: run `mcp-teach conformance --server capstone`."

#: A 1x1 PNG and a tiny WAV file (the bytes behind the image, audio and binary fixtures; the python-sdk's).
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV_TINY = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")

STATIC_TEXT = "This is the content of the static text resource."
WATCHED_URI = "test://watched-resource"
SAMPLING_PROMPT = "What is the capital of France?"

#: SEP-1034: a default for each primitive type.
DEFAULTS_FIELDS: dict[str, Any] = {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {
        "type": "string",
        "description": "User status",
        "enum": ["active", "inactive", "pending"],
        "default": "active",
    },
    "verified": {"type": "boolean", "description": "Verification status", "default": True},
}

#: SEP-1330's enums, as the suite asks for them (it names the fields and the values): single-select ``enum`` and
#: ``oneOf`` with titles, multi-select ``items.enum`` and ``items.anyOf``, and the older ``enumNames`` form
#: (schema.ts 2025-11-25 ``LegacyTitledEnumSchema``, marked for removal).
ENUM_FIELDS: dict[str, Any] = {
    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {
        "type": "string",
        "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"},
        ],
    },
    "legacyEnum": {
        "type": "string",
        "enum": ["opt1", "opt2", "opt3"],
        "enumNames": ["Option One", "Option Two", "Option Three"],
    },
    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
    "titledMulti": {
        "type": "array",
        "items": {
            "anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]
        },
    },
}


def name_question(message: str = "What is your name?") -> mcp_types.ElicitRequest:
    """A form asking for one string, ``name``."""
    return elicit_form(message, {"name": {"type": "string"}}, ["name"])


def answered(answer: Any, field: str) -> Any:
    """The value of ``field`` in an accepted elicitation answer, else None."""
    if isinstance(answer, mcp_types.ElicitResult) and answer.action == "accept":
        return (answer.content or {}).get(field)
    return None


CONFIRM = elicit_form("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])


def new_server(name: str = SERVER_NAME) -> FastMCP:
    """An empty server, ready for every step: instructions, a fixed version, a key to seal requestState, and
    unknown names answered with the spec's codes and a list of what exists: an unknown tool or prompt -32602, a
    missing resource -32002 at 2025-11-25 and -32602 at 2026-07-28 (ExplainingFastMCP for tools, lesson 03, where
    fastmcp alone sends an isError result; explain_unknown_names for prompts and resources, lesson 07)."""
    # The SDK seals requestState under this key (AES-GCM, an expiry, bound to the method, tool and arguments)
    # and refuses a tampered copy with -32602 before any tool runs (step 4).
    server = ExplainingFastMCP(
        name,
        instructions=SERVER_INSTRUCTIONS,
        version=SERVER_VERSION,
        request_state_security=RequestStateSecurity.ephemeral(),
    )
    return explain_unknown_names(server)


# --- 1. content tools -------------------------------------------------------------------------------------


def add_simple_content(mcp: FastMCP) -> None:
    """Two results of one content block each: text, and an image as base64 ``data`` with its ``mimeType``."""

    @mcp.tool(output_schema=None)
    def test_simple_text() -> str:
        """Tests simple text content response."""
        return "This is a simple text response for testing."

    @mcp.tool(output_schema=None)
    def test_image_content() -> Image:
        """Tests image content response (a 1x1 PNG)."""
        return Image(data=PNG_1X1, format="png")


def add_content_tools(mcp: FastMCP) -> None:
    """Audio, an embedded resource, three blocks in one result, and a tool that fails."""

    @mcp.tool(output_schema=None)
    def test_audio_content() -> Audio:
        """Tests audio content response (a tiny WAV)."""
        return Audio(data=WAV_TINY, format="wav")

    @mcp.tool(output_schema=None)
    def test_embedded_resource() -> mcp_types.EmbeddedResource:
        """Tests embedded resource content response."""
        contents = mcp_types.TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        )
        return mcp_types.EmbeddedResource(type="resource", resource=contents)

    @mcp.tool(output_schema=None)
    def test_multiple_content_types() -> list[Any]:
        """Tests response with multiple content types (text, image, resource)."""
        data = mcp_types.TextResourceContents(
            uri="test://mixed-content-resource", mime_type="application/json", text='{"test": "data", "value": 123}'
        )
        return [
            "Multiple content types test:",
            Image(data=PNG_1X1, format="png"),
            mcp_types.EmbeddedResource(type="resource", resource=data),
        ]

    @mcp.tool(output_schema=None)
    def test_error_handling() -> str:
        """Tests error response handling: a tool execution error (``isError: true``), not a protocol error."""
        raise ToolError("This tool intentionally returns an error for testing")


# --- 2. progress and logging ------------------------------------------------------------------------------


def add_progress(mcp: FastMCP) -> None:
    """Progress notifications (only if the request carries a progressToken) and a tool that logs once."""

    @mcp.tool(output_schema=None)
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications (0, 50, 100 of 100), if the request has a progressToken."""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        return "Progress reported."

    @mcp.tool(output_schema=None)
    async def test_logging_tool(ctx: Context) -> str:
        """Logs once: the 2026-07-28 suite checks no log reaches a request that did not ask for one."""
        await ctx.info("Diagnostic trace logging activated")
        return "Logging evaluated"


def add_logging(mcp: FastMCP) -> None:
    """A tool that sends three log messages while it runs."""

    @mcp.tool(output_schema=None)
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution (2025-11-25: at or above the level the client set
        with ``logging/setLevel``, if it set one; 2026-07-28: only when the request's ``_meta`` carries
        ``io.modelcontextprotocol/logLevel``, which the SDK enforces)."""
        for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.info(text)
        return "Tool with logging executed successfully"


# --- 3. asking the client, 2025-11-25 ---------------------------------------------------------------------


def sampling_request(text: str, max_tokens: int = 100) -> mcp_types.CreateMessageRequest:
    """A ``sampling/createMessage`` request with one user message."""
    message = mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(type="text", text=text))
    return mcp_types.CreateMessageRequest(
        params=mcp_types.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def add_sampling(mcp: FastMCP) -> None:
    """Tools that ask the client with ``ask_client`` (lesson 09): a request mid-call, or input_required."""

    @mcp.tool(output_schema=None)
    async def test_sampling(prompt: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Tests sampling: ask the client's LLM (2025-11-25 ``sampling/createMessage``; 2026-07-28 input_required)."""
        answer = await ask_client(ctx, "sampling", sampling_request(prompt))
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        said = answer.content.text if isinstance(answer.content, mcp_types.TextContent) else "[not text]"
        return f"LLM response: {said}"

    @mcp.tool(output_schema=None)
    async def test_streaming_elicitation(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """2026-07-28: the question travels in the result (input_required), never as a request on the stream."""
        answer = await ask_client(ctx, "user_name", name_question())
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        return f"Hello, {answered(answer, 'name') or 'stranger'}!"


def add_elicitation(mcp: FastMCP) -> None:
    """Three forms (two fields; a default for each type; five kinds of choice) and a tool that needs sampling."""

    async def form_result(ctx: Context, message: str, fields: dict[str, Any]) -> str | mcp_types.InputRequiredResult:
        answer = await ask_client(ctx, "form", elicit_form(message, fields, []))
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"

    @mcp.tool(output_schema=None)
    async def test_elicitation(message: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Tests elicitation: ask the user for a username and an e-mail address."""
        fields = {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        }
        answer = await ask_client(ctx, "user", elicit_form(message, fields, ["username", "email"]))
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        return f"User response: action={answer.action}, content={json.dumps(answer.content or {})}"

    @mcp.tool(output_schema=None)
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Tests elicitation with default values for all primitive types (SEP-1034)."""
        return await form_result(ctx, "Please provide user information", DEFAULTS_FIELDS)

    @mcp.tool(output_schema=None)
    async def test_elicitation_sep1330_enums(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Tests elicitation with the enum schema variations of SEP-1330."""
        return await form_result(ctx, "Please select values using different enum schema types", ENUM_FIELDS)

    @mcp.tool(output_schema=None)
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the client's ``sampling`` capability: without it, -32021 (2026-07-28) or a tool error (2025-11-25)."""
        answerable(ctx, sampling_request(SAMPLING_PROMPT))
        return "Client declared sampling capability; proceeding."


# --- 4. asking the client, 2026-07-28 ---------------------------------------------------------------------


def add_input_required(mcp: FastMCP) -> None:
    """input_required (SEP-2322, spec basic/patterns/mrtr): return the questions, read the answers on the retry.
    Every question passes ``answerable`` first: a client that did not declare its capability gets -32021."""

    @mcp.tool(output_schema=None)
    async def test_input_required_result_elicitation(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """One elicitation request, answered on the retry."""
        answers = ctx.input_responses or {}
        if "user_name" in answers:
            return f"Hello, {answered(answers['user_name'], 'name') or 'stranger'}!"
        question = name_question()
        answerable(ctx, question)  # no elicitation capability declared: -32021, not the question
        return mcp_types.InputRequiredResult(input_requests={"user_name": question})

    @mcp.tool(output_schema=None)
    async def test_input_required_result_request_state(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """requestState round trip: the retry must echo the state with the answer."""
        if "confirm" in (ctx.input_responses or {}) and ctx.request_state == "request-state-nonce":
            return "state-ok: confirmation received"
        answerable(ctx, CONFIRM)
        return mcp_types.InputRequiredResult(input_requests={"confirm": CONFIRM}, request_state="request-state-nonce")

    @mcp.tool(output_schema=None)
    async def test_input_required_result_tampered_state(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """A tampered ``requestState`` never reaches this tool: the SDK unseals and verifies it first (-32602)."""
        if ctx.request_state is None:
            answerable(ctx, CONFIRM)
            return mcp_types.InputRequiredResult(input_requests={"confirm": CONFIRM}, request_state="round-1")
        return f"state-ok: {ctx.request_state}"

    @mcp.tool(output_schema=None)
    async def test_input_required_result_capabilities(ctx: Context) -> mcp_types.InputRequiredResult:
        """Ask only for what the client declared it can answer (sampling, elicitation)."""
        asks: dict[str, mcp_types.InputRequest] = {}
        if ctx.session.check_client_capability(mcp_types.ClientCapabilities(sampling={})):
            asks["sample"] = sampling_request("Say hello", 50)
        if ctx.session.check_client_capability(mcp_types.ClientCapabilities(elicitation={})):
            asks["ask"] = name_question()
        return mcp_types.InputRequiredResult(input_requests=asks, request_state="capability-gated")


def add_more_input_required(mcp: FastMCP) -> None:
    """Sampling and roots asked by result, three questions at once, and three rounds carried by requestState."""

    @mcp.tool(output_schema=None)
    async def test_input_required_result_sampling(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """One sampling request, answered on the retry."""
        answer = (ctx.input_responses or {}).get("capital_question")
        if isinstance(answer, mcp_types.CreateMessageResult):
            said = answer.content.text if isinstance(answer.content, mcp_types.TextContent) else "?"
            return f"Model said: {said}"
        question = sampling_request(SAMPLING_PROMPT)
        answerable(ctx, question)
        return mcp_types.InputRequiredResult(input_requests={"capital_question": question})

    @mcp.tool(output_schema=None)
    async def test_input_required_result_list_roots(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """One roots/list request, answered on the retry."""
        answer = (ctx.input_responses or {}).get("client_roots")
        if isinstance(answer, mcp_types.ListRootsResult):
            return f"Client exposed {len(answer.roots)} root(s)."
        question = mcp_types.ListRootsRequest()
        answerable(ctx, question)
        return mcp_types.InputRequiredResult(input_requests={"client_roots": question})

    @mcp.tool(output_schema=None)
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Elicitation, sampling and roots asked together, in one result."""
        if {"user_name", "greeting", "client_roots"} <= (ctx.input_responses or {}).keys():
            return "All inputs received."
        asks: dict[str, mcp_types.InputRequest] = {
            "user_name": name_question(),
            "greeting": sampling_request("Generate a greeting", 50),
            "client_roots": mcp_types.ListRootsRequest(),
        }
        answerable(ctx, *asks.values())  # -32021 lists every capability the client did not declare
        return mcp_types.InputRequiredResult(input_requests=asks, request_state="multiple-inputs")

    @mcp.tool(output_schema=None)
    async def test_input_required_result_multi_round(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Three rounds; ``requestState`` says which round this is and carries the name from round one."""
        # A retry without the answer its round asked for is asked again (basic/patterns/mrtr, Error Handling:
        # SHOULD); only a missing or unreadable state starts over at round 1.

        def ask(key: str, question: mcp_types.ElicitRequest, state: dict[str, Any]) -> mcp_types.InputRequiredResult:
            answerable(ctx, question)
            return mcp_types.InputRequiredResult(input_requests={key: question}, request_state=json.dumps(state))

        try:
            state = json.loads(ctx.request_state or "")
        except ValueError:
            state = None
        step = state.get("round") if isinstance(state, dict) else None
        answers = ctx.input_responses or {}
        color = elicit_form("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"])
        if step == 2 and "step2" in answers:
            return f"{state.get('name')} likes {answered(answers['step2'], 'color')}."
        if step == 2:
            return ask("step2", color, state)  # the same state: only the answer was missing
        if step == 1 and "step1" in answers:
            return ask("step2", color, {"round": 2, "name": answered(answers["step1"], "name")})
        return ask("step1", name_question("Step 1: What is your name?"), {"round": 1})


# --- 5. resources -----------------------------------------------------------------------------------------

#: The longest resource URI a client may watch (the capstone's own have fewer than 40 characters).
MAX_URI_LENGTH = 2048
#: How many resources one 2025-11-25 session may watch at once, and one person over all their sessions.
SUBSCRIPTIONS_PER_SESSION, SUBSCRIPTIONS_PER_PERSON = 16, 64
#: Connection -> {resource URI: a session on it}: who watches what, 2025-11-25 (lesson 07's ``watchers``).
Watchers = dict[object, dict[str, ServerSession]]


def serve_subscriptions(mcp: FastMCP, bus: InMemorySubscriptionBus) -> tuple[Watchers, ListenHandler]:
    """Lesson 07's :func:`~mcp_teach.servers.knowledge.serve_subscriptions`, bounded for a server many share.

    Lesson 07's ``resources/subscribe`` forgets a session's subscriptions when it ends (``DELETE``, its idle timeout,
    stdio's end), but takes any URI, as many as asked: 30 subscriptions to 2 MB URIs held 126 MB while the session
    lasted. Here a URI must name a resource or fit a template (else "Resource not found", -32002: 2025-11-25,
    server/resources, Error Handling; its Security Considerations: "Servers MUST validate all resource URIs"), have
    at most :data:`MAX_URI_LENGTH` characters (-32602), and stay within :data:`SUBSCRIPTIONS_PER_SESSION` and
    :data:`SUBSCRIPTIONS_PER_PERSON` (-32603, as the SDK refuses a listen stream past its own limit). A person holds
    only so many listen streams (:func:`.listen_limits.serve_listen`). Without a token everyone is one person; the
    limits are per process (``--workers N`` allows N times as many).
    """
    watchers, listen = knowledge.serve_subscriptions(mcp, bus)
    server = mcp._mcp_server
    subscribe = server.get_request_handler("resources/subscribe").handler

    async def bounded_subscribe(ctx: ServerRequestContext, params: mcp_types.SubscribeRequestParams) -> Any:
        connection, person, uri = ctx.session._connection, person_of(ctx), params.uri
        if len(uri) > MAX_URI_LENGTH:
            raise invalid_params(f"A resource URI has at most {MAX_URI_LENGTH} characters, not {len(uri)}.")
        if not (await mcp.get_resource(uri) or await mcp.get_resource_template(uri)):
            unknown = f"Unknown resource: {short_repr(uri)}. Subscribe to one that resources/list or a template gives."
            raise MCPError(resource_not_found_code(ctx.protocol_version), unknown)
        connection.state.setdefault("mcp-teach watcher", person)  # whose connection: counted per person below
        mine = watchers.get(connection, {})
        theirs = sum(len(watched) for c, watched in watchers.items() if c.state["mcp-teach watcher"] == person)
        if uri not in mine and (len(mine) >= SUBSCRIPTIONS_PER_SESSION or theirs >= SUBSCRIPTIONS_PER_PERSON):
            limits = f"at most {SUBSCRIPTIONS_PER_SESSION} per session, {SUBSCRIPTIONS_PER_PERSON} per person"
            raise MCPError(INTERNAL_ERROR, f"Too many subscriptions ({limits}): unsubscribe, or end a session.")
        return await subscribe(ctx, params)

    server.add_request_handler("resources/subscribe", mcp_types.SubscribeRequestParams, bounded_subscribe)
    serve_listen(mcp, listen)
    return watchers, listen


def add_static_resources(mcp: FastMCP) -> None:
    """Two resources with a fixed URI: text, and binary (the PNG, sent as base64 ``blob``)."""

    @mcp.resource("test://static-text", name="static-text", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource for testing."""
        return STATIC_TEXT

    @mcp.resource("test://static-binary", name="static-binary", mime_type="image/png")
    def static_binary() -> bytes:
        """A static binary resource (a 1x1 PNG) for testing."""
        return PNG_1X1


def add_watched_resources(mcp: FastMCP, bus: InMemorySubscriptionBus) -> None:
    """A template, the resource the subscription scenarios watch, both eras' subscriptions, and a tool that
    announces a change of it."""

    @mcp.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
    def template_data(id: str) -> str:
        """A resource template with parameter substitution."""
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @mcp.resource(WATCHED_URI, name="watched-resource", mime_type="text/plain")
    def watched() -> str:
        """A resource that can be subscribed to for updates."""
        return "Watched resource content"

    watchers, _ = serve_subscriptions(mcp, bus)  # lesson 07's: fastmcp serves neither era's methods

    @mcp.tool(output_schema=None)
    async def test_trigger_resource_update() -> str:
        """Tells whoever watches test://watched-resource that it changed."""
        await announce_update(bus, watchers, WATCHED_URI)
        return "resource updated"


# --- 6. prompts and completion ----------------------------------------------------------------------------


def add_simple_prompts(mcp: FastMCP) -> None:
    """A prompt without arguments, one with two, and one that asks first (2026-07-28: ``prompts/get`` is one of the
    three requests that may return input_required)."""

    @mcp.prompt
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        return "This is a simple prompt for testing."

    @mcp.prompt
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with required arguments.

        Args:
            arg1: First test argument.
            arg2: Second test argument.
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @mcp.prompt
    async def test_input_required_result_prompt(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """2026-07-28: ``prompts/get`` may return input_required, as ``tools/call`` and ``resources/read`` may; no
        other request may (basic/patterns/mrtr, Supported Requests)."""
        answer = (ctx.input_responses or {}).get("user_context")
        if answer is not None:
            return f"Use the following context: {answered(answer, 'context') or '?'}"
        question = elicit_form("What context should the prompt use?", {"context": {"type": "string"}}, ["context"])
        answerable(ctx, question)
        return mcp_types.InputRequiredResult(input_requests={"user_context": question})


def add_rich_prompts(mcp: FastMCP) -> None:
    """A prompt with an embedded resource, one with an image, and completion for any argument."""

    @mcp.prompt
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
        """A prompt that includes an embedded resource.

        Args:
            resourceUri: URI of the resource to embed.
        """
        contents = mcp_types.TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [
            Message(mcp_types.EmbeddedResource(type="resource", resource=contents)),
            Message("Please process the embedded resource above."),
        ]

    @mcp.prompt
    def test_prompt_with_image() -> list[Message]:
        """A prompt that includes image content."""
        return [
            Message(Image(data=PNG_1X1, format="png").to_image_content()),
            Message("Please analyze the image above."),
        ]

    @mcp.completion
    def complete(
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: mcp_types.CompletionArgument,
        context: mcp_types.CompletionContext | None,
    ) -> list[str]:
        """Suggestions for any argument: a few words that start with what was typed."""
        words = ["paris", "park", "party", "test", "testing"]
        return [word for word in words if word.startswith(argument.value.lower())]


# --- 7. list changes --------------------------------------------------------------------------------------


def dynamic() -> str:
    """A tool (and a prompt) that the trigger tools add and remove again."""
    return "dynamic"


def add_tool_changes(mcp: FastMCP, bus: InMemorySubscriptionBus) -> None:
    """A tool that changes the tool list and says so, on each era's channel."""

    @mcp.tool(output_schema=None)
    async def test_trigger_tool_change(ctx: Context) -> str:
        """Changes the tool list (adds a tool, removes it again) and says so: 2026-07-28 on the open listen streams
        that asked for tool changes, 2025-11-25 on the calling request's stream."""
        mcp.tool(dynamic, name="test_dynamic_tool")
        mcp.local_provider.remove_tool("test_dynamic_tool")
        if is_modern(ctx):
            await bus.publish(ToolsListChanged())
        else:
            await ctx.send_notification(mcp_types.ToolListChangedNotification())
        return "tool list changed"


def add_prompt_changes(mcp: FastMCP, bus: InMemorySubscriptionBus) -> None:
    """A tool that changes the prompt list and says so."""

    @mcp.tool(output_schema=None)
    async def test_trigger_prompt_change(ctx: Context) -> str:
        """Changes the prompt list (adds a prompt, removes it again) and says so."""
        mcp.prompt(dynamic, name="test_dynamic_prompt")
        mcp.local_provider.remove_prompt("test_dynamic_prompt")
        if is_modern(ctx):
            await bus.publish(PromptsListChanged())
        else:
            await ctx.send_notification(mcp_types.PromptListChangedNotification())
        return "prompt list changed"


# --- the whole server -------------------------------------------------------------------------------------


def build_capstone_server() -> FastMCP:
    """A fresh capstone server: every step's fixtures, the GitHub tool (lesson 14), its own listen bus and its
    own requestState key."""
    mcp = new_server()
    bus = InMemorySubscriptionBus()
    add_simple_content(mcp)
    add_content_tools(mcp)
    add_progress(mcp)
    add_logging(mcp)
    add_sampling(mcp)
    add_elicitation(mcp)
    add_input_required(mcp)
    add_more_input_required(mcp)
    add_static_resources(mcp)
    add_watched_resources(mcp, bus)
    add_simple_prompts(mcp)
    add_rich_prompts(mcp)
    add_tool_changes(mcp, bus)
    add_prompt_changes(mcp, bus)
    add_github_tool(mcp)
    return mcp
