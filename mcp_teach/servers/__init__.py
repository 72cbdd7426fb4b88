"""The MCP servers students talk to, one module each. Named by ``by_name`` for ``--server``: ``calculator``,
``knowledge`` (lesson 07), ``assistant`` (lesson 09), ``notes`` (lesson 12, behind the four permission gates of
``gates``, its folder kept by ``notes_store``) and ``capstone`` (lesson 13: the official conformance suite's
fixtures). For one lesson only: ``lowlevel_calculator``, the calculator on
mcp's low-level ``Server`` (lesson 08), and lesson 12's ``workspace`` (the user's own files) and ``untrusted`` (a
server that attacks the model); lesson 14's ``github_facts`` (a tool that calls GitHub's REST API, added to a
server with ``add_github_tool``) and ``github_replay`` (GitHub's stored answers, played back on loopback).

Beside them, the errors they explain: ``explained_errors`` (tool arguments, unknown tools, params that do not
fit the method) and ``lookup_errors`` (unknown resources, prompts and completion references, in each era's code).
A server module builds its server and imports fastmcp, mcp and :mod:`mcp_teach.config` at most: how it is served
lives in :mod:`mcp_teach.transports`.
"""
