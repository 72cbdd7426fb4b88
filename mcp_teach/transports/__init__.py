"""Serving any course server: stdio, SSE and streamable HTTP, from a terminal or in-process.

``stdio_loop`` (every line answered) with ``frames`` (checks one incoming message);
``http_app`` with ``http_guard`` and ``class_token`` (what stands in front of HTTP);
``foreground`` (a terminal server), ``in_process`` (inside a notebook or test),
``class_mode`` and ``options`` (many workers for a large class); ``sockets``.
May import :mod:`mcp_teach.config` and :mod:`mcp_teach.servers`.
"""
