"""Lesson 03's exercises (tools/call, results and errors): what each one expects, for the check cells ``check("03.k")``.

- 03.1: a tool error that carries ``structuredContent``, and a tool whose ``outputSchema`` covers it;
- 03.2: two requests, written by hand, that a stdio server answers with -32601 and -32602 (read from the
  capture of the student's own ``RawStdioServer``, so the check starts no server);
- 03.3: ``add_with_retry``, which repairs arguments after a tool error and calls once more.

The answers are read from the lesson's globals by :func:`mcp_teach.exercises.catalogue.check`. The checks are
synchronous; 03.3, which talks to a server, runs its client with :func:`run_sync`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.display.call_outcomes import attempt, one_line
from mcp_teach.exercises.answers import capture_answer, listed_tools, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import say
from mcp_teach.servers.calculator import TOOLS, build_calculator_server
from mcp_teach.servers.explained_errors import ExplainingFastMCP
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, Capture, WireMessage
from mcp_teach.wire.raw_stdio import RawStdioServer

#: The structuredContent 03.1 asks for when dividing by zero.
DIVISION_ERROR = {"error": "division_by_zero", "argument": "b"}
#: The text 03.1 asks for, for the model.
DIVISION_TEXT = "Cannot divide by zero: argument 'b' must not be 0."
CALCULATOR_TOOLS = sorted(tool.__name__ for tool in TOOLS)


def replies_by_b(capture: Capture) -> dict[Any, dict[str, Any]]:
    """The reply to each ``tools/call`` in ``capture``, by the value of its argument ``b``."""
    replies = {}
    for request in capture.requests("tools/call"):
        arguments = request.message.get("params", {}).get("arguments") or {}
        reply = capture.response_to(request)
        if isinstance(arguments, dict) and reply is not None:
            replies[arguments.get("b")] = reply.message
    return replies


@exercise("03.1", answers=("structured_server", "structured_capture"))
def structured_tool_error(check: Checker, structured_server: Any, structured_capture: Any) -> None:
    check.instance(structured_server, FastMCP, "structured_server", hint="structured_server = FastMCP(...)")
    capture = capture_answer(
        check,
        structured_capture,
        "structured_capture",
        "structured_capture = CaptureTransport(structured_server), then connect teaching_client to it",
    )
    replies = replies_by_b(capture)
    check.contains(
        replies,
        0,
        "the values of b in your tools/call requests",
        hint="call divide with {'a': 1, 'b': 0} and raise_on_error=False",
    )
    zero = replies[0]
    check.true(
        "result" in zero,
        "the reply to divide(a=1, b=0)",
        expected="a result: the tool failed, not the request",
        found=zero,
        hint="return the ToolResult from the tool; do not let the request fail",
    )
    check.equal(
        zero["result"].get("isError"), True, "isError in the result for b = 0", hint="pass is_error=True to ToolResult"
    )
    structured = zero["result"].get("structuredContent")
    check.equal(
        structured,
        DIVISION_ERROR,
        "structuredContent in the result for b = 0",
        hint="return ToolResult(..., structured_content=...) instead of raising: a raised ToolError carries text only"
        if structured is None
        else f"structured_content must be exactly {DIVISION_ERROR}: both keys",
    )
    texts = [block.get("text") for block in zero["result"].get("content", [])]
    check.equal(
        texts,
        [DIVISION_TEXT],
        "the text blocks of the result for b = 0",
        hint=f"content={DIVISION_TEXT!r}: the text the model reads",
    )
    check.true(
        4 in replies,
        "the values of b in your tools/call requests",
        expected="0 and 4",
        found=sorted(replies, key=repr),
        hint="call divide with {'a': 1, 'b': 4} too",
    )
    four = replies[4].get("result", {})
    check.equal(
        four.get("structuredContent"),
        {"result": 0.25},
        "structuredContent in the result for b = 4",
        hint="return {'result': a / b}: with an output_schema of your own, fastmcp sends a returned dict as it is "
        "(it wraps a bare float only in a schema it made itself)",
    )
    schema = next((tool.get("outputSchema") for tool in listed_tools(capture) if tool.get("name") == "divide"), None)
    check.true(
        isinstance(schema, dict),
        "the outputSchema of divide in your captured tools/list result",
        expected="a JSON Schema (the tool announces the shape of its structuredContent)",
        found=schema,
        hint="call client.list_tools() first, and pass output_schema=DIVIDE_OUTPUT_SCHEMA to structured_server.tool",
    )
    check.true(
        not Draft202012Validator(schema).is_valid({"anything": "else"}),
        "the outputSchema of divide",
        expected="DIVIDE_OUTPUT_SCHEMA: the two shapes, and nothing else",
        found=schema,
        hint="pass output_schema=DIVIDE_OUTPUT_SCHEMA to structured_server.tool: from -> dict fastmcp makes a schema "
        "that accepts any object",
    )
    for b, result in ((0, zero["result"]), (4, four)):
        problem = best_match(Draft202012Validator(schema).iter_errors(result.get("structuredContent")))
        check.true(
            problem is None,
            f"structuredContent for b = {b} against divide's outputSchema",
            expected="that it conforms: this exercise asks an error's structuredContent to match the outputSchema "
            "too (the specification's MUST, server/tools, Output Schema, speaks of structured results, never of "
            "isError ones)",
            found=problem and problem.message,
            hint="declare both shapes in the schema: pass output_schema=DIVIDE_OUTPUT_SCHEMA to structured_server.tool",
        )
    say(f"b = 0: isError true, structuredContent {zero['result']['structuredContent']}")
    say(f"b = 4: structuredContent {four['structuredContent']}; both conform to divide's outputSchema")


def reply_kind(capture: Capture, request: WireMessage) -> tuple[str, int | None, str]:
    """``(kind, error code, text)`` of the reply to ``request``: protocol error, tool error, result or no reply."""
    answer = capture.response_to(request)
    if answer is None:
        return "no reply", None, ""
    reply = answer.message
    if isinstance(reply.get("error"), dict):
        return "protocol error", reply["error"].get("code"), str(reply["error"].get("message", ""))
    result = reply.get("result") if isinstance(reply.get("result"), dict) else {}
    texts = [block.get("text", "") for block in result.get("content") or [] if isinstance(block, dict)]
    return ("tool error" if result.get("isError") is True else "result"), None, " ".join(texts)


@exercise("03.2", answers=("method_not_found", "invalid_params", "error_server", "codes"))
def two_error_codes(check: Checker, method_not_found: Any, invalid_params: Any, error_server: Any, codes: Any) -> None:
    for name, request in (("method_not_found", method_not_found), ("invalid_params", invalid_params)):
        check.instance(request, dict, name, hint="build it with raw_request(id, method, params)")
    check.equal(
        invalid_params.get("method"),
        "tools/call",
        "the method of invalid_params",
        hint="the -32602 should come from a tools/call whose params are wrong",
    )
    sent_params = invalid_params.get("params")
    check.true(
        isinstance(sent_params, dict) and {"name", "_meta"} <= set(sent_params),
        "the params of invalid_params",
        expected="an object with a 'name' and the '_meta' envelope (section 5 showed what happens without them)",
        found=sent_params,
        hint="build it with raw_request(id, 'tools/call', {'name': ..., ...})",
    )
    check.true(
        sent_params["name"] in CALCULATOR_TOOLS,
        "the tool name in invalid_params",
        expected="one of the calculator's tools: " + ", ".join(CALCULATOR_TOOLS),
        found=sent_params["name"],
        hint="section 4 already showed an unknown tool (-32602 too): keep a real name and break another member "
        "of params",
    )
    check.true(
        "id" in method_not_found and method_not_found.get("id") != invalid_params.get("id"),
        "the ids of your two requests",
        expected="two different ids (a line without an id is a notification, and gets no reply)",
        found=(method_not_found.get("id"), invalid_params.get("id")),
        hint="give each request an id of its own",
    )
    check.instance(
        error_server,
        RawStdioServer,
        "error_server",
        hint="async with RawStdioServer() as error_server: ... sends raw lines to a fresh stdio server",
    )
    sent = [message for message in error_server.capture if message.direction == CLIENT_TO_SERVER][:2]
    check.equal(
        [message.message for message in sent],
        [method_not_found, invalid_params],
        "the first two lines sent on error_server",
        hint="send method_not_found, then invalid_params, first thing on a new RawStdioServer: "
        "its first request decides the connection's era",
    )
    first, second = (reply_kind(error_server.capture, request) for request in sent)
    no_envelope = first[1] == -32602 and "has no" in first[2]
    check.equal(
        first[:2],
        ("protocol error", -32601),
        "what the server answered to method_not_found",
        hint="the server read no protocol version in it: give it the envelope (raw_request adds it unless "
        "envelope=False)"
        if no_envelope
        else "use a method MCP does not define, and give the request the envelope (raw_request adds it)",
    )
    if second[0] == "tool error":
        hint = (
            "an isError result means the request reached the tool (fastmcp reports wrong argument values that way): "
            "break the shape of params instead: which JSON type must arguments have in CallToolRequest?"
        )
    elif second[1] == -32600:
        hint = (
            "-32600: this server's SDK picks a connection's era from its first request; give both requests the envelope"
        )
    else:
        hint = "keep name and the envelope, and give another member of params the wrong type"
    check.equal(
        second[:2],
        ("protocol error", -32602),
        "what the server answered to invalid_params",
        hint=hint,
    )
    check.equal(
        list(codes) if isinstance(codes, list | tuple) else codes,
        [-32601, -32602],
        "codes, read from your replies",
        hint="reply['error']['code'] of each reply, in the order you sent them",
    )
    say(f"error_server answered -32601: {one_line(first[2])}")
    say(f"and -32602: {one_line(second[2])}")


async def _retries(add_with_retry: Any) -> dict[Any, tuple[Any, list[Any]]]:
    """What ``add_with_retry`` returns or raises for five pairs on a strict calculator, and the arguments it sent, by
    the first argument (for ``("1e308", "1e308")`` the retry fails too: an overflow; a loop that retries until it
    works is stopped after 5 s); under ``"unknown"``, the same on a server without the tool (a protocol error, which
    no retry can repair)."""
    strict = build_calculator_server()
    strict.strict_input_validation = True
    capture = CaptureTransport(strict)
    outcomes = {}
    async with teaching_client(capture) as client:
        await client.list_tools()
        for a, b in [("2.5", 1), (2, 3), ("three", 1), (3, "0.5"), ("1e308", "1e308")]:
            capture.capture.clear()
            outcome = await attempt(asyncio.wait_for(add_with_retry(client, a, b), 5))
            sent = [call.message["params"]["arguments"] for call in capture.capture.requests("tools/call")]
            outcomes[a] = (outcome, sent)
    toolless = CaptureTransport(ExplainingFastMCP("no-tools"))
    async with teaching_client(toolless) as client:
        outcome = await attempt(add_with_retry(client, "2.5", 1))
        outcomes["unknown"] = (outcome, toolless.capture.requests("tools/call"))
    return outcomes


@exercise("03.3", answers=("add_with_retry",))
def retry_with_corrected_arguments(check: Checker, add_with_retry: Any) -> None:
    check.async_function(
        add_with_retry,
        "add_with_retry",
        expected="an async function: async def add_with_retry(client, a, b)",
        hint="client.call_tool is awaited, so the function that calls it is async",
    )
    outcomes = run_sync(_retries(add_with_retry))
    escaped = outcomes["2.5"][0]
    check.equal(
        outcomes["2.5"][1],
        [{"a": "2.5", "b": 1}, {"a": 2.5, "b": 1.0}],
        "the arguments of the tools/call requests for ('2.5', 1)",
        hint="the first call raised ToolError and nothing caught it: catch ToolError (a tool error), not MCPError"
        if isinstance(escaped, ToolError) and len(outcomes["2.5"][1]) == 1
        else "send the arguments as given first (the server decides what is valid), then once more with float()",
    )
    check.equal(
        outcomes["2.5"][0],
        3.5,
        "what add_with_retry(client, '2.5', 1) returned",
        hint="return result.data of the call that worked",
    )
    check.equal(
        outcomes[2][1],
        [{"a": 2, "b": 3}],
        "the arguments of the tools/call requests for (2, 3)",
        hint="retry only after a ToolError",
    )
    check.equal(outcomes[2][0], 5.0, "what add_with_retry(client, 2, 3) returned", hint="return result.data")
    check.instance(
        outcomes["three"][0],
        ValueError,
        "what add_with_retry(client, 'three', 1) raised",
        hint="when float() fails, raise ValueError (or let float's own ValueError through)",
    )
    check.true(
        "three" in str(outcomes["three"][0]),
        "the message of that ValueError",
        expected="a message that shows the bad value 'three'",
        found=str(outcomes["three"][0]),
        hint="put the value into the message: an f-string with !r shows it with its quotes",
    )
    check.equal(
        len(outcomes["three"][1]),
        1,
        "the number of tools/call requests for ('three', 1)",
        hint="give up before a second call when an argument cannot be converted",
    )
    check.equal(
        outcomes[3][1],
        [{"a": 3, "b": "0.5"}, {"a": 3.0, "b": 0.5}],
        "the arguments of the tools/call requests for (3, '0.5')",
        hint="convert both arguments with float() before the second call, not only a",
    )
    overflow, calls = outcomes["1e308"]
    check.true(
        isinstance(overflow, ToolError) and len(calls) == 2,
        "add_with_retry(client, '1e308', '1e308'), whose second call fails too (the sum overflows)",
        expected="two tools/call requests, then the ToolError of the second let through",
        found=f"{len(calls)} tools/call requests, then {overflow!r}",
        hint="call once more, not until it works: a tool error that float() cannot repair comes back",
    )
    unknown, calls = outcomes["unknown"]
    check.true(
        isinstance(unknown, MCPError) and len(calls) == 1,
        "add_with_retry(client, '2.5', 1) on a server without calculator_add",
        expected="the MCPError of the one call, let through: only a ToolError is retried",
        found=f"{len(calls)} tools/call requests, then {unknown!r}",
        hint="catch ToolError, not every Exception: an unknown tool is a protocol error float() cannot repair",
    )
    say("('2.5', 1): two calls, 3.5; (2, 3): one call, 5.0; ('three', 1): one call, then ValueError")
    say("an unknown tool: one call, its MCPError let through")
