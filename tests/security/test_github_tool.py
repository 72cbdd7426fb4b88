"""Lesson 14's GitHub tool against an upstream that answers as no honest GitHub would.

``GITHUB_API_URL`` points the tool at a real HTTP server on 127.0.0.1 that sends one hostile answer: the token it
was sent echoed back, a body that is not a repository object, an absurd rate-limit reset, a body without end, an
owner's free text of any length. Each is asked through fastmcp's client of the course's tool (the reference) and of
the learner's, as lesson 14's solved cells write it into ``my-capstone/``; both must give the same answer, one a
model can act on, and never the token.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fastmcp import Client, FastMCP

from mcp_teach.lessons.l13_project import PACKAGE, write_from_lesson
from mcp_teach.servers.github_facts import TEXT_LIMIT, add_github_tool

ROOT = Path(__file__).resolve().parents[2]
LESSONS = [ROOT / "notebooks" / "solutions" / name for name in ("13_capstone.ipynb", "14_web_api_and_shipping.ipynb")]
TOKEN = "ghp_EchoedBackByAHostileUpstream0123456789"
ECHO = "{authorization}"  # the hostile upstream puts the Authorization header it received here
REPOSITORY = {"full_name": "octo/demo", "html_url": "https://github.com/octo/demo", "license": {"spdx_id": "MIT"}}
MIB = 1024 * 1024


class Upstream:
    """A loopback "GitHub" that answers every request with ``status``, ``headers`` and ``body`` (bytes, or JSON),
    ``{authorization}`` in any of them replaced by the request's Authorization header; without ``length`` no
    Content-Length is sent, and the body ends when the connection closes."""

    def __init__(self, status: int, headers: dict[str, str], body: Any, *, length: bool = True) -> None:
        self.answer = status, headers, body if isinstance(body, bytes) else json.dumps(body).encode(), length

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, headers, body, length = upstream.answer
                echo = self.headers.get("Authorization", "")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value.replace(ECHO, echo))
                body = body.replace(ECHO.encode(), echo.encode())
                if length:
                    self.send_header("Content-Length", str(len(body)))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the tool stopped reading
                    self.end_headers()
                    self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> Upstream:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02})
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@pytest.fixture(scope="module")
def learners_tool(tmp_path_factory) -> ModuleType:
    """The learner's ``server.py`` as the solved lessons write it, loaded under a name of its own."""
    folder = tmp_path_factory.mktemp("learner") / "my-capstone"
    write_from_lesson(LESSONS[1], folder, write_from_lesson(LESSONS[0], folder))
    spec = importlib.util.spec_from_file_location("learners_github_tool", folder / "src" / PACKAGE / "server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def ask(run, learners_tool, monkeypatch):
    """``ask(upstream, *repositories)``: each repository asked in turn of the reference's tool and of the learner's,
    with the token set; the answers (isError, text, structured content), which must be the same from both."""
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)

    async def calls(server: FastMCP, repositories: tuple[str, ...]) -> list[tuple[bool, str, Any]]:
        async with Client(server) as client:
            results = [
                await client.call_tool("github_repository", {"repository": name}, raise_on_error=False)
                for name in repositories
            ]
        return [(result.is_error, result.content[0].text, result.structured_content) for result in results]

    def asking(upstream: Upstream, *repositories: str, calls_per_minute: int = 30) -> list[tuple[bool, str, Any]]:
        answers = []
        with upstream:
            monkeypatch.setenv("GITHUB_API_URL", upstream.url)
            for add_tool in (add_github_tool, learners_tool.add_github_tool):
                server = FastMCP("github-under-attack")
                add_tool(server, timeout=5.0, calls_per_minute=calls_per_minute)
                answers.append(run(calls, server, repositories or ("octo/demo",)))
        reference, learners = answers
        assert learners == reference, "the learner's tool answers otherwise than the reference"
        return reference

    return asking


def no_token_in(answer: tuple[bool, str, Any]) -> bool:
    """Neither the token nor any stretch of it that a cut could leave (the token's prefix says it began)."""
    everything = answer[1] + json.dumps(answer[2])
    return TOKEN not in everything and "ghp_" not in everything and TOKEN[-12:] not in everything


# --- the token, echoed back -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (500, {}, {"message": f"upstream saw Authorization: {ECHO}"}),
        (502, {"Content-Type": "text/html"}, f"<h1>Bad gateway</h1><p>{ECHO}</p>".encode()),
        (503, {}, {"message": "x" * (TEXT_LIMIT - 20) + ECHO}),  # a cut at the limit would keep half of it
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-limit": ECHO, "x-ratelimit-reset": ECHO}, {"message": ""}),
        (429, {"retry-after": ECHO}, {"message": ECHO}),
        (200, {}, {**REPOSITORY, "description": ECHO, "language": ECHO, "default_branch": ECHO}),
    ],
    ids=["json-message", "html-body", "message-cut-in-the-token", "rate-limit-headers", "retry-after", "facts"],
)
def test_an_upstream_that_echoes_the_token_never_gets_it_into_the_answer(ask, caplog, status, headers, body) -> None:
    """Nor into the server's log of the failed call (at INFO and above: httpx's DEBUG log shows headers as sent)."""
    with caplog.at_level(logging.INFO):
        (answer,) = ask(Upstream(status, headers, body))
    assert no_token_in(answer), answer
    assert answer[0] == (status != 200)
    assert "ghp_" not in caplog.text


# --- what no repository object looks like ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b"<html><body>Welcome to the hotel wifi</body></html>", b"[1, 2, 3]", b'"octo/demo"', b"", b"[" * 100_000],
    ids=["html", "json-array", "json-string", "empty", "nested-past-recursion"],
)
def test_a_200_that_is_not_a_json_object_is_an_error_that_says_so(ask, body) -> None:
    (answer,) = ask(Upstream(200, {"Content-Type": "application/json"}, body))
    assert answer[0] and "200 answer is no JSON object" in answer[1] and "GITHUB_API_URL" in answer[1], answer
    assert "Traceback" not in answer[1] and "Error calling tool" not in answer[1]


def test_a_repository_object_of_odd_types_gives_facts_without_them(ask) -> None:
    body = {**REPOSITORY, "license": "MIT", "description": ["a"], "language": {"name": "Python"}, "archived": [True]}
    ((error, _, facts),) = ask(Upstream(200, {}, body))
    assert not error and facts["repository"] == "octo/demo"
    assert facts["license"] is facts["description"] is facts["language"] is facts["archived"] is None


@pytest.mark.parametrize("reset", ["99999999999999999999", "-5", "abc", "1e9", ""])
def test_an_absurd_rate_limit_reset_is_an_error_that_says_wait_a_minute(ask, reset) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "60", "x-ratelimit-reset": reset}
    ((error, text, _),) = ask(Upstream(403, headers, {"message": "API rate limit exceeded"}))
    assert error and "Error calling tool" not in text, text
    assert f"its reset time {reset!r} is not a time" in text and "wait at least a minute" in text, text


@pytest.mark.parametrize(
    ("headers", "body"),
    [({"Content-Length": "5000"}, b'{"full_name": "octo/demo"'), ({"Content-Encoding": "gzip"}, b"not gzip at all")],
    ids=["cut-short", "not-the-compression-it-names"],
)
def test_an_answer_that_cannot_be_read_is_an_error_that_says_try_again(ask, headers, body) -> None:
    ((error, text, _),) = ask(Upstream(200, headers, body, length="Content-Length" not in headers))
    assert error and text == "GitHub's answer broke off or could not be decoded: try again in a minute.", text


# --- a body without end -----------------------------------------------------------------------------------------


def huge_repository() -> bytes:
    return json.dumps({**REPOSITORY, "description": " " * (8 * MIB)}).encode()


@pytest.mark.parametrize(
    ("headers", "body", "length"),
    [
        ({}, huge_repository(), True),
        ({}, huge_repository(), False),
        ({"Content-Encoding": "gzip"}, gzip.compress(huge_repository()), True),  # 8 MiB in 8 KB on the wire
    ],
    ids=["content-length", "until-close", "gzip"],
)
def test_a_body_past_a_mebibyte_is_not_read_further(ask, headers, body, length) -> None:
    (answer,) = ask(Upstream(200, headers, body, length=length))
    assert answer[0] and "longer than 1 MiB" in answer[1], answer[:2]


# --- the owner's free text ----------------------------------------------------------------------------------------


def test_every_text_the_facts_carry_is_cut_to_the_limit(ask) -> None:
    long = "L" * 20_000
    fields = ["full_name", "html_url", "description", "language", "default_branch", "pushed_at", "stargazers_count"]
    body = {field: long for field in fields} | {"license": {"spdx_id": long}}
    ((error, text, facts),) = ask(Upstream(200, {}, body))
    assert not error
    assert all(len(value) <= TEXT_LIMIT for value in facts.values() if isinstance(value, str)), facts
    assert len(text) < 10 * TEXT_LIMIT


# --- the server's own limit ---------------------------------------------------------------------------------------


def test_refused_input_does_not_use_up_the_servers_calls(ask) -> None:
    """Three names refused before any request, on a server that answers three calls a minute: the fourth call,
    another student's good one, is still answered."""
    bad = ("../etc/passwd", "a/b/c", "x" * 200)
    upstream = Upstream(200, {}, REPOSITORY)
    *refused, answered = ask(upstream, *bad, "octo/demo", calls_per_minute=3)
    assert all(error and "is not a repository" in text for error, text, _ in refused), refused
    assert not answered[0] and answered[2]["repository"] == "octo/demo", answered[:2]
