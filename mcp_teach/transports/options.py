"""Which serving options go together: checked before anything starts, refused with the fix."""

from __future__ import annotations

SSE_REFUSED = (
    "SSE cannot run with several workers: an SSE session is an open GET stream held by one process, and the "
    "POSTs that belong to it may reach another. Use --transport streamable-http --stateless with --workers, "
    "or SSE without --workers."
)
NEEDS_STATELESS = (
    "--workers {workers} needs --stateless: a 2025-11-25 client's session lives in the worker that answered its "
    "initialize, and its next request may reach another worker, which answers 404 Session not found. With "
    "--stateless any worker answers any request (the server can then send no requests of its own to clients, "
    "e.g. elicitation; see docs/INSTRUCTORS.md)."
)


def check_class_mode(transport: str, workers: int, stateless: bool) -> None:
    """Raise ``ValueError``, naming the fix, for options the transport cannot use."""
    if workers < 1:
        raise ValueError(f"--workers must be 1 or more, not {workers}")
    if workers > 1 and transport == "stdio":
        raise ValueError(
            "--workers needs --transport streamable-http: a stdio server has exactly one client, the program that "
            "started it"
        )
    if workers > 1 and transport == "sse":
        raise ValueError(SSE_REFUSED)
    if stateless and transport != "streamable-http":
        raise ValueError(f"--stateless needs --transport streamable-http: {transport} always keeps a session")
    if workers > 1 and not stateless:
        raise ValueError(NEEDS_STATELESS.format(workers=workers))


def describe_mode(workers: int, stateless: bool) -> str:
    """``"4 workers, stateless; "`` for the line that announces the URL (empty for the classic server)."""
    parts = ([f"{workers} workers"] if workers > 1 else []) + (["stateless"] if stateless else [])
    return ", ".join(parts) + "; " if parts else ""
