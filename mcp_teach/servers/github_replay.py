"""A loopback HTTP server that plays GitHub's answers back, so lesson 14's web-API tool runs offline and the same.

It is a real server on 127.0.0.1 (the tool's ``httpx2`` client connects to it as to ``api.github.com``); only the
answers are stored (``github_responses.json``). ``scenario`` picks one: ``"live"`` answers the stored repository
with 200 and any other with 404; ``"rate_limited"``, ``"secondary_rate_limited"``, ``"bad_credentials"``,
``"forbidden"`` and ``"blocked"`` (451, for legal reasons) answer every request so. ``delay`` holds each answer
back, to show a timeout. Every request's headers are kept in :attr:`GitHubReplay.requests`, so a test can see what
the tool sent on the wire.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mcp_teach.servers.github_facts import stored_responses

SCENARIOS = ("live", "rate_limited", "secondary_rate_limited", "bad_credentials", "forbidden", "blocked")


class GitHubReplay(ThreadingHTTPServer):
    """``with GitHubReplay("rate_limited") as github:`` serves at :attr:`url` until the block ends."""

    def __init__(self, scenario: str = "live", *, delay: float = 0.0) -> None:
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}: choose one of {', '.join(SCENARIOS)}")
        self.scenario, self.delay = scenario, delay
        #: ``(path, headers)`` of every request, in arrival order.
        self.requests: list[tuple[str, dict[str, str]]] = []
        super().__init__(("127.0.0.1", 0), ReplayHandler)
        host, port = self.server_address[:2]
        self.url = f"http://{host}:{port}"
        # shutdown() waits for serve_forever to look up (every 0.5 s by default): look often, stop at once.
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def answer(self, path: str) -> dict[str, Any]:
        """The stored response (``status``, ``headers``, ``body``) this scenario gives to ``path``."""
        responses = stored_responses()["responses"]
        if self.scenario != "live":
            return responses[self.scenario]
        known = f"/repos/{responses['repository']['body']['full_name']}"
        return responses["repository" if path.lower() == known.lower() else "not_found"]

    def __enter__(self) -> GitHubReplay:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()
        self.server_close()  # waits for requests still being answered
        self._thread.join()


class ReplayHandler(BaseHTTPRequestHandler):
    """Answers each GET as the :class:`GitHubReplay` it serves for says, and keeps the request there."""

    disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart

    def do_GET(self) -> None:
        replay = self.server  # a GitHubReplay
        replay.requests.append((self.path, dict(self.headers.items())))
        time.sleep(replay.delay)
        stored = replay.answer(self.path)
        body = json.dumps(stored["body"]).encode()
        self.send_response(stored["status"])
        for name, value in stored["headers"].items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # no access log on stderr
        pass
