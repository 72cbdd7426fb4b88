"""Credentials are replaced by [REDACTED] in text, headers and JSON; everything else is left alone."""

from __future__ import annotations

import json

import pytest

from mcp_teach.wire.redact import (
    REDACTED,
    is_credential_header,
    oauth_placeholder,
    redact_argv,
    redact_body,
    redact_headers,
    redact_json,
    redact_text,
    redact_url,
)


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
    assert all(map(is_credential_header, ["authorization", "cookie", "x-api-key", "x-auth-token", "x-api-token"]))


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


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("authorization", True),
        ("proxy-authorization", True),
        ("cookie", True),
        ("set-cookie", True),
        ("x-api-key", True),
        ("x-auth-token", True),
        ("x-api-token", True),
        ("x-amz-security-token", True),
        ("x-authtoken", True),
        ("mcp-session-id", False),  # a session id teaches, and the server checks it is bound to a user
        ("mcp-protocol-version", False),
        ("www-authenticate", False),  # a challenge names where to authorize; it holds no credential
        ("access-control-allow-credentials", False),
        ("x-ratelimit-remaining-tokens", False),
        ("content-type", False),
    ],
)
def test_credential_header_names(name, credential):
    assert is_credential_header(name) is credential


def test_oauth_values_are_hidden_in_urls_forms_json_and_event_streams_keeping_what_teaches():
    form = "grant_type=authorization_code&code=c0de&code_verifier=v3r&code_challenge=ch&state=s&client_id=id"
    assert redact_body(form, "application/x-www-form-urlencoded") == (
        f"grant_type=authorization_code&code={REDACTED}&code_verifier={REDACTED}&code_challenge=ch&state=s&client_id=id"
    )
    location = "http://127.0.0.1:3000/callback?code=c0de&state=s#access_token=at&token_type=bearer"
    assert redact_headers({"Location": location})["location"] == (
        f"http://127.0.0.1:3000/callback?code={REDACTED}&state=s#access_token={REDACTED}&token_type=bearer"
    )
    token = '{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","scope":"a"}'
    assert json.loads(redact_body(f"data: {token}", "text/event-stream")[6:]) == {
        "access_token": REDACTED,
        "token_type": "Bearer",
        "expires_in": 3600,
        "refresh_token": REDACTED,
        "scope": "a",
    }
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}}
    assert redact_json(error) == error and redact_body(json.dumps(error), "application/json") == json.dumps(error)
    challenge = 'Bearer error="invalid_token", resource_metadata="http://127.0.0.1:1/.well-known/x"'
    assert redact_headers({"WWW-Authenticate": challenge}) == {"www-authenticate": challenge}


def test_lesson_12_placeholders_come_from_the_same_rules():
    assert redact_url("/cb?code=c0de&state=s", mask=oauth_placeholder) == "/cb?code=<code>&state=s"
    assert redact_json({"refreshToken": "rt"}, mask=oauth_placeholder) == {"refreshToken": "<refreshToken>"}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["srv", "--api-key", "v", "--port", "8"], ["srv", "--api-key", REDACTED, "--port", "8"]),
        (["srv", "--token=v", "--password", "v"], ["srv", f"--token={REDACTED}", "--password", REDACTED]),
        (["srv", "--auth", "--verbose"], ["srv", "--auth", "--verbose"]),  # a flag without a value
        (["srv", "--max-tokens", "100", "-p", "8"], ["srv", "--max-tokens", "100", "-p", "8"]),
        (["env", "GITHUB_TOKEN=v", "srv"], ["env", f"GITHUB_TOKEN={REDACTED}", "srv"]),
        (
            ["srv", "-k", "v", "--bearer", "v", "--pin", "1"],
            ["srv", "-k", REDACTED, "--bearer", REDACTED, "--pin", REDACTED],
        ),
        (["srv", "--pass", "v", "-", "--", "x"], ["srv", "--pass", REDACTED, "-", "--", "x"]),
    ],
)
def test_credential_arguments(argv, expected):
    assert redact_argv(argv) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("OPENAI_API_KEY=abc123 exit code=3", f"OPENAI_API_KEY={REDACTED} exit code=3"),
        ("max_tokens=100 token_type=Bearer", "max_tokens=100 token_type=Bearer"),
        ("x-auth-token: abc123", f"x-auth-token: {REDACTED}"),
        ("Authorization: Basic dXNlcjpwYXNz", f"Authorization: Basic {REDACTED}"),
        ("postgres://user:hunter2@db/x", f"postgres://{REDACTED}@db/x"),
        ("Basic arithmetic", "Basic arithmetic"),
        ("client_id: app\nclient_secret: 's 1'\n", f"client_id: app\nclient_secret: {REDACTED}\n"),  # YAML
        ("not a real key: the lesson wrote it", "not a real key: the lesson wrote it"),  # prose
        ("<a:Password x='1'>pw</a:Password>", f"<a:Password x='1'>{REDACTED}</a:Password>"),
        (
            '<input value="v" type="hidden" name="csrf_token">',
            f'<input value={REDACTED} type="hidden" name="csrf_token">',
        ),
    ],
)
def test_credentials_in_free_text_by_name(text, expected):
    assert redact_text(text) == expected


def test_json_members_are_judged_by_their_words_and_what_teaches_stays():
    value = {"sessionToken": "s", "private_key": "k", "pin": 1234, "progressToken": "p", "code": -32602, "ok": True}
    assert redact_json(value) == {**value, "sessionToken": REDACTED, "private_key": REDACTED, "pin": REDACTED}


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        ('{"access\\u005ftoken": "a\\/b"}', "application/json", f'{{"access_token": "{REDACTED}"}}'),
        ('{"a":1,"b":"c"}', "application/json", '{"a":1,"b":"c"}'),  # nothing hidden: left as written
        ("code=c0de", "text/plain", f"code={REDACTED}"),  # a form, whatever its type says
        ("exit code=3 at line 2", "text/plain", "exit code=3 at line 2"),
        (
            'event: message\r\ndata: {"token":\r\ndata: "t"}\r\n\r\n',
            "text/event-stream",
            f'event: message\ndata: {{"token": "{REDACTED}"}}\n\n',
        ),
        ('data: {"a": 1}\r\n\r\n', "text/event-stream", 'data: {"a": 1}\r\n\r\n'),
    ],
)
def test_a_body_is_parsed_before_its_text_is_searched(body, content_type, expected):
    assert redact_body(body, content_type) == expected
