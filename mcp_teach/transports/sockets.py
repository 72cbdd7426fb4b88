"""Listening sockets and the URLs clients use to reach them."""

from __future__ import annotations

import socket

from mcp_teach.config import LOOPBACK

#: How the course serves with uvicorn: no access log, warnings only, and 2 s for open connections at the end.
QUIET_UVICORN = {"log_level": "warning", "access_log": False, "timeout_graceful_shutdown": 2}


def bind_socket(host: str = LOOPBACK, port: int = 0) -> socket.socket:
    """A listening-ready TCP socket (TCP_NODELAY on, as uvicorn sets it); port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def server_url(host: str, port: int, path: str) -> str:
    """The URL a client connects to."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"
