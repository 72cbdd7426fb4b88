"""Attacks on a class server's ``requestState`` (2026-07-28), over real HTTP on 127.0.0.1 against ``mcp-teach serve``.

The SDK binds a sealed ``requestState`` to the authenticated person who received it, reading who that is from its
auth context; the class token middleware named the person in the request but did not set that context, so the
state was bound to nobody: ben could answer the question the assistant had asked ana, with ana's state.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types
from mcp.shared.exceptions import MCPError

from mcp_teach.client import teaching_client
from mcp_teach.servers.student_tokens import student_token

SECRET = "class-secret-Rk5Tz8Mq3Vn1"  # made up for these tests
ASSISTANT = [
    str(Path(sys.executable).with_name("mcp-teach")),
    *("serve", "--server", "assistant", "--transport", "streamable-http", "--port", "0"),
]
CONFIRM = {"confirm": {"action": "accept", "content": {"confirm": True}}}


async def _never_asked(*args: Any) -> Any:
    raise AssertionError("the test answers by hand: the client must not be asked")


async def _send(client: Any, params: dict[str, Any], answer: type) -> Any:
    """One hand-built ``tools/call``: its result, or the JSON-RPC error's ``(code, message)``."""
    request = mcp_types.Request[dict[str, Any], str](method="tools/call", params=params)
    try:
        return await client.session.send_request(request, answer)
    except MCPError as error:
        return error.error.code, error.error.message


def test_a_request_state_given_to_one_student_does_not_work_for_another(run, cli_server):
    server = cli_server(ASSISTANT, MCP_AUTH_TOKEN=SECRET)
    ana, ben = student_token(SECRET, "ana"), student_token(SECRET, "ben")
    ask = {"name": "delete_note", "arguments": {"note_id": "todo"}}

    async def scenario() -> tuple[Any, Any]:
        async with teaching_client(server.url, auth=ana, elicitation_handler=_never_asked) as anas:
            asked = await _send(anas, ask, mcp_types.InputRequiredResult)
        retry = {**ask, "requestState": asked.request_state, "inputResponses": CONFIRM}
        async with teaching_client(server.url, auth=ben, elicitation_handler=_never_asked) as bens:
            stolen = await _send(bens, retry, mcp_types.CallToolResult)
        async with teaching_client(server.url, auth=ana, elicitation_handler=_never_asked) as anas:
            own = await _send(anas, retry, mcp_types.CallToolResult)
        return stolen, own

    stolen, own = run(scenario)
    assert stolen == (-32602, "Invalid or expired requestState")  # was: "Deleted the note 'todo'."
    assert own.content[0].text == "Deleted the note 'todo'."
