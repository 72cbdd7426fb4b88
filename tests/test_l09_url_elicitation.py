"""Lesson 09, Going deeper E: what it says about URL-mode elicitation with fastmcp 4 / mcp 2, checked on the wire.

fastmcp's client declares both elicitation modes when given a handler; a 2025-11-25 URL request needs its
``elicitationId`` (the mcp client refuses one without it with -32602); 2026-07-28 carries the request in
``inputRequests`` without an ``elicitationId`` and sends no completion notification.
"""

from __future__ import annotations

from typing import Any

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.client.elicitation import ElicitResult

from mcp_teach.client import teaching_client
from mcp_teach.servers.assistant import ask_client, is_modern
from mcp_teach.wire.capture import CaptureTransport

URL = "https://mcp.example.com/connect?ask=t1"


def build_linker(*, with_id: bool = True) -> FastMCP:
    """A one-tool server asking in URL mode; ``with_id=False`` leaves out the 2025-11-25 ``elicitationId``."""
    server = FastMCP("linker", version="1.0.0")

    @server.tool
    async def connect_account(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Ask the user to open a page of the server's."""
        params = mcp_types.ElicitRequestURLParams(message="Sign in.", url=URL)
        if with_id and not is_modern(ctx):
            params.elicitation_id = "t1"
        state = "t1" if is_modern(ctx) else None
        answer = await ask_client(ctx, "signin", mcp_types.ElicitRequest(params=params), state=state)
        if isinstance(answer, mcp_types.InputRequiredResult):
            return answer
        if answer.action == "accept" and not is_modern(ctx):
            await ctx.session.send_elicit_complete("t1", related_request_id=ctx.request_id)
        return f"action {answer.action}"

    return server


class Recorder:
    """An elicitation handler that keeps what it was asked and answers with a fixed action."""

    def __init__(self, action: str) -> None:
        self.action, self.seen = action, []

    async def __call__(self, message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        self.seen.append(params)
        return ElicitResult(action=self.action)


def _text(result: Any) -> str:
    return result.content[0].text if result.content else ""


def test_2025_11_25_url_request_carries_its_id_and_the_completion_names_it(run) -> None:
    async def scenario() -> tuple[str, CaptureTransport, Recorder]:
        capture, user = CaptureTransport(build_linker()), Recorder("accept")
        async with teaching_client(capture, mode="legacy", elicitation_handler=user) as client:
            said = _text(await client.call_tool("connect_account", {}))
        return said, capture, user

    said, capture, user = run(scenario)
    assert said == "action accept"
    init = capture.capture.requests("initialize")[0].message["params"]
    assert init["capabilities"]["elicitation"] == {"form": {}, "url": {}}
    asked = capture.capture.requests("elicitation/create")[0].message["params"]
    assert asked == {"mode": "url", "message": "Sign in.", "url": URL, "elicitationId": "t1"}
    assert capture.capture.response_to(capture.capture.requests("elicitation/create")[0]).message["result"] == {
        "action": "accept"
    }
    done = [w.message for w in capture.capture if w.method == "notifications/elicitation/complete"]
    assert done == [
        {"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "t1"}}
    ]
    assert [type(p).__name__ for p in user.seen] == ["ElicitRequestURLParams"]


def test_2025_11_25_url_request_without_id_is_refused_by_the_client(run) -> None:
    async def scenario() -> tuple[Any, CaptureTransport, Recorder]:
        capture, user = CaptureTransport(build_linker(with_id=False)), Recorder("accept")
        async with teaching_client(capture, mode="legacy", elicitation_handler=user) as client:
            result = await client.call_tool("connect_account", {}, raise_on_error=False)
        return result, capture, user

    result, capture, user = run(scenario)
    assert result.is_error and user.seen == []
    asked = capture.capture.requests("elicitation/create")[0]
    error = capture.capture.response_to(asked).message["error"]
    assert (error["code"], error["message"]) == (-32602, "Invalid request parameters")


def test_2026_07_28_url_request_rides_in_input_requests_without_id_or_completion(run) -> None:
    async def scenario() -> tuple[str, CaptureTransport, Recorder]:
        capture, user = CaptureTransport(build_linker()), Recorder("accept")
        async with teaching_client(capture, elicitation_handler=user) as client:
            said = _text(await client.call_tool("connect_account", {}))
        return said, capture, user

    said, capture, user = run(scenario)
    assert said == "action accept"
    first, retry = capture.capture.requests("tools/call")
    assert first.message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"] == {
        "form": {},
        "url": {},
    }
    result = capture.capture.response_to(first).message["result"]
    assert result["resultType"] == "input_required" and result["requestState"]
    assert result["inputRequests"] == {
        "signin": {"method": "elicitation/create", "params": {"message": "Sign in.", "mode": "url", "url": URL}}
    }
    assert retry.message["params"]["inputResponses"] == {"signin": {"action": "accept"}}
    assert retry.message["params"]["requestState"] == result["requestState"]
    assert not [w for w in capture.capture if w.method in ("elicitation/create", "notifications/elicitation/complete")]
    assert [(type(p).__name__, p.url) for p in user.seen] == [("ElicitRequestURLParams", URL)]
