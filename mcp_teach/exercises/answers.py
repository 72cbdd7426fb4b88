"""Reading a student's answers from inside a check: run their async code, find their capture and what it holds."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

from mcp_teach.course.conformance import quiet_server_logs
from mcp_teach.exercises.check import Checker
from mcp_teach.wire.messages import Capture, as_capture

T = TypeVar("T")

#: The header that names a streamable HTTP session (2025-11-25, basic/transports, Session Management).
SESSION_HEADER = "mcp-session-id"
#: Longest a check waits for the student's code: a handler that never returns ends in feedback, not a hang.
CHECK_SECONDS = 60.0


class CheckTimedOut(TimeoutError):
    """The student's code was still running when the check's time was up."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"still running after {seconds:g} s")
        self.seconds = seconds


def run_sync(coroutine: Coroutine[Any, Any, T], timeout: float | None = CHECK_SECONDS) -> T:
    """Run ``coroutine`` to its end in a fresh event loop of a worker thread, and return its result.

    A check function is called synchronously while a lesson cell runs inside the kernel's event loop, which
    cannot be entered again (and must not wait on itself); a loop of its own in another thread can run the client.
    After ``timeout`` seconds it is cancelled and :class:`CheckTimedOut` raised (the catalogue makes it feedback).
    """
    with quiet_server_logs(), concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="check") as pool:
        return pool.submit(asyncio.run, _then_settle(coroutine, timeout)).result()


async def _then_settle(coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
    """``await coroutine`` (for at most ``timeout`` seconds), then cancel what it left running until nothing is left.

    ``asyncio.run`` cancels the tasks it finds once; a task that a cancelled one starts on its way out (an SSE
    response starting sse-starlette's shutdown watcher) would be destroyed pending, which logs an error into the
    lesson. Rounds of cancelling inside the loop catch those too.
    """
    try:
        async with asyncio.timeout(timeout):
            return await coroutine
    except TimeoutError:
        raise CheckTimedOut(timeout or 0) from None
    finally:
        this = asyncio.current_task()
        for _ in range(5):
            left = [task for task in asyncio.all_tasks() if task is not this]
            if not left:
                break
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)


def captured(source: Any) -> Capture | None:
    """The :class:`Capture` of a ``CaptureTransport`` (or the capture itself); None for anything else."""
    return as_capture(source) if isinstance(getattr(source, "capture", source), Capture) else None


def capture_answer(check: Checker, value: Any, name: str, hint: str) -> Capture:
    """The :class:`Capture` the answer ``name`` holds; a failed check (expected a ``CaptureTransport``) if none."""
    capture = captured(value)
    check.true(capture is not None, name, expected="a CaptureTransport", found=type(value).__name__, hint=hint)
    assert capture is not None
    return capture


def made_capture(check: Checker, value: Any, name: str, made_by: str) -> Capture:
    """The ``.capture`` of the object ``made_by`` gave the student; a failed check if ``value`` has none."""
    capture = getattr(value, "capture", None)
    check.true(
        isinstance(capture, Capture),
        name,
        expected=f"the object {made_by} gave you (it records every message in .capture)",
        found=value,
        hint=f"store the object itself in {name}, not one of its messages or replies",
    )
    return capture


def result_text(result: Any, separator: str = " ") -> str:
    """The text blocks of a tool result (an SDK object or its wire dict), joined: what a model reads of it."""
    blocks = result.get("content", []) if isinstance(result, dict) else result.content
    return separator.join(
        block.get("text", "") if isinstance(block, dict) else getattr(block, "text", "") for block in blocks
    )


def replies(capture: Capture, method: str) -> list[dict[str, Any] | None]:
    """The reply to every ``method`` request in ``capture``, in order (None where none came)."""
    answered = [capture.response_to(request) for request in capture.requests(method)]
    return [reply.message if reply is not None else None for reply in answered]


def results(capture: Capture, method: str) -> list[dict[str, Any]]:
    """The ``result`` of every successful reply to a ``method`` request in ``capture``, in order."""
    return [reply["result"] for reply in replies(capture, method) if reply is not None and "result" in reply]


def listed_tools(capture: Capture) -> list[dict[str, Any]]:
    """Every tool dict of every ``tools/list`` result in ``capture``, in order."""
    return [tool for result in results(capture, "tools/list") for tool in result.get("tools", [])]
