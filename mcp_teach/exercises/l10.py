"""Lesson 10's exercises (a host with many servers): what each one expects, for ``check("10.k")``.

- 10.1: ``find_clashes(listed)``, the clash check a host runs before it offers prefixed names: the check lists the
  tools of real in-memory servers whose names meet after prefixing (then the same listing in reverse order), and
  holds the answer to what fastmcp's router hides when it mounts them;
- 10.2: ``divide_only``, an ``mcpServers`` entry whose allowlist keeps only ``calculator_divide``: its ``tools``,
  ``include_tags`` and ``exclude_tags`` are connected through ``fastmcp.Client`` to a calculator served over HTTP
  with a tool the entry does not name;
- 10.3: ``provider_name(server, tool)``, a prefixed tool name any provider accepts: OpenAI's rule, unique for
  distinct inputs.

The checks are synchronous; the ones that talk to servers run their clients with :func:`run_sync`.
"""

from __future__ import annotations

import hashlib
import re
import sys
from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.mcp_config import MCPConfig
from pydantic import ValidationError

from mcp_teach.display.call_outcomes import attempt
from mcp_teach.exercises.answers import result_text, run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.exercises.language import say
from mcp_teach.llm.openai_tools import is_openai_name
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.transports.in_process import serve_http

#: 10.1's servers, in config order: entry name -> tool names. Three ways to meet: two servers, three servers, none.
CLASH_SERVERS = {
    "git": ["hub_search", "log"],
    "git_hub": ["search", "log"],
    "notes": ["search"],
    "a": ["b_c_d"],
    "a_b": ["c_d"],
    "a_b_c": ["d"],
}
#: What a host must report for them.
CLASHES = {"git_hub_search": ["git", "git_hub"], "a_b_c_d": ["a", "a_b", "a_b_c"]}

#: The entry fields 10.2 keeps: fastmcp's filters. Where the server is (command, url) is the check's.
FILTERS = ("tools", "include_tags", "exclude_tags")

#: (server, tool) pairs 10.3 is tried on: a dotted name, a long one, names that only differ in punctuation.
NAME_CASES = [
    ("calc", "calculator_add"),
    ("knowledge", "docs.search"),
    ("knowledge", "docs_search"),
    ("git-hub", "issues.list"),
    ("very-long-server-name-for-testing", "a_tool_name_that_is_much_too_long_to_fit_in_sixty_four_characters"),
    ("very-long-server-name-for-testing", "a_tool_name_that_is_much_too_long_to_fit_in_sixty_four_characters_2"),
    ("wiki", "résumé.search"),  # letters outside ASCII: OpenAI's rule has none
]
#: 10.3's scheme: the part kept before the hash, and the hash's length.
KEPT, DIGITS = 55, 8


def expected_name(server: str, tool: str) -> str:
    """The name 10.3's text describes, to compare with: as it is if it fits, else cleaned, cut and hashed."""
    name = f"{server}_{tool}"
    if is_openai_name(name):
        return name
    digest = hashlib.sha256(f"{server}/{tool}".encode()).hexdigest()[:DIGITS]
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:KEPT] + "_" + digest


def _search(query: str = "") -> str:
    return query


def _server(name: str, tools: list[str]) -> FastMCP:
    """A server whose tools have the given names (only their names matter to 10.1)."""
    server = FastMCP(name, version="1.0.0")
    for tool in tools:
        server.tool(_search, name=tool)
    return server


async def _listed_and_routed() -> tuple[dict[str, list[str]], list[str]]:
    """Each server's tool names as its own client lists them, and the names fastmcp's router offers."""
    servers = {name: _server(name, tools) for name, tools in CLASH_SERVERS.items()}
    listed = {}
    for name, server in servers.items():
        async with Client(server) as client:
            listed[name] = [tool.name for tool in await client.list_tools()]
    router = FastMCP("router", version="1.0.0")
    for name, server in servers.items():
        router.mount(server, namespace=name)
    async with Client(router) as client:
        offered = [tool.name for tool in await client.list_tools()]
    return listed, offered


@exercise("10.1", answers=("find_clashes",))
def check_find_clashes(c: Checker, find_clashes: Any) -> None:
    c.function(find_clashes, "find_clashes", hint="def find_clashes(listed): ... return {prefixed name: [servers]}")
    listed, offered = run_sync(_listed_and_routed())
    found = c.runs(
        find_clashes,
        listed,
        what=f"find_clashes({listed})",
        expected="a dict",
        hint="listed maps each server to its tool *names* (str), not the Tool objects of section 3",
    )
    c.instance(found, dict, "find_clashes(...)", hint="a dict: prefixed name -> the servers that would get it")
    sets = any(isinstance(owners, set | frozenset) for owners in found.values())
    c.equal(
        found,
        CLASHES,
        f"find_clashes({listed})",
        hint="a list of servers in config order, not a set"
        if sets
        else "prefix every tool with its server's name first, then keep the names claimed more than once, with "
        "every server that claims them (config order)",
    )
    alone = {"notes": listed["notes"], "git": listed["git"]}
    c.equal(
        find_clashes(alone),
        {},
        f"find_clashes({alone})",
        hint="prefixes keep 'notes_search' and 'git_log' apart: only a prefixed name two servers share is a clash",
    )
    backwards = dict(reversed(listed.items()))  # owners sorted by name would pass the config order above
    c.equal(find_clashes(backwards), {name: owners[::-1] for name, owners in CLASHES.items()},
            f"find_clashes({backwards})", hint="servers in config order (the order of listed), not sorted")  # fmt: skip
    hidden = sum(len(owners) - 1 for owners in found.values())
    total = sum(len(tools) for tools in listed.values())
    c.equal(len(offered), total - hidden, "tools fastmcp's router offers", hint="one per clash is kept")
    for name, owners in found.items():
        say(f"{name}: {', '.join(owners)} (fastmcp's router offers it once and hides {len(owners) - 1})")


def _power(a: float, b: float) -> float:
    """Raise a to the power b."""
    return a**b


async def _run_allowlist(filters: dict[str, Any]) -> tuple[list[str], Any, Any]:
    """The tools a client sees through ``filters`` on a calculator with a fifth tool, and two calls' results."""
    server = build_calculator_server()
    server.tool(_power, name="calculator_power")
    async with serve_http(server=server) as url, Client({"mcpServers": {"calc": {"url": url, **filters}}}) as client:
        names = sorted(tool.name for tool in await client.list_tools())
        divided = await client.call_tool("calculator_divide", {"a": 1, "b": 4}, raise_on_error=False)
        # an unknown tool may come back as a protocol error
        added = await attempt(client.call_tool("calculator_add", {"a": 1, "b": 2}, raise_on_error=False))
    return names, divided, added


@exercise("10.2", answers=("divide_only",))
def check_divide_only(c: Checker, divide_only: Any) -> None:
    c.instance(divide_only, dict, "divide_only", hint="a dict: one entry of mcpServers")
    c.true(
        "mcpServers" not in divide_only,
        "divide_only",
        expected="one entry (the value under a server's name)",
        found=sorted(divide_only),
        hint='write only the entry, {"command": ..., "args": ..., ...}, not the whole config',
    )
    try:
        MCPConfig.from_dict({"mcpServers": {"calc": divide_only}})
    except ValidationError as error:  # say which field fastmcp did not accept
        first = error.errors()[0]
        problem = f"{'.'.join(map(str, first['loc'][2:])) or 'the entry'}: {first['msg']}"
    else:
        problem = ""
    c.true(not problem, "the entry", expected="one fastmcp's MCPConfig accepts", found=problem,
           hint="command, args, tools (a dict: tool name -> {'tags': [...]}), include_tags (a list)")  # fmt: skip
    c.equal(
        (divide_only.get("command"), divide_only.get("args")),
        (sys.executable, ["-m", "mcp_teach.serve"]),
        "the entry's command and args",
        hint="the calculator's command, as in section 1: sys.executable and ['-m', 'mcp_teach.serve']",
    )
    filters = {key: divide_only[key] for key in FILTERS if key in divide_only}
    names, divided, added = run_sync(_run_allowlist(filters))
    c.equal(
        names,
        ["calculator_divide"],
        "the tools a client is offered",
        hint="include_tags keeps only the tools that carry one of its tags: is the tag in include_tags exactly the "
        "one in tools (a list of strings)?"
        if not names
        else "tag calculator_divide in 'tools' and keep only that tag with 'include_tags' (an allowlist), so that a "
        "tool you do not name (calculator_power) stays out too",
    )
    c.true(
        not divided.is_error and divided.data == 0.25,
        "calculator_divide(1, 4)",
        expected="0.25",
        found=result_text(divided) or divided,
        hint="the allowed tool must still work",
    )
    refused = isinstance(added, Exception) or added.is_error
    c.true(refused, "calculator_add(1, 2)", expected="refused", found=added, hint="include_tags filters calls too")
    say(f"offered {names}; calculator_divide(1, 4) = {divided.data}; calculator_add refused")


@exercise("10.3", answers=("provider_name",))
def check_provider_name(c: Checker, provider_name: Any) -> None:
    c.function(provider_name, "provider_name", hint="def provider_name(server, tool): ...")
    names = [provider_name(server, tool) for server, tool in NAME_CASES]
    for (server, tool), name in zip(NAME_CASES, names, strict=True):
        c.true(
            isinstance(name, str) and is_openai_name(name),
            f"provider_name({server!r}, {tool!r})",
            expected="a name matching ^[A-Za-z0-9_-]{1,64}$",
            found=name,
            hint=f"at most 64 characters: {KEPT} kept, '_' and {DIGITS} hex digits"
            if isinstance(name, str) and len(name) > 64
            else "replace every character outside A-Z, a-z, 0-9, _ and - with '_' (\\w keeps letters like é)",
        )
        c.equal(
            name,
            expected_name(server, tool),
            f"provider_name({server!r}, {tool!r})",
            hint="a name that already fits is returned as it is"
            if is_openai_name(f"{server}_{tool}")
            else f"the first {KEPT} characters of the cleaned name, '_', then the first {DIGITS} hex digits of "
            f"sha256('{server}/{tool}')",
        )
    c.equal(len(set(names)), len(names), "distinct inputs give distinct names", hint="add a hash of the input")
    c.equal(
        provider_name("calc", "calculator_add"),
        "calc_calculator_add",
        "a short, clean name is kept as it is",
        hint="server + '_' + tool when that already fits",
    )
    say(f"{len(names)} names as the scheme gives them: all fit OpenAI's rule, none clash")
