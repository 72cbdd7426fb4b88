"""The capstone server's input_required fixtures, in memory and without the conformance suite.

The suite's client declares sampling, elicitation and roots on every request, so the suite never sees a fixture
that asks a client for what it did not declare (2026-07-28, basic/patterns/mrtr, Server Requirements 7). Here a
client that declared nothing must get -32021 (basic/index), never a request, from every fixture and from the
prompt; and the multi-round tool asks again for a missing answer (mrtr, Error Handling) instead of starting over.
"""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY

from mcp_teach.servers.capstone import build_capstone_server

#: The fixtures that ask the client, by the capabilities their questions need.
ASKING = {
    "test_input_required_result_elicitation": {"elicitation"},
    "test_input_required_result_request_state": {"elicitation"},
    "test_input_required_result_tampered_state": {"elicitation"},
    "test_input_required_result_sampling": {"sampling"},
    "test_input_required_result_list_roots": {"roots"},
    "test_input_required_result_multiple_inputs": {"elicitation", "sampling", "roots"},
    "test_input_required_result_multi_round": {"elicitation"},
    "test_sampling": {"sampling"},
    "test_streaming_elicitation": {"elicitation"},
    "test_elicitation": {"elicitation"},
    "test_elicitation_sep1034_defaults": {"elicitation"},
    "test_elicitation_sep1330_enums": {"elicitation"},
    "test_missing_capability": {"sampling"},
}
ARGUMENTS = {"test_sampling": {"prompt": "hi"}, "test_elicitation": {"message": "hi"}}


async def _never(*arguments: Any) -> Any:
    """A handler that only declares its capability: these calls never reach it."""
    raise AssertionError("the client was asked to answer")


def declaring_all(server: Any) -> Client:
    return Client(server, elicitation_handler=_never, sampling_handler=_never, roots=["file:///tmp"])


def asked(result: Any) -> set[str]:
    """The methods an InputRequiredResult asks the client for (none for any other result)."""
    if not isinstance(result, mcp_types.InputRequiredResult):
        return set()
    return {request.method for request in (result.input_requests or {}).values()}


@pytest.mark.parametrize("tool", sorted(ASKING))
def test_a_client_that_declared_nothing_gets_32021_naming_what_is_missing(run, tool: str) -> None:
    async def main() -> MCPError:
        async with Client(build_capstone_server()) as client:
            with pytest.raises(MCPError) as error:
                await client.session.call_tool(tool, ARGUMENTS.get(tool, {}), allow_input_required=True)
            return error.value

    error = run(main)
    assert error.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY, error.error
    assert set(error.error.data["requiredCapabilities"]) == ASKING[tool]


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
def test_no_fixture_asks_a_client_for_what_it_did_not_declare(run) -> None:
    async def main() -> dict[str, set[str]]:
        found = {}
        async with Client(build_capstone_server()) as client:
            for tool in await client.list_tools():
                if not tool.name.startswith("test_"):
                    continue  # the GitHub tool (lesson 14) asks nothing and would call GitHub
                try:
                    result = await client.session.call_tool(
                        tool.name, ARGUMENTS.get(tool.name, {}), allow_input_required=True
                    )
                except MCPError:
                    continue
                found[tool.name] = asked(result)
            with pytest.raises(MCPError) as error:
                await client.session.get_prompt("test_input_required_result_prompt", allow_input_required=True)
            assert error.value.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
        return found

    found = run(main)
    assert {name: methods for name, methods in found.items() if methods} == {}
    assert found["test_input_required_result_capabilities"] == set()  # it asks only what was declared: nothing


def test_a_client_that_declared_everything_gets_the_questions(run) -> None:
    async def main() -> dict[str, set[str]]:
        async with declaring_all(build_capstone_server()) as client:
            asks = {}
            for tool in sorted(ASKING):
                if tool != "test_missing_capability":
                    result = await client.session.call_tool(tool, ARGUMENTS.get(tool, {}), allow_input_required=True)
                    asks[tool] = {request.method.split("/")[0] for request in result.input_requests.values()}
            return asks

    assert run(main) == {tool: needs for tool, needs in ASKING.items() if tool != "test_missing_capability"}


def test_the_multi_round_tool_asks_again_for_a_missing_answer_and_starts_over_only_without_state(run) -> None:
    name = mcp_types.ElicitResult(action="accept", content={"name": "Alice"})
    color = mcp_types.ElicitResult(action="accept", content={"color": "blue"})

    async def main() -> list[Any]:
        async with declaring_all(build_capstone_server()) as client:

            async def call(answers: dict[str, Any] | None = None, state: str | None = None) -> Any:
                return await client.session.call_tool(
                    "test_input_required_result_multi_round",
                    {},
                    input_responses=answers,
                    request_state=state,
                    allow_input_required=True,
                )

            first = await call()
            second = await call({"step1": name}, first.request_state)
            again = await call({}, second.request_state)  # round 2 without step2: step2 again, the name kept
            done = await call({"step2": color}, again.request_state)
            restart = await call({"step2": color})  # no state: round 1
            return [first, second, again, done, restart]

    first, second, again, done, restart = run(main)
    assert list(first.input_requests) == ["step1"] and list(second.input_requests) == ["step2"]
    assert list(again.input_requests) == ["step2"]
    assert done.content[0].text == "Alice likes blue."
    assert list(restart.input_requests) == ["step1"]
