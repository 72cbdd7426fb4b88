"""Export recorded HTTP exchanges as HAR 1.2, the format a browser's devtools open (Network tab → Import).

Works on any :class:`~mcp_teach.wire.messages.Capture` with HTTP exchanges: one loaded from the HTTP
tap (:func:`~mcp_teach.wire.host_tap_recording.load_tap`, which knows URLs, versions and wall-clock times)
or one a ``CaptureTransport`` recorded (then ``base_url`` supplies scheme and host, and times come
from the monotonic clock). Everything in it was redacted when it was recorded.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mcp_teach import __version__
from mcp_teach.private_files import open_private
from mcp_teach.wire.host_tap_writer import wall_time
from mcp_teach.wire.http_recording import HttpExchange
from mcp_teach.wire.messages import Capture
from mcp_teach.wire.redact import redact_body, redact_headers, redact_url

HAR_VERSION = "1.2"


def _pairs(items: Any) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in items]


def _milliseconds(start: float | None, end: float | None) -> float:
    return round(max(0.0, end - start) * 1000, 3) if start is not None and end is not None else 0.0


def _entry(exchange: HttpExchange, base_url: str) -> dict[str, Any]:
    url = redact_url(getattr(exchange, "url", None) or base_url.rstrip("/") + exchange.target)
    started = getattr(exchange, "started_time", None)
    if started is None:  # a live capture's monotonic clock: count back from now
        started = wall_time(time.time() - (time.monotonic() - exchange.started_at))
    responded = getattr(exchange, "responded_at", None)
    wait = _milliseconds(exchange.started_at, responded if responded is not None else exchange.ended_at)
    receive = _milliseconds(responded, exchange.ended_at) if responded is not None else 0.0
    request_headers = redact_headers(exchange.request_headers)
    response_headers = redact_headers(exchange.response_headers)
    request_type = request_headers.get("content-type", "application/octet-stream")
    request_body = redact_body(exchange.request_body, request_type)
    request: dict[str, Any] = {
        "method": exchange.method,
        "url": url,
        "httpVersion": getattr(exchange, "http_version", "HTTP/1.1"),
        "cookies": [],  # cookie headers are redacted: there are no values to list
        "headers": _pairs(request_headers.items()),
        "queryString": _pairs(parse_qsl(urlsplit(url).query, keep_blank_values=True)),
        "headersSize": -1,
        "bodySize": len(request_body.encode()),
    }
    if request_body:
        request["postData"] = {"mimeType": request_type, "text": request_body}
    body = redact_body(exchange.response_body, exchange.content_type or "")
    entry: dict[str, Any] = {
        "startedDateTime": started,
        "time": round(wait + receive, 3),
        "request": request,
        "response": {
            "status": exchange.status or 0,  # 0: no response (the upstream could not be reached)
            "statusText": getattr(exchange, "reason", ""),
            "httpVersion": getattr(exchange, "response_http_version", "HTTP/1.1"),
            "cookies": [],
            "headers": _pairs(response_headers.items()),
            "content": {"size": len(body.encode()), "mimeType": exchange.content_type or "x-unknown", "text": body},
            "redirectURL": response_headers.get("location", ""),
            "headersSize": -1,
            "bodySize": len(body.encode()) if exchange.status else -1,
        },
        "cache": {},
        "timings": {"send": 0.0, "wait": wait, "receive": receive},
    }
    if getattr(exchange, "error", None):
        entry["comment"] = exchange.error
    return entry


def to_har(capture: Capture, *, base_url: str = "http://127.0.0.1") -> dict[str, Any]:
    """The HTTP exchanges of ``capture`` as a HAR 1.2 document (a dict ready for ``json.dump``)."""
    header = getattr(capture, "header", {})
    comment = f"recorded by mcp-teach tap in front of {header['upstream']}" if "upstream" in header else ""
    entries = [_entry(exchange, base_url) for exchange in capture.http]
    creator = {"name": "mcp-teach", "version": __version__}
    return {"log": {"version": HAR_VERSION, "creator": creator, "entries": entries, "comment": comment}}


def write_har(capture: Capture, path: str | Path, *, base_url: str = "http://127.0.0.1") -> Path:
    """Write :func:`to_har` to ``path`` (e.g. ``session.har``) and return the path."""
    path = Path(path)
    text = json.dumps(to_har(capture, base_url=base_url), ensure_ascii=False, indent=1)
    with open_private(path, "w", encoding="utf-8") as out:
        out.write(text)
    return path
