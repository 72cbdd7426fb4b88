"""``python -m mcp_teach.serve``: run a course server from a terminal (also ``mcp-teach serve``).

Kept small on purpose: a stdio client starts this module for every connection, so it imports only
what serving needs (settings, the server, its transport), not the rest of the ``mcp-teach`` command.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from mcp_teach.config import (
    TOKEN_RULE,
    TOKEN_VARIABLE,
    TRANSPORTS,
    ConfigError,
    check_token,
    is_loopback,
    load_settings,
)
from mcp_teach.servers.by_name import DEFAULT_SERVER, SERVER_NAMES
from mcp_teach.transports.foreground import run_server
from mcp_teach.transports.options import check_class_mode


def add_serve_arguments(parser: argparse.ArgumentParser, server: str = DEFAULT_SERVER) -> None:
    """The options shared by ``mcp-teach serve``, ``python -m mcp_teach.serve`` and ``mcp-teach-capstone``, whose
    ``--server`` defaults to ``server`` (and whose help says so)."""
    parser.add_argument(
        "--server",
        choices=SERVER_NAMES,
        default=server,
        help=f"which course server to run (default: {server}; knowledge: documents, resources and prompts)",
    )
    parser.add_argument("--transport", choices=TRANSPORTS, help="how clients connect (default: MCP_TRANSPORT or stdio)")
    parser.add_argument("--host", help="interface to listen on (default: MCP_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="TCP port, 0 for any free one (default: MCP_PORT or 8000)")
    parser.add_argument("--path", help="URL path (default: MCP_SSE_PATH /sse or MCP_STREAMABLE_PATH /mcp)")
    parser.add_argument(
        "--token",
        type=_token_argument,
        help=f"HTTP only: every request must send 'Authorization: Bearer <token>' (default: {TOKEN_VARIABLE}; "
        "prefer the variable, as other users can read command lines with ps)",
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        help="streamable HTTP only: serve from this many processes, for a large class (default 1; needs --stateless)",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="streamable HTTP only: keep no session between requests, so any worker can answer any request "
        "(required with --workers; the server can then send no requests of its own to clients)",
    )


def _positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, not {text!r}")
    return int(text)


def _token_argument(text: str) -> str:
    try:
        return check_token(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def serve(args: argparse.Namespace) -> int:
    """Run the server chosen with ``--server`` (the calculator by default) with the options given, falling back to
    settings."""
    settings = load_settings()
    transport = args.transport or settings.mcp_transport
    host = args.host or settings.mcp_host
    if transport == "stdio" and args.token:
        raise ConfigError("--token protects an HTTP server: add --transport streamable-http or sse, or drop --token")
    # A student's MCP_AUTH_TOKEN (for reaching the class server) must not stop their own stdio servers.
    token = None if transport == "stdio" else args.token or settings.mcp_auth_token
    try:
        check_class_mode(transport, args.workers, args.stateless)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if transport != "stdio" and not is_loopback(host):
        if not token:
            raise ConfigError(
                f"--host {host} makes the server reachable from other machines, and without a class secret anyone "
                f"who reaches it may use it (the notes server's demo users have public tokens). Set {TOKEN_VARIABLE} "
                f"to a class secret ({TOKEN_RULE}) and give each student their own token with "
                "'mcp-teach class-tokens', or listen on 127.0.0.1."
            )
        print(f"warning: listening on {host}, reachable from other machines", file=sys.stderr)
    if token:  # a server that maps tokens to users (the notes server) reads it there, in every worker process
        os.environ[TOKEN_VARIABLE] = token
    port = settings.mcp_port if args.port is None else args.port
    path = args.path or settings.path_for(transport)
    run_server(
        transport,
        host=host,
        port=port,
        path=path,
        token=token,
        workers=args.workers,
        stateless=args.stateless,
        server_name=args.server,
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m mcp_teach.serve``: exit code 0 on Ctrl-C or SIGTERM, 2 for a bad setting."""
    parser = argparse.ArgumentParser(
        prog="python -m mcp_teach.serve", description="Run a course MCP server (the calculator by default)."
    )
    add_serve_arguments(parser)
    return run_reporting_errors(serve, parser.parse_args(argv))


def capstone_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``mcp-teach-capstone``, what a host or ``uvx`` starts: the capstone server, over stdio unless
    ``--transport`` says otherwise (the options are ``mcp-teach serve``'s)."""
    parser = argparse.ArgumentParser(prog="mcp-teach-capstone", description="Run the course's capstone MCP server.")
    add_serve_arguments(parser, server="capstone")
    return run_reporting_errors(serve, parser.parse_args(argv))


def run_reporting_errors(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``command(args)``, its exit code; an error every command may meet is one line on stderr, not a traceback."""
    try:
        return command(args)
    except ConfigError as error:
        print(f"mcp-teach: configuration error: {error}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, BrokenPipeError):
        return 0  # Ctrl-C, or the reader went away (e.g. `mcp-teach demo | head`)
    except OSError as error:
        print(f"mcp-teach: cannot start: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
