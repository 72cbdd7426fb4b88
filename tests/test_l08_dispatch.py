"""mcp_teach.lessons.l08_dispatch: the method -> request type -> params type -> handler table, read from the server."""

from __future__ import annotations

from mcp.server.lowlevel import Server

from mcp_teach.lessons.l08_dispatch import dispatch_table, trace_dispatch
from mcp_teach.servers.lowlevel_calculator import build_lowlevel_calculator

CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "calculator_add", "arguments": {"a": 1}}}


def test_the_table_is_read_from_the_server_object() -> None:
    table = dispatch_table(build_lowlevel_calculator())
    assert table.methods() == ["initialize", "ping", "server/discover", "tools/list", "tools/call"]
    call = table.route("tools/call")
    assert call.handler == "lowlevel_calculator.call_tool"
    assert call.params_type == "mcp_types.CallToolRequestParams"
    assert call.request_types == {
        "2025-11-25": "v2025_11_25.CallToolRequest",
        "2026-07-28": "v2026_07_28.CallToolRequest",
    }
    assert table.route("server/discover").request_types["2025-11-25"] is None
    assert "lowlevel_calculator.list_tools" in repr(table)


def test_a_server_with_other_handlers_gives_another_table() -> None:
    async def list_prompts(ctx, params):  # pragma: no cover - only registered
        raise NotImplementedError

    table = dispatch_table(Server("other", on_list_prompts=list_prompts))
    assert "prompts/list" in table.methods() and "tools/call" not in table.methods()


def test_trace_reaches_the_handler_or_names_the_refusal() -> None:
    server = build_lowlevel_calculator()
    reached = trace_dispatch(server, CALL, "2025-11-25")
    assert reached.error is None and reached.steps[-1] == (
        "handler",
        "await lowlevel_calculator.call_tool(ctx, params)",
    )
    no_meta = trace_dispatch(server, CALL, "2026-07-28")  # 2026-07-28 requests must carry _meta
    assert no_meta.error == {"code": -32602, "message": "Invalid request parameters"}
    assert "params._meta" in no_meta.steps[-1][1]
    missing = trace_dispatch(server, {"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}, "2025-11-25")
    assert missing.error["code"] == -32601 and "no handler" in missing.steps[-1][1]
    assert trace_dispatch(server, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "2026-07-28").error["code"] == -32601
