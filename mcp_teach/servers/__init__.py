"""The MCP servers students talk to, one module each: ``calculator`` and ``knowledge`` (named by ``catalogue``
for ``--server``), and ``lowlevel_calculator``, the calculator on mcp's low-level ``Server`` (lesson 08).

Beside them, the errors they explain: ``explained_errors`` (tool arguments, unknown tools, params that do not
fit the method) and ``lookup_errors`` (unknown resources, prompts and completion references, in each era's code).
A server module builds its server and imports fastmcp, mcp and :mod:`mcp_teach.config` at most: how it is served
lives in :mod:`mcp_teach.transports`.
"""
