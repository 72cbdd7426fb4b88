"""The MCP servers students talk to, one module each (``calculator`` now).

A server module builds a ``FastMCP`` server and imports fastmcp, mcp and
:mod:`mcp_teach.config` at most: how it is served lives in :mod:`mcp_teach.transports`.
"""
