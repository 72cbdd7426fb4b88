"""Property-based fuzzing of tool arguments and raw JSON-RPC frames, on every transport.

Each transport keeps one server for the whole module. The properties:

- any arguments to a calculator tool give a *result*: ``isError`` with a
  course message, or a finite number equal to Python's own computation — and a
  call with two plain finite numbers never fails;
- any frame (bytes, JSON, message-shaped objects) gives only well-formed
  JSON-RPC replies with a standard error code, or nothing, and a normal call
  right after it still succeeds.

Bounded and derandomized, so CI runs the same examples every time.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from raw_peers import ALLOWED_ERROR_CODES, PEERS, Peer, open_peer

from mcp_teach.wire.raw_requests import envelope_meta

FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
OPERATIONS = {
    "calculator_add": operator.add,
    "calculator_subtract": operator.sub,
    "calculator_multiply": operator.mul,
    "calculator_divide": operator.truediv,
}
#: How every calculator tool error begins (mcp_teach.servers.calculator): a sentence a student or model can act on.
TOOL_ERROR_STARTS = ("Invalid arguments for calculator_", "The operands of", "The result of", "Cannot divide by zero")
METHODS = [
    "tools/call",
    "tools/list",
    "ping",
    "server/discover",
    "initialize",
    "notifications/initialized",
    "notifications/cancelled",
    "resources/list",
    "prompts/list",
    "logging/setLevel",
    "completion/complete",
]
ids = itertools.count(1)

# --- strategies ----------------------------------------------------------------------------------------------------

big_integers = st.integers(min_value=-(10**600), max_value=10**600)  # beyond float range; json.dumps-able
numbers = st.floats() | st.integers() | big_integers  # floats include huge, tiny, inf and NaN (sent as Infinity, NaN)
scalars = st.none() | st.booleans() | numbers | st.text(max_size=12)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
numeric_strings = st.from_regex(r"\A\s?[+-]?(\d{1,6}(\.\d{0,3})?|\.\d{1,3})([eE][+-]?\d{1,3})?\s?\Z")


def with_extra_keys(known: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    """``known`` plus up to two random keys (which ``known`` overrides)."""
    return st.builds(
        lambda extra, known: {**extra, **known}, st.dictionaries(st.text(max_size=6), json_values, max_size=2), known
    )


arguments = st.one_of(
    st.fixed_dictionaries({"a": numbers, "b": numbers}),  # what a model sends: must compute or explain
    st.fixed_dictionaries({"a": numbers | numeric_strings | json_values, "b": numbers | numeric_strings}),
    with_extra_keys(st.fixed_dictionaries({}, optional={"a": numbers | json_values, "b": numbers | json_values})),
)
request_ids = st.integers() | st.text(max_size=8)
#: ``params._meta``: the 2026-07-28 envelope (a 2026 server refuses requests without it; a 2025-11-25 session
#: refuses requests with it), sometimes a broken one.
envelopes = st.sampled_from([True, True, True, False]).flatmap(
    lambda ok: st.just(envelope_meta()) if ok else json_values
)
params = st.fixed_dictionaries(
    {},
    optional={
        "_meta": envelopes,
        "name": st.sampled_from(sorted(OPERATIONS)) | st.text(max_size=12),
        "arguments": arguments | json_values,
        "protocolVersion": st.sampled_from(["2025-11-25", "2026-07-28"]) | json_values,
        "level": st.sampled_from(["debug", "error"]),
        "requestId": request_ids,
    },
)
requests = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": request_ids, "method": st.sampled_from(METHODS), "params": params}
)
notifications = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": st.sampled_from(METHODS), "params": params})
message_shaped = with_extra_keys(
    st.fixed_dictionaries(
        {},
        optional={
            "jsonrpc": st.just("2.0") | json_values,
            "id": request_ids | json_values,
            "method": st.sampled_from(METHODS) | st.text(max_size=12) | json_values,
            "params": params | json_values,
            "result": json_values,
            "error": json_values,
        },
    )
)
frames = st.one_of(
    st.binary(max_size=80),  # may hold newlines: several lines on stdio
    json_values.map(lambda value: json.dumps(value).encode()),
    (requests | notifications | message_shaped).map(lambda message: json.dumps(message).encode()),
    requests.map(lambda message: json.dumps(message, ensure_ascii=False).encode()),
    message_shaped.map(lambda message: json.dumps(message, indent=1).encode()),  # one body on HTTP, lines on stdio
)

# --- checks --------------------------------------------------------------------------------------------------------


def as_number(value: Any) -> float | None:
    """The float the server may read ``value`` as (pydantic's lax mode also reads booleans and numeric strings)."""
    try:
        return float(value) if isinstance(value, bool | int | float | str) else None
    except (OverflowError, ValueError):
        return None


def python_result(tool: str, arguments: dict[str, Any]) -> float | None:
    """What a correct calculator returns for plain JSON numbers ``a`` and ``b`` (and nothing else); None: an error."""
    if set(arguments) != {"a", "b"}:
        return None
    if not all(isinstance(arguments[key], int | float) and not isinstance(arguments[key], bool) for key in "ab"):
        return None
    a, b = as_number(arguments["a"]), as_number(arguments["b"])
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return None
    if tool == "calculator_divide" and b == 0:
        return None
    value = OPERATIONS[tool](a, b)
    return value if math.isfinite(value) else None


def check_message(message: dict[str, Any], sent_ids: set[str]) -> None:
    """A well-formed server message: a reply to something sent (or id null), or a server notification."""
    assert message.get("jsonrpc") == "2.0", message
    if "method" in message:
        assert "id" not in message and message["method"].startswith("notifications/"), message
        return
    assert ("result" in message) != ("error" in message), message
    assert message["id"] is None or json.dumps(message["id"]) in sent_ids, message
    if "error" in message:
        error = message["error"]
        assert error["code"] in ALLOWED_ERROR_CODES, message
        assert isinstance(error["message"], str) and error["message"], message


def ids_in(frame: bytes, split_lines: bool) -> set[str]:
    """The ``id`` of every JSON object in ``frame`` (per line on stdio), as JSON text."""
    found = set()
    for part in frame.split(b"\n") if split_lines else [frame]:
        try:
            value = json.loads(part)
        except ValueError:
            continue
        if isinstance(value, dict) and "id" in value:
            found.add(json.dumps(value["id"]))
    return found


def read_until(peer: Peer, id: str | int, sent_ids: set[str]) -> dict[str, Any]:
    """Read replies until the one to ``id``, checking (and counting, see ``--hypothesis-show-statistics``) every
    message on the way; returns that reply."""
    while (message := peer.next_message()).get("id") != id or "method" in message:
        check_message(message, sent_ids)
        event(f"error {message['error']['code']}" if "error" in message else "result or notification")
    return message


def normal_call_succeeds(peer: Peer, sent_ids: set[str]) -> None:
    id = f"check-{next(ids)}"
    peer.send_message(peer.request(id, "tools/call", {"name": "calculator_add", "arguments": {"a": 1, "b": 2}}))
    result = read_until(peer, id, sent_ids)["result"]
    assert result["isError"] is False and result["structuredContent"] == {"result": 3.0}, result


# --- tests ---------------------------------------------------------------------------------------------------------


@dataclass
class Target:
    """A peer and the ids sent to it so far (as JSON text): a reply may only carry one of those, or null."""

    peer: Peer
    sent_ids: set[str] = field(default_factory=set)


@pytest.fixture(scope="module", params=PEERS)
def target(request, tmp_path_factory, clean_env):
    """One server per transport for the whole module; whatever it still sends at the end must be well-formed."""
    with open_peer(request.param, workdir=tmp_path_factory.mktemp(request.param), env=clean_env()) as peer:
        target = Target(peer)
        yield target
    for message in peer.pending():
        assert isinstance(message, dict), message
        check_message(message, target.sent_ids)


@FUZZ
@given(tool=st.sampled_from(sorted(OPERATIONS)), arguments=arguments)
def test_any_tool_arguments_give_a_result(target, tool, arguments):
    id = next(ids)
    target.sent_ids.add(json.dumps(id))
    target.peer.send_message(target.peer.request(id, "tools/call", {"name": tool, "arguments": arguments}))
    result = read_until(target.peer, id, target.sent_ids)["result"]
    expected = python_result(tool, arguments)
    event("isError" if result["isError"] else "a number")
    if result["isError"]:
        text = result["content"][0]["text"]
        assert text.startswith(TOOL_ERROR_STARTS) and len(text) < 1000, text
        assert expected is None, f"{tool}({arguments}) should give {expected}, got: {text}"
    else:
        value = result["structuredContent"]["result"]
        assert math.isfinite(value)
        assert set(arguments) == {"a", "b"}
        assert value == OPERATIONS[tool](as_number(arguments["a"]), as_number(arguments["b"]))


@FUZZ
@given(frame=frames)
def test_any_frame_gets_a_well_formed_answer_and_the_server_keeps_serving(target, frame):
    target.sent_ids |= ids_in(frame, split_lines=target.peer.name == "stdio")
    status = target.peer.send(frame)
    assert status is None or status < 500, status
    event(f"HTTP {status}")
    normal_call_succeeds(target.peer, target.sent_ids)
