"""Lesson 10's exercises (a host with many servers): what each one expects, for ``check("10.k")``.

- 10.1: ``clash_answer``, what ``search`` returns on a router with two unprefixed servers that both have it
  (the check mounts them itself: the first mounted wins);
- 10.2: ``divide_only``, an ``mcp.json`` entry for the calculator whose allowlist keeps only
  ``calculator_divide`` (read with fastmcp's ``MCPConfig``; no server is started);
- 10.3: ``provider_name(server, tool)``, a prefixed tool name any provider accepts: OpenAI's rule, unique for
  distinct inputs.
"""

from __future__ import annotations

from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.mcp_config import MCPConfig

from mcp_teach.exercises.answers import run_sync
from mcp_teach.exercises.catalogue import exercise
from mcp_teach.exercises.check import Checker
from mcp_teach.lessons.l10_host import search_server
from mcp_teach.llm.openai_tools import is_openai_name

#: (server, tool) pairs 10.3 is tried on: a dotted name, a long one, names that only differ in punctuation.
NAME_CASES = [
    ("calc", "calculator_add"),
    ("knowledge", "docs.search"),
    ("knowledge", "docs_search"),
    ("git-hub", "issues.list"),
    ("very-long-server-name-for-testing", "a_tool_name_that_is_much_too_long_to_fit_in_sixty_four_characters"),
    ("very-long-server-name-for-testing", "a_tool_name_that_is_much_too_long_to_fit_in_sixty_four_characters_2"),
]


async def _clash() -> str:
    router = FastMCP("MCPRouter", version="1.0.0")
    router.mount(search_server("notes"))
    router.mount(search_server("web"))
    async with Client(router) as client:
        return (await client.call_tool("search", {"query": "mcp"})).data


@exercise("10.1", answers=("clash_answer",))
def check_clash(c: Checker, clash_answer: Any) -> None:
    expected = run_sync(_clash())
    c.equal(
        clash_answer,
        expected,
        "what search returned with 'notes' mounted first, then 'web', both without a namespace",
        hint="router.mount(search_server('notes')); router.mount(search_server('web')); call search with "
        "{'query': 'mcp'} and keep result.data",
    )
    print(f"search answered {clash_answer!r}: the first server mounted keeps the name, the second is hidden")


def _tags(change: Any) -> list[str]:
    """The tags a tool transform gives (fastmcp keeps ``tools`` entries as plain dicts until it applies them)."""
    tags = change.get("tags") if isinstance(change, dict) else getattr(change, "tags", None)
    return list(tags or ())


@exercise("10.2", answers=("divide_only",))
def check_divide_only(c: Checker, divide_only: Any) -> None:
    c.instance(divide_only, dict, "divide_only", hint="a dict: one entry of mcpServers")
    try:
        server = MCPConfig.from_dict({"mcpServers": {"calc": divide_only}}).mcpServers["calc"]
    except Exception as error:  # pydantic's validation error: say what fastmcp did not accept
        c.fail(
            "the entry",
            "one fastmcp's MCPConfig accepts",
            f"{type(error).__name__}: {error}",
            hint="command, args, tools, include_tags",
        )
    tools = getattr(server, "tools", {}) or {}
    include = getattr(server, "include_tags", None)
    c.true(
        include is not None,
        "include_tags",
        expected="a list of tags (only tools with one stay)",
        found=include,
        hint='add "include_tags": ["allowed"]',
    )
    tagged = sorted(name for name, change in tools.items() if set(include or ()) & set(_tags(change)))
    c.equal(tagged, ["calculator_divide"], "the tools carrying an included tag", hint="tag calculator_divide only")
    print("allowlist: only calculator_divide is offered (tag 'allowed' + include_tags)")


@exercise("10.3", answers=("provider_name",))
def check_provider_name(c: Checker, provider_name: Any) -> None:
    c.true(
        callable(provider_name),
        "provider_name",
        expected="a function",
        found=provider_name,
        hint="def provider_name(server, tool): ...",
    )
    names = [provider_name(server, tool) for server, tool in NAME_CASES]
    for (server, tool), name in zip(NAME_CASES, names, strict=True):
        c.true(
            isinstance(name, str) and is_openai_name(name),
            f"provider_name({server!r}, {tool!r})",
            expected="a name matching ^[A-Za-z0-9_-]{1,64}$",
            found=name,
            hint="replace other characters with '_' and shorten long names (keep a short hash to stay unique)",
        )
    c.equal(len(set(names)), len(names), "distinct inputs give distinct names", hint="add a hash of the input")
    c.equal(
        provider_name("calc", "calculator_add"),
        "calc_calculator_add",
        "a short, clean name is kept as it is",
        hint="server + '_' + tool when that already fits",
    )
    print(f"{len(names)} names, all fit OpenAI's rule, none clash")
