"""Refresh-token requests carry ``resource``: the mcp SDK's, captured over real HTTP, and every one lesson 12 builds.

2026-07-28, basic/authorization, Resource Parameter Implementation: the ``resource`` parameter "**MUST** be included
in both authorization requests and token requests" — a refresh is a token request (RFC 6749 §6, RFC 8707 §2).
Lesson 12 writes its refresh requests by hand in a cell (section "Step-up"), and its test repeats them: a form
with ``"grant_type": "refresh_token"`` must name ``resource`` (itself, or a form it spreads with ``**``).
"""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path
from urllib.parse import parse_qsl

import nbformat
import pytest
from fastmcp.client.transports import StreamableHttpTransport

from mcp_teach.client import teaching_client
from mcp_teach.lessons.l12_oauth import HeadlessBrowser, oauth_client_provider, oauth_server
from mcp_teach.wire.http_recording import RecordingHTTPTransport, recording_client_factory

ROOT = Path(__file__).resolve().parents[1]
#: Where lesson 12's refresh requests are written by hand.
SOURCES = [*sorted((ROOT / "notebooks" / "solutions").glob("12_*.ipynb")), ROOT / "tests" / "test_l12_practices.py"]


def test_the_sdks_refresh_request_carries_resource(run):
    """The mcp SDK's OAuth client, once its access token has expired, refreshes it; the request is captured."""

    async def scenario():
        recorded = []
        async with oauth_server() as server:
            auth = oauth_client_provider(server, HeadlessBrowser(RecordingHTTPTransport(recorded.append, redact=False)))
            factory = recording_client_factory(recorded.append, redact=False)
            transport = StreamableHttpTransport(server.url, auth=auth, httpx_client_factory=factory)
            async with teaching_client(transport) as client:
                await client.list_tools()
                auth.context.token_expiry_time = time.time() - 1  # its hour is over: the next request refreshes
                await client.list_tools()
            return server.url, recorded

    url, recorded = run(scenario)
    forms = [dict(parse_qsl(exchange.request_body)) for exchange in recorded if exchange.method == "POST"]
    refreshes = [form for form in forms if form.get("grant_type") == "refresh_token"]
    assert len(refreshes) == 1, [exchange.target for exchange in recorded]
    assert refreshes[0]["resource"] == url


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def refresh_forms_without_resource(source: str) -> list[str]:
    """Each dict literal in ``source`` with ``"grant_type": "refresh_token"`` that names no ``resource``, itself or
    through a ``**name`` it spreads (a name bound to such a dict in the same source)."""
    dicts = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Dict)]
    pairs = {
        id(node): {_string(key): value for key, value in zip(node.keys, node.values, strict=True)} for node in dicts
    }
    refresh_names: dict[str, bool] = {}  # a name bound to a refresh form: whether that form has resource
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            form = {_string(key): value for key, value in zip(node.value.keys, node.value.values, strict=True)}
            if _string(form.get("grant_type")) == "refresh_token":
                refresh_names.update(
                    {target.id: "resource" in form for target in node.targets if isinstance(target, ast.Name)}
                )
    missing = []
    for node in dicts:
        form = pairs[id(node)]
        spread = [
            value.id
            for key, value in zip(node.keys, node.values, strict=True)
            if key is None and isinstance(value, ast.Name)
        ]
        grant = _string(form.get("grant_type"))
        is_refresh = grant == "refresh_token" or (grant is None and any(name in refresh_names for name in spread))
        if is_refresh and "resource" not in form and not any(refresh_names.get(name) for name in spread):
            missing.append(ast.unparse(node))
    return missing


def python_of(cell_source: str) -> str:
    """A code cell's source as Python: each IPython magic or shell line (``%pip ...``, ``!ls``) becomes ``pass``."""
    lines = cell_source.splitlines()
    return "\n".join(
        line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
        for line in lines
    )


def _code(path: Path) -> list[tuple[str, str]]:
    """(where, code) of each code cell of a notebook, or of a Python file."""
    if path.suffix == ".py":
        return [(path.name, path.read_text(encoding="utf-8"))]
    cells = nbformat.read(path, as_version=4).cells
    code = []
    for number, cell in enumerate(cells):
        if cell.cell_type == "code":
            code.append((f"{path.name} cell {number}", python_of(cell.source)))
    return code


def test_the_checker_finds_a_refresh_without_resource():
    bare = (
        'refresh = {"grant_type": "refresh_token", "refresh_token": r, "client_id": c}\nwider = {**refresh, "scope": s}'
    )
    assert len(refresh_forms_without_resource(bare)) == 2  # the form, and the one spreading it
    good = bare.replace('"client_id": c}', '"client_id": c, "resource": server.url}')
    assert refresh_forms_without_resource(good) == []
    assert refresh_forms_without_resource('token = {"grant_type": "authorization_code", "code": c}') == []


@pytest.mark.parametrize("path", SOURCES, ids=[path.name for path in SOURCES])
def test_every_refresh_request_lesson_12_builds_carries_resource(path):
    found = [(where, form) for where, code in _code(path) for form in refresh_forms_without_resource(code)]
    assert found == [], "refresh requests without resource:\n" + json.dumps(found, indent=1)
