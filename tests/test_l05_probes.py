"""mcp_teach.lessons.l05_probes: requests that break one rule each, and what the calculator answers."""

from __future__ import annotations

from mcp_teach.lessons.l05_probes import Probe, answer, probe_table
from mcp_teach.transports.in_process import serve_http
from mcp_teach.wire.modern_post import modern_post

ADD = modern_post("tools/call", {"name": "calculator_add", "arguments": {"a": 1, "b": 2}})


def test_probe_table_of_the_rules_the_lesson_tries(run):
    async def probe():
        async with serve_http("streamable-http") as url:
            return await probe_table(
                url,
                [
                    Probe("as sent", ADD),
                    Probe("other name", ADD, {"mcp-name": "calculator_divide"}),
                    Probe("unknown method", modern_post("calculator/sing")),
                    Probe("foreign origin", ADD, {"origin": "http://evil.example"}),
                    Probe("foreign host", ADD, {"host": "evil.example"}),
                    Probe("get", ADD, method="GET"),
                    Probe("session id", ADD, {"mcp-session-id": "0" * 32}),
                ],
            )

    rows = [line.split("  ") for line in repr(run(probe)).splitlines()[2:]]
    cells = [[part.strip() for part in row if part.strip()] for row in rows]
    assert [row[-2:] for row in cells] == [
        ["200 OK", "result (complete)"],
        ["400 Bad Request", "error -32020: mcp-name header does not match the request body's 'name…"],
        ["404 Not Found", "error -32601: Method not found"],
        ["403 Forbidden", "Forbidden Origin"],
        ["421 Misdirected Request", "Misdirected Request"],
        ["405 Method Not Allowed", "(empty body)"],
        ["200 OK", "result (complete)"],
    ]
    assert cells[0][2] == "nothing" and cells[5][2] == "HTTP GET, no body"


def test_changed_says_what_differs():
    assert Probe("x", ADD, {"mcp-name": None, "origin": "o"}).changed() == "no mcp-name; origin: o"


def test_answer_reads_errors_results_and_plain_bodies():
    assert (
        answer(400, "application/json", '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}') == "error -1: m"
    )
    assert answer(200, "application/json", '{"jsonrpc":"2.0","id":1,"result":{}}') == "result"
    assert answer(403, "text/plain", "Forbidden Origin") == "Forbidden Origin"
    assert answer(202, "", "") == "(empty body)"
    assert answer(200, "text/plain", "x" * 100, width=10) == "x" * 9 + "…"
