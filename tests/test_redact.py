"""Credentials are replaced by [REDACTED] in text, headers and JSON; everything else is left alone."""

from __future__ import annotations

import pytest

from mcp_teach.wire.redact import REDACTED, SECRET_HEADERS, redact_headers, redact_json, redact_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-abcdefghijklmnop1234 end", f"key {REDACTED} end"),
        ("sk-proj-AbCdEfGhIjKlMnOpQrStUv", REDACTED),
        ("sk-ant-api03-abcdefghijklmnopqrst", REDACTED),
        ('{"a":"sk-test-0123456789abcdefXYZ"}', f'{{"a":"{REDACTED}"}}'),
        ("Authorization: Bearer eyJhbGciOi.J9.x-y_z", f"Authorization: Bearer {REDACTED}"),
        ("two: sk-1111111111111111, sk-2222222222222222", f"two: {REDACTED}, {REDACTED}"),
    ],
)
def test_key_like_strings_are_redacted(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "sk-short",  # too short to be a key
        "Bearer short",  # too short to be a token
        "risk-assessment-for-production",  # 'sk-' inside a word is not a key
        "disk-usage-monitor-0123456789",
        "3 + 4 = 7.0",
        "calculator_add",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert redact_text(text) == text


def test_headers_are_lowercased_and_secret_ones_hidden():
    headers = {
        "Authorization": "Bearer tok",
        "Proxy-Authorization": "Basic dXNlcjpwYXNz",
        "Cookie": "session=1",
        "Set-Cookie": "id=2",
        "X-API-Key": "anything",
        "api-key": "anything",
        "Content-Type": "application/json",
        "X-Note": "uses sk-abcdefghijklmnopqrst",
    }
    assert redact_headers(headers) == {
        "authorization": f"Bearer {REDACTED}",  # the scheme teaches something; the credentials never show
        "proxy-authorization": f"Basic {REDACTED}",
        "cookie": REDACTED,
        "set-cookie": REDACTED,
        "x-api-key": REDACTED,
        "api-key": REDACTED,
        "content-type": "application/json",
        "x-note": f"uses {REDACTED}",
    }
    assert {"authorization", "cookie", "x-api-key"} <= SECRET_HEADERS


@pytest.mark.parametrize("value", ["raw-token-without-a-scheme", "Bearer", "secret with spaces", " Bearer x"])
def test_an_authorization_value_without_a_clear_scheme_is_hidden_whole(value):
    assert redact_headers({"Authorization": value}) == {"authorization": REDACTED}


def test_json_is_redacted_at_any_depth_keeping_order_and_types():
    value = {
        "z": "sk-abcdefghijklmnopqrst",
        "a": [1, 2.5, None, True, {"deep": ["Bearer abcdefghijkl", "plain"]}],
        "m": {"n": 3},
    }
    redacted = redact_json(value)
    assert redacted == {
        "z": REDACTED,
        "a": [1, 2.5, None, True, {"deep": [f"Bearer {REDACTED}", "plain"]}],
        "m": {"n": 3},
    }
    assert list(redacted) == ["z", "a", "m"]
    assert value["z"] == "sk-abcdefghijklmnopqrst"  # the input is not modified


@pytest.mark.parametrize("value", [0, 1.5, None, False, "hello", [], {}])
def test_clean_json_values_come_back_equal(value):
    assert redact_json(value) == value
