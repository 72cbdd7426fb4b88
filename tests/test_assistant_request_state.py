"""The assistant server's ``requestState`` (2026-07-28, basic/patterns/mrtr): sealed, bound to its request, short
lived and used once; and -32021 over HTTP with status 400 (basic/index).

Real servers and real clients: the state is minted by ``delete_note`` and echoed, changed or replayed by hand through
the client's session, in memory and over stateless streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import mcp.server.request_state as request_state
import mcp_types
import pytest
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.servers.assistant import STATE_TTL, STATE_USED, build_assistant_server
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport

CONFIRM = {"confirm": {"action": "accept", "content": {"confirm": True}}}
DECLINE = {"confirm": {"action": "decline"}}
INVALID = (-32602, "Invalid or expired requestState")


async def _no_elicitation(*args: Any) -> Any:
    raise AssertionError("the tests answer by hand: the client must not be asked")


def outcome(result_or_error: Any) -> Any:
    """(code, message) of a JSON-RPC error, or (is_error, text) of a tool result."""
    if isinstance(result_or_error, MCPError):
        return result_or_error.error.code, result_or_error.error.message
    return result_or_error.is_error, result_or_error.content[0].text


async def send(client: Any, params: dict[str, Any]) -> Any:
    """One hand-built ``tools/call`` through the client's session (which adds the 2026-07-28 ``_meta``)."""
    request = mcp_types.Request[dict[str, Any], str](method="tools/call", params=params)
    try:
        return outcome(await client.session.send_request(request, mcp_types.CallToolResult))
    except MCPError as error:
        return outcome(error)


async def first_round(client: Any, note: str = "todo") -> dict[str, Any]:
    """The params of a retry of ``delete_note(note)`` without its answer: the first round's sealed state echoed."""
    request = mcp_types.Request[dict[str, Any], str](
        method="tools/call", params={"name": "delete_note", "arguments": {"note_id": note}}
    )
    result = await client.session.send_request(request, mcp_types.InputRequiredResult)
    assert result.result_type == "input_required" and list(result.input_requests or {}) == ["confirm"]
    assert isinstance(result.request_state, str) and note not in result.request_state  # sealed, not plain JSON
    return {"name": "delete_note", "arguments": {"note_id": note}, "requestState": result.request_state}


def modern_client(target: Any) -> Any:
    """A 2026-07-28 client that declares elicitation (so the server may ask) but is never asked: we answer by hand."""
    return teaching_client(target, elicitation_handler=_no_elicitation)


async def notes_of(client: Any) -> str:
    return (await client.call_tool("list_notes", {})).content[0].text


def test_a_state_is_used_once_and_refused_before_the_note_is_looked_up(run: Callable[..., Awaitable[Any]]) -> None:
    async def scenario() -> list[Any]:
        async with modern_client(build_assistant_server()) as client:
            retry = {**await first_round(client), "inputResponses": CONFIRM}
            return [await send(client, retry), await send(client, retry), await notes_of(client)]

    deleted, replayed, notes = run(scenario)
    assert deleted == (False, "Deleted the note 'todo'.")
    assert replayed == (True, STATE_USED)  # not "Unknown note": the replay is what is refused
    assert notes == '["groceries","ideas"]'


def test_a_declined_answer_spends_its_state_too(run: Callable[..., Awaitable[Any]]) -> None:
    async def scenario() -> list[Any]:
        async with modern_client(build_assistant_server()) as client:
            retry = await first_round(client)
            kept = await send(client, {**retry, "inputResponses": DECLINE})
            confirmed_later = await send(client, {**retry, "inputResponses": CONFIRM})  # same state, new answer
            return [kept, confirmed_later, await notes_of(client)]

    kept, confirmed_later, notes = run(scenario)
    assert kept == (False, "Kept the note 'todo': you declined.")
    assert confirmed_later == (True, STATE_USED)
    assert notes == '["groceries","ideas","todo"]'


def test_a_retry_without_the_answer_is_asked_again_and_does_not_spend_the_state(
    run: Callable[..., Awaitable[Any]],
) -> None:
    async def scenario() -> Any:
        async with modern_client(build_assistant_server()) as client:
            retry = await first_round(client)
            request = mcp_types.Request[dict[str, Any], str](method="tools/call", params=retry)
            again = await client.session.send_request(request, mcp_types.InputRequiredResult)
            assert again.result_type == "input_required" and isinstance(again.request_state, str)
            resealed = {**retry, "requestState": again.request_state, "inputResponses": CONFIRM}
            return await send(client, resealed), await send(client, {**retry, "inputResponses": CONFIRM})

    resealed, original = run(scenario)
    assert resealed == (False, "Deleted the note 'todo'.")
    assert original == (True, STATE_USED)  # the same ask, answered once already


def test_changed_rebound_and_foreign_states_are_refused_by_the_sdk(run: Callable[..., Awaitable[Any]]) -> None:
    async def scenario() -> list[Any]:
        other_server = build_assistant_server()
        async with modern_client(other_server) as other:
            foreign = await first_round(other)  # sealed under the other server's own key
        async with modern_client(build_assistant_server()) as client:
            retry = {**await first_round(client), "inputResponses": CONFIRM}
            state = retry["requestState"]
            changed = state[:20] + ("B" if state[20] == "A" else "A") + state[21:]
            answers = [
                await send(client, {**retry, "requestState": changed}),
                await send(client, {**retry, "arguments": {"note_id": "ideas"}}),
                await send(client, {**retry, "name": "convert_length", "arguments": {"value": 1}}),
                await send(client, {**foreign, "inputResponses": CONFIRM}),
                await send(client, {**retry, "requestState": "not a sealed state"}),
            ]
            return [*answers, await notes_of(client)]

    *answers, notes = run(scenario)
    assert answers == [INVALID] * 5
    assert notes == '["groceries","ideas","todo"]'  # nothing was deleted


@pytest.mark.parametrize("late", [False, True], ids=["in-time", "expired"])
def test_a_state_lapses_after_state_ttl(
    late: bool, run: Callable[..., Awaitable[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> Any:
        async with modern_client(build_assistant_server()) as client:
            retry = {**await first_round(client), "inputResponses": CONFIRM}
            shift = STATE_TTL + 1 if late else STATE_TTL - 5
            clock = SimpleNamespace(time=lambda: time.time() + shift)  # the SDK's clock only
            monkeypatch.setattr(request_state, "time", clock)
            return await send(client, retry)

    expected = INVALID if late else (False, "Deleted the note 'todo'.")
    assert run(scenario) == expected
    assert STATE_TTL < 600  # shorter than the SDK's default


def test_replay_is_refused_over_stateless_http(run: Callable[..., Awaitable[Any]]) -> None:
    async def scenario() -> list[Any]:
        server = build_assistant_server()
        async with serve_http("streamable-http", server=server, stateless=True) as url, modern_client(url) as client:
            retry = {**await first_round(client), "inputResponses": CONFIRM}
            return [await send(client, retry), await send(client, retry)]

    assert run(scenario) == [(False, "Deleted the note 'todo'."), (True, STATE_USED)]


@pytest.mark.parametrize("stateless", [False, True], ids=["sessions", "stateless"])
def test_missing_capability_is_32021_with_status_400_over_http(
    stateless: bool, run: Callable[..., Awaitable[Any]]
) -> None:
    async def scenario() -> tuple[Any, list[Any]]:
        async with serve_http("streamable-http", server=build_assistant_server(), stateless=stateless) as url:
            capture = CaptureTransport(url)
            async with teaching_client(capture) as client:  # no handler: no capability declared
                try:
                    await client.call_tool("list_client_roots", {})
                except MCPError as error:
                    refused = (error.error.code, error.error.data)
        return refused, [(exchange.method, exchange.status) for exchange in capture.capture.http]

    refused, exchanges = run(scenario)
    assert refused == (-32021, {"requiredCapabilities": {"roots": {}}})
    assert exchanges[-1] == ("POST", 400)
