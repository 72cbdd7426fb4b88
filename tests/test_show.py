"""How captures are shown: numbering, pairing, folding, and the HTML/plain-text twins."""

import asyncio
import json

import pytest
from support import legacy_session

from mcp_teach.display import show as show_module
from mcp_teach.display.show import FOLDED_WIDTH, abbreviate, pretty_json, show, summary, table
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import CLIENT_TO_SERVER, SERVER_TO_CLIENT, WireMessage


@pytest.fixture(scope="module")
def legacy_capture() -> CaptureTransport:
    """A real in-memory session: handshake, tools/list, one successful and one failing call."""
    return asyncio.run(legacy_session())


def test_text_numbers_every_message_with_direction_and_pairing(legacy_capture):
    text = show(legacy_capture).text()
    assert text.startswith("#1 client → server  initialize  (request id=1)")
    assert "#2 server → client  result of #1 initialize  (response id=1)" in text
    assert "#3 client → server  notifications/initialized  (notification)" in text
    assert "#9 server → client  result of #8 tools/call  (response id=4)" in text
    assert text.count("\n#") == len(legacy_capture.capture) - 1


def test_text_body_is_the_message_as_indented_json(legacy_capture):
    text = show(legacy_capture.capture[0], expand=True).text()
    body = "\n".join(line[4:] for line in text.splitlines()[1:])
    assert json.loads(body) == legacy_capture.capture[0].message


def test_methods_filter_keeps_requests_and_their_responses_with_original_numbers(legacy_capture):
    text = show(legacy_capture, methods=["tools/call"]).text()
    headlines = [line for line in text.splitlines() if line.startswith("#")]
    assert [h.split()[0] for h in headlines] == ["#6", "#7", "#8", "#9"]
    assert "initialize" not in text


def test_fold_and_max_items_abbreviate_without_losing_the_rest(legacy_capture):
    text = show(
        legacy_capture, expand=True, methods=["tools/list"], fold=["result.tools.*.inputSchema"], max_items=1
    ).text()
    assert '"inputSchema": {… 3 keys}' in text or '"inputSchema": {… 4 keys}' in text
    assert "… 3 more" in text
    assert '"name": "calculator_add"' in text
    assert "calculator_subtract" not in text


def test_abbreviate_does_not_change_its_input():
    value = {"result": {"tools": [{"a": {"x": 1}}, {"a": {"y": 2}}]}}
    before = json.dumps(value)
    folded = abbreviate(value, fold=["result.tools.*.a"], max_items=1)
    assert json.dumps(value) == before
    assert pretty_json(folded).count("{… 1 key}") == 1
    assert "… 1 more" in pretty_json(folded)


def test_html_highlights_and_marks_tool_errors_red(legacy_capture):
    html = show(legacy_capture, expand=True)._repr_html_()
    assert html.count("<details open") == len(legacy_capture.capture)
    assert "#cf222e" in html  # the isError result
    assert "#1f6feb" in html and "#1a7f37" in html  # both directions
    assert "<span" in html  # pygments highlighting


def test_summary_classifies_every_message(legacy_capture):
    text = repr(summary(legacy_capture))
    lines = text.splitlines()
    assert len(lines) == 2 + len(legacy_capture.capture)
    assert "notification  notifications/initialized" in text
    assert "#1 initialize" in lines[3]


def test_table_aligns_text_and_escapes_html():
    shown = table(["a", "b"], [["<x>", 1], ["long value", 22]])
    assert repr(shown).splitlines()[0] == "a           b"
    assert "&lt;x&gt;" in shown._repr_html_()


def test_empty_capture_says_so():
    assert show([]).text() == "(no messages)"


def test_an_error_with_id_null_says_it_answers_no_known_request():
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: not valid JSON"}}
    text = show([WireMessage(SERVER_TO_CLIENT, error, 0.0)], expand=True).text()
    assert text.startswith(
        "#1 server → client  error with id null — the server could not tell which request it answers"
    )


def test_every_message_is_one_line_unless_the_text_expands_it(legacy_capture):
    """Folded by default: one line each, as wide as a lesson allows; the HTML folds the same messages."""
    view = show(legacy_capture)
    lines = view.text().splitlines()
    assert len(lines) == len(legacy_capture.capture)
    assert all(len(line) <= FOLDED_WIDTH for line in lines)
    assert lines[5].startswith('#6 client → server  tools/call  (request id=3)  {"name":"calculator_add"')
    assert lines[2] == "#3 client → server  notifications/initialized  (notification)"  # nothing to preview
    html = view._repr_html_()
    assert html.count("<details ") == len(lines) and "<details open" not in html
    assert "client asks the server to run one tool" in html  # the note is one click away


def test_expand_takes_numbers_and_methods_and_a_method_brings_its_responses(legacy_capture):
    text = show(legacy_capture, expand=[1, "tools/call"]).text()
    expanded = [line.split()[0] for line in text.splitlines() if line.startswith("#") and "{" not in line]
    assert expanded == ["#1", "#3", "#4", "#6", "#7", "#8", "#9"]  # #3 and #4 have no content to preview
    assert text.count('"jsonrpc": "2.0"') == 5
    assert show(legacy_capture, expand="initialize").text().count('"jsonrpc": "2.0"') == 2
    assert show(legacy_capture, expand=2).text().count('"jsonrpc": "2.0"') == 1


def test_the_envelope_prints_in_full_once_a_lesson_then_folded():
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "progressToken": 1,
            }
        },
    }
    message = [WireMessage(CLIENT_TO_SERVER, request, 0.0)]
    seen = dict(show_module._EnvelopeSeen.values)
    try:
        show_module._EnvelopeSeen.values.clear()
        assert show(message).text().count("2026-07-28") == 0  # folded messages do not count as shown
        first = show(message, expand=True).text()
        again = show(message, expand=True).text()
        forced = show(message, expand=True, envelope=True).text()
        answer = {"jsonrpc": "2.0", "id": 1, "result": {"_meta": {"io.modelcontextprotocol/serverInfo": {}}}}
        new_key = show([WireMessage(SERVER_TO_CLIENT, answer, 0.0)], expand=True).text()
    finally:
        show_module._EnvelopeSeen.values.clear()
        show_module._EnvelopeSeen.values.update(seen)
    assert '"io.modelcontextprotocol/protocolVersion": "2026-07-28"' in first
    assert "2026-07-28" not in again
    assert '"io.modelcontextprotocol/…": (as shown before: protocolVersion, clientCapabilities)' in again
    assert '"progressToken": 1' in again  # what is not the envelope stays
    assert forced == first
    assert '"io.modelcontextprotocol/serverInfo": {}' in new_key  # a key not shown before is shown
    assert request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"  # input untouched


def test_a_message_in_full_reads_as_a_person_would_lay_it_out():
    """Short lists and objects stay on one line, plain members share one; it is still the same JSON."""
    message = {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"tools": [{"name": "add", "inputSchema": {"type": "object", "required": ["a", "b"]}}] * 3},
    }
    text = pretty_json(abbreviate(message, max_items=1))
    assert text.splitlines()[1] == '  "jsonrpc": "2.0", "id": 2,'
    assert '"required": ["a", "b"]' in text  # a short list of plain values is never cut
    assert "… 2 more" in text
    assert json.loads(pretty_json(message)) == message
    assert max(len(line) for line in pretty_json(message).splitlines()) <= 100
