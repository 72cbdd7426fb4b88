"""Resource subscriptions on the knowledge server (``add_errata``): a page a tool changes, watched in both eras.

Real servers, no mocks: fastmcp's client in memory and over streamable HTTP on 127.0.0.1. 2026-07-28 watches with
``subscriptions/listen`` (ack first, events stamped with the listen id, the client's ``notifications/cancelled``,
the server's graceful closing result); 2025-11-25 with ``resources/subscribe`` / ``resources/unsubscribe``.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from fastmcp import FastMCP
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY, ResourceUpdated
from support import HANG_TIMEOUT

from mcp_teach.client import teaching_client
from mcp_teach.servers.knowledge import ERRATA_URI, add_errata, build_knowledge_server
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.capture import CaptureTransport

REPORT = {"doc_id": "tools", "correction": "tools/list takes a cursor."}
UPDATED = "notifications/resources/updated"


def watched() -> tuple[FastMCP, Any]:
    server = build_knowledge_server()
    return server, add_errata(server)


def methods(capture: CaptureTransport) -> list[str]:
    return [m.message.get("method", "result") for m in capture.capture.messages]


async def subscribe(client: Any, uri: str, *, unsubscribe: bool = False) -> mcp_types.EmptyResult:
    """Build ``resources/subscribe`` (or ``unsubscribe``) by hand: mcp's ``subscribe_resource`` is deprecated."""
    if unsubscribe:
        request = mcp_types.UnsubscribeRequest(params=mcp_types.UnsubscribeRequestParams(uri=uri))
    else:
        request = mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=uri))
    return await client.session.send_request(request, mcp_types.EmptyResult)


def test_the_plain_knowledge_server_offers_no_subscriptions():
    async def main() -> dict[str, Any]:
        capture = CaptureTransport(build_knowledge_server())
        async with teaching_client(capture, mode="legacy") as client:
            names = [tool.name for tool in await client.list_tools()]
            with pytest.raises(MCPError) as refused:
                await subscribe(client, ERRATA_URI)
        return {"names": names, "code": refused.value.error.code, "opening": capture.capture.messages[1].message}

    seen = anyio.run(main)
    assert "report_erratum" not in seen["names"]
    assert seen["code"] == -32601
    assert seen["opening"]["result"]["capabilities"]["resources"]["subscribe"] is False


def test_modern_listen_acknowledges_then_stamps_the_update_and_the_client_cancels():
    async def main() -> dict[str, Any]:
        server, _ = watched()
        capture = CaptureTransport(server)
        async with teaching_client(capture) as client:
            async with listen(client.session, resource_subscriptions=[ERRATA_URI]) as stream:
                await client.call_tool("report_erratum", REPORT)
                with anyio.fail_after(HANG_TIMEOUT):
                    event = await stream.__anext__()
            page = await client.read_resource(ERRATA_URI)
        return {"event": event, "id": stream.subscription_id, "page": page[0].text, "capture": capture}

    seen = anyio.run(main)
    capture, stamp = seen["capture"], {SUBSCRIPTION_ID_META_KEY: seen["id"]}
    assert seen["event"] == ResourceUpdated(uri=ERRATA_URI)
    assert seen["page"] == "# Errata\n\n- tools: tools/list takes a cursor."
    messages = [m.message for m in capture.capture.messages]
    assert messages[1]["result"]["capabilities"]["resources"]["subscribe"] is True
    order = methods(capture)
    assert order.index("notifications/subscriptions/acknowledged") == order.index("subscriptions/listen") + 1
    ack = next(m for m in messages if m.get("method") == "notifications/subscriptions/acknowledged")
    assert ack["params"] == {"_meta": stamp, "notifications": {"resourceSubscriptions": [ERRATA_URI]}}
    updated = [m for m in messages if m.get("method") == UPDATED]
    assert updated == [{"jsonrpc": "2.0", "method": UPDATED, "params": {"_meta": stamp, "uri": ERRATA_URI}}]
    cancelled = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancelled] == [seen["id"]]
    assert capture.capture.response_to(capture.capture.requests("subscriptions/listen")[0]) is None


def test_modern_server_close_is_a_graceful_result_not_a_cancellation():
    async def main() -> dict[str, Any]:
        server, streams = watched()
        capture = CaptureTransport(server)
        async with teaching_client(capture) as client:
            wanted = [ERRATA_URI, "docs://nope"]
            async with listen(client.session, tools_list_changed=True, resource_subscriptions=wanted) as stream:
                streams.close()
                with anyio.fail_after(HANG_TIMEOUT):
                    after = [event async for event in stream]
        return {"honored": stream.honored, "after": after, "id": stream.subscription_id, "capture": capture}

    seen = anyio.run(main)
    capture = seen["capture"].capture
    # The SDK honours every kind it is asked for, a URI that names nothing and list changes it never sends.
    assert seen["honored"].tools_list_changed is True
    assert seen["honored"].resource_subscriptions == [ERRATA_URI, "docs://nope"]
    assert seen["after"] == []
    result = capture.response_to(capture.requests("subscriptions/listen")[0]).message["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"][SUBSCRIPTION_ID_META_KEY] == seen["id"]
    assert not [m for m in capture.messages if m.message.get("method") == "notifications/cancelled"]


def test_modern_connections_have_no_resources_subscribe():
    async def main() -> int:
        server, _ = watched()
        async with teaching_client(server) as client:
            with pytest.raises(MCPError) as refused:
                await subscribe(client, ERRATA_URI)
        return refused.value.error.code

    assert anyio.run(main) == -32601


def test_modern_listen_over_streamable_http_delivers_the_update():
    async def main() -> list[Any]:
        server, _ = watched()
        async with serve_http("streamable-http", server=server) as url, teaching_client(url) as client:
            async with listen(client.session, resource_subscriptions=[ERRATA_URI]) as stream:
                await client.call_tool("report_erratum", REPORT)
                with anyio.fail_after(HANG_TIMEOUT):
                    event = await stream.__anext__()
            unwatched = await client.call_tool("report_erratum", REPORT)
        return [event, unwatched.content[0].text]

    event, text = anyio.run(main)
    assert event == ResourceUpdated(uri=ERRATA_URI)
    assert text == f"Erratum 2 added to {ERRATA_URI}."


def test_legacy_subscribe_notifies_that_connection_until_it_unsubscribes():
    async def main() -> dict[str, Any]:
        server, _ = watched()
        heard: dict[str, list[Any]] = {"watcher": [], "other": []}

        def handler(name: str) -> Any:
            async def on_message(message: Any) -> None:
                heard[name].append(message)

            return on_message

        capture = CaptureTransport(server)
        async with (
            teaching_client(capture, mode="legacy", message_handler=handler("watcher")) as watcher,
            teaching_client(server, mode="legacy", message_handler=handler("other")) as other,
        ):
            answer = await subscribe(watcher, ERRATA_URI)
            await other.call_tool("report_erratum", REPORT)  # another client's change reaches the watcher
            await subscribe(watcher, ERRATA_URI, unsubscribe=True)
            await watcher.call_tool("report_erratum", REPORT)
        return {"answer": answer, "heard": heard, "capture": capture}

    seen = anyio.run(main)
    assert seen["answer"] == mcp_types.EmptyResult()
    watcher = [m for m in seen["heard"]["watcher"] if isinstance(m, mcp_types.ResourceUpdatedNotification)]
    assert [m.params.uri for m in watcher] == [ERRATA_URI]
    assert not [m for m in seen["heard"]["other"] if isinstance(m, mcp_types.ResourceUpdatedNotification)]
    messages = [m.message for m in seen["capture"].capture.messages]
    assert messages[1]["result"]["capabilities"]["resources"]["subscribe"] is True
    assert [m for m in messages if m.get("method") == UPDATED] == [
        {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": ERRATA_URI}}
    ]


def test_legacy_a_subscriber_that_left_does_not_break_the_tool():
    async def main() -> list[str]:
        server, _ = watched()
        async with teaching_client(server, mode="legacy") as gone:
            await subscribe(gone, ERRATA_URI)
        texts = []
        async with teaching_client(server, mode="legacy") as client:
            for _ in range(2):
                texts.append((await client.call_tool("report_erratum", REPORT)).content[0].text)
        return texts

    assert anyio.run(main) == [f"Erratum {n} added to {ERRATA_URI}." for n in (1, 2)]


def test_an_unknown_document_is_a_tool_error_and_changes_nothing():
    async def main() -> tuple[Any, str]:
        server, _ = watched()
        async with teaching_client(server) as client:
            failed = await client.call_tool(
                "report_erratum", {"doc_id": "nope", "correction": "x"}, raise_on_error=False
            )
            page = await client.read_resource(ERRATA_URI)
        return failed, page[0].text

    failed, page = anyio.run(main)
    assert failed.is_error and "Unknown document 'nope'" in failed.content[0].text
    assert page == "# Errata\n"
