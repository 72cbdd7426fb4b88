"""Inside one ``tools/call`` (lesson 06): its building blocks timed one by one, and its steps counted.

Times are in milliseconds (``time.perf_counter_ns``); the counts are per call.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import mcp_types

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l06_calls import CALL_ARGUMENTS, CALL_TOOL, time_calls, warm_up
from mcp_teach.servers.calculator import build_calculator_server, calculator_add
from mcp_teach.wire.capture import CaptureTransport


async def measure_pieces(repeat: int = 1000) -> dict[str, list[float]]:
    """Milliseconds of each building block one ``tools/call`` goes through, timed on its own ``repeat`` times.

    The messages are the real request and result of ``calculator_add`` (captured
    in-memory first) and the schema is the tool's real output schema.
    """
    probe = CaptureTransport(build_calculator_server())
    async with teaching_client(probe) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        await client.call_tool(CALL_TOOL, CALL_ARGUMENTS)
    request = probe.capture.requests("tools/call")[0]
    response = probe.capture.response_to(request)
    request_line = json.dumps(request.message, separators=(",", ":"))
    parsed = mcp_types.jsonrpc_message_adapter.validate_json(request_line, by_name=False)
    validator = _validator(tools[CALL_TOOL].output_schema)
    structured = response.message["result"]["structuredContent"]
    arguments = (float(CALL_ARGUMENTS["a"]), float(CALL_ARGUMENTS["b"]))

    def timed(operation: Callable[[], Any]) -> list[float]:
        samples = []
        for _ in range(repeat):
            start = time.perf_counter_ns()
            operation()
            samples.append((time.perf_counter_ns() - start) / 1e6)
        return samples

    pieces = {
        "the tool function itself": timed(lambda: calculator_add(*arguments)),
        "json: parse + write the request line": timed(lambda: json.dumps(json.loads(request_line))),
        "pydantic: JSON line → JSON-RPC message": timed(
            lambda: mcp_types.jsonrpc_message_adapter.validate_json(request_line, by_name=False)
        ),
        "pydantic: JSON-RPC message → JSON line": timed(
            lambda: parsed.model_dump_json(by_alias=True, exclude_unset=True)
        ),
        "jsonschema: check the result's structuredContent": timed(lambda: list(validator.iter_errors(structured))),
    }
    pieces["asyncio: a message to another task and back"] = await _time_task_hops(repeat)
    pieces["a worker thread runs the (sync) tool"] = await _time_thread_hops(repeat, arguments)
    return pieces


#: What :func:`count_steps` counts, by the name of the profiled function.
_STEP_NAMES: dict[str, tuple[str, ...]] = {
    "event-loop turns": ("_run_once",),
    "pydantic validations": ("'validate_python' of", "'validate_json' of", "'validate_strings' of"),
    "pydantic serialisations": ("'to_python' of", "'to_json' of"),
}


async def count_steps(calls: int = 100) -> dict[str, float]:
    """Per in-memory ``tools/call``: Python function calls, event-loop turns, pydantic validations and serialisations.

    Counted with ``cProfile`` in this thread (client and in-memory server both run
    here; the tool itself runs in a worker thread and is not counted). cProfile
    counts every resumption of a coroutine as a call, hence "function calls and
    coroutine steps". Counts, not times: they depend on the library versions, not the machine.
    """
    async with teaching_client(build_calculator_server()) as client:
        await warm_up(client, 20)
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            await time_calls(client, calls)
        finally:
            profiler.disable()
    stats = pstats.Stats(profiler)
    counts = {"Python function calls and coroutine steps": stats.total_calls / calls}
    for label, names in _STEP_NAMES.items():
        found = sum(
            entry[1]
            for (_, _, function), entry in stats.stats.items()  # type: ignore[attr-defined]
            if any(function == name or function.startswith(f"<method {name}") for name in names)
        )
        counts[label] = found / calls
    return counts


def _validator(schema: dict[str, Any]) -> Any:
    """A compiled jsonschema validator, as the MCP client session keeps one per tool."""
    from jsonschema.validators import validator_for

    return validator_for(schema)(schema)


async def _time_task_hops(repeat: int) -> list[float]:
    """Round trips through two anyio memory streams to an echo task: what each internal hop of a call costs."""
    to_echo, echo_inbox = anyio.create_memory_object_stream[Any](1)
    echo_outbox, from_echo = anyio.create_memory_object_stream[Any](1)

    async def echo() -> None:
        async with echo_inbox, echo_outbox:
            async for item in echo_inbox:
                await echo_outbox.send(item)

    samples = []
    async with anyio.create_task_group() as group:
        group.start_soon(echo)
        async with to_echo, from_echo:
            for _ in range(repeat):
                start = time.perf_counter_ns()
                await to_echo.send("ping")
                await from_echo.receive()
                samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


async def _time_thread_hops(repeat: int, arguments: tuple[float, float]) -> list[float]:
    """fastmcp runs a plain ``def`` tool in a worker thread: the hand-over there and back, timed."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        await anyio.to_thread.run_sync(calculator_add, *arguments)
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples
