"""The ``mcp-teach`` command line."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx2
from mcp.shared.exceptions import MCPError

from mcp_teach.class_server import check_class_mode
from mcp_teach.class_token import HOW_TO_AUTHENTICATE, TOKEN_VARIABLE, check_token
from mcp_teach.config import ConfigError, load_settings
from mcp_teach.llm.errors import LLMError
from mcp_teach.runners import LOOPBACK, TRANSPORTS, run_server

DEMO_QUESTION = "multiply 3 by 4, then subtract 5"
URL_HELP = (
    "talk to a server that is already running, e.g. started with 'mcp-teach serve' in another terminal "
    "(a URL ending in /sse uses SSE, any other streamable HTTP); --transport is then ignored"
)


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared by ``mcp-teach serve`` and ``python -m mcp_teach.server``."""
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


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def serve(args: argparse.Namespace) -> int:
    """Run the calculator server with the options given, falling back to settings."""
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
    if transport != "stdio" and not _is_loopback(host):
        unguarded = "" if token else f"; anyone who reaches it may use it unless you set {TOKEN_VARIABLE}"
        print(f"warning: listening on {host}, reachable from other machines{unguarded}", file=sys.stderr)
    run_server(
        transport,
        host=host,
        port=settings.mcp_port if args.port is None else args.port,
        path=args.path or settings.path_for(transport),
        token=token,
        workers=args.workers,
        stateless=args.stateless,
    )
    return 0


def serve_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m mcp_teach.server``."""
    parser = argparse.ArgumentParser(prog="python -m mcp_teach.server", description="Run the calculator MCP server.")
    add_serve_arguments(parser)
    return _run(serve, parser.parse_args(argv))


def execute_notebooks(args: argparse.Namespace) -> int:
    """Re-run lesson notebooks in fresh kernels and save their outputs."""
    from mcp_teach.authoring import execute_notebook, lesson_notebooks

    for path in args.notebooks or lesson_notebooks():
        print(f"executing {path} ...", file=sys.stderr, flush=True)
        execute_notebook(path)
    return 0


def student_copy(args: argparse.Namespace) -> int:
    """Write student versions of notebooks: solutions replaced, exercise outputs cleared."""
    from mcp_teach.exercises.convention import ConventionError
    from mcp_teach.exercises.student_copy import describe_copy, plan_copies, write_copies

    try:
        plans = plan_copies(args.paths, args.output)
    except (ConventionError, ValueError, FileNotFoundError) as error:
        print(f"mcp-teach student-copy: {error}", file=sys.stderr)
        return 2
    if not plans:
        print("mcp-teach student-copy: no notebooks found", file=sys.stderr)
        return 2
    write_copies(plans)
    for plan in plans:
        print(describe_copy(plan))
    return 0


def grade(args: argparse.Namespace) -> int:
    """Run submitted notebooks in fresh kernels and report each exercise; 0 only if all passed."""
    from mcp_teach.exercises.grading import all_passed, default_csv, grade_all, report, submissions, write_csv
    from mcp_teach.exercises.kernel import Limits

    try:
        if not submissions(args.path):
            print(f"mcp-teach grade: no notebooks in {args.path}", file=sys.stderr)
            return 2
    except FileNotFoundError as error:
        print(f"mcp-teach grade: {error}", file=sys.stderr)
        return 2
    limits = Limits(cell_timeout=args.timeout, time_limit=args.time_limit)
    try:
        results = grade_all(args.path, limits, lambda line: print(line, file=sys.stderr, flush=True))
    except KeyboardInterrupt:
        print("mcp-teach grade: interrupted, no report written", file=sys.stderr)
        return 130
    csv_path = args.csv or default_csv(args.path)
    write_csv(results, csv_path)
    print(report(results))
    print(f"report written to {csv_path}")
    return 0 if all_passed(results) else 1


def demo(args: argparse.Namespace) -> int:
    """The whole tour in a terminal."""
    from mcp_teach.terminal import run_demo

    asyncio.run(run_demo(load_settings(), args.transport, args.question, print, url=args.url))
    return 0


def chat(args: argparse.Namespace) -> int:
    """An interactive chat with the calculator through the LLM loop."""
    from mcp_teach.terminal import run_chat

    asyncio.run(run_chat(load_settings(), args.transport, input, print, url=args.url))
    return 0


def serve_model(args: argparse.Namespace) -> int:
    """Serve the offline teaching model over HTTP (OpenAI-compatible)."""
    from mcp_teach.llm.serve import run_model_server

    run_model_server(host=args.host, port=args.port, api_key=args.api_key)
    return 0


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-teach", description="The mcp-teach course companion.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve", help="run the calculator MCP server")
    add_serve_arguments(serve_parser)
    serve_parser.set_defaults(handler=serve)
    transports = ("stdio", "sse", "streamable-http", "in-memory")
    demo_parser = commands.add_parser("demo", help="the whole tour in a terminal: every message printed")
    demo_parser.add_argument("--transport", choices=transports, default="stdio", help="how to reach the server")
    demo_parser.add_argument("--question", default=DEMO_QUESTION, help="what to ask the LLM")
    demo_parser.add_argument("--url", help=URL_HELP)
    demo_parser.set_defaults(handler=demo)
    chat_parser = commands.add_parser("chat", help="chat with the calculator through the LLM tool loop")
    chat_parser.add_argument("--transport", choices=transports, default="stdio", help="how to reach the server")
    chat_parser.add_argument("--url", help=URL_HELP)
    chat_parser.set_defaults(handler=chat)
    model_parser = commands.add_parser("model", help="the offline teaching model")
    model_commands = model_parser.add_subparsers(dest="model_command", required=True)
    model_serve = model_commands.add_parser("serve", help="serve it as an OpenAI-compatible API on loopback")
    model_serve.add_argument("--host", default=LOOPBACK, help="interface to listen on (default 127.0.0.1)")
    model_serve.add_argument("--port", type=int, default=8001, help="TCP port (default 8001, 0 for any)")
    model_serve.add_argument("--api-key", help="require this key (default: accept any)")
    model_serve.set_defaults(handler=serve_model)
    copy_parser = commands.add_parser(
        "student-copy", help="write student versions of the lessons (solutions replaced, exercise outputs cleared)"
    )
    copy_parser.add_argument("paths", nargs="+", type=Path, help="notebooks, or folders of notebooks (*.ipynb)")
    copy_parser.add_argument(
        "-o", "--output", type=Path, required=True, help="folder to write to (not the source folder)"
    )
    copy_parser.set_defaults(handler=student_copy)
    grade_parser = commands.add_parser("grade", help="run submitted notebooks and report every exercise")
    grade_parser.add_argument("path", type=Path, help="a notebook, or a folder searched recursively for *.ipynb")
    grade_parser.add_argument(
        "--timeout", type=_seconds, default=120, metavar="SECONDS", help="how long one cell may run (default 120)"
    )
    grade_parser.add_argument(
        "--time-limit",
        type=_seconds,
        default=900,
        metavar="SECONDS",
        help="how long one notebook may run (default 900)",
    )
    grade_parser.add_argument(
        "--csv",
        type=Path,
        metavar="PATH",
        help="where to write the CSV report (default: grades.csv in the graded folder)",
    )
    grade_parser.set_defaults(handler=grade)
    execute_parser = commands.add_parser(
        "execute-notebooks", help="re-run the lesson notebooks and save their outputs (for contributors)"
    )
    execute_parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/[0-9][0-9]_*.ipynb")
    execute_parser.set_defaults(handler=execute_notebooks)
    return parser


def _run(handler, args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except ConfigError as error:
        print(f"mcp-teach: configuration error: {error}", file=sys.stderr)
        return 2
    except LLMError as error:
        print(f"mcp-teach: LLM error: {error}", file=sys.stderr)
        return 1
    except MCPError as error:  # e.g. a class server's 401 over streamable HTTP: its message says how to authenticate
        print(f"mcp-teach: MCP error: {error}", file=sys.stderr)
        return 1
    except httpx2.HTTPStatusError as error:  # e.g. a class server's 401 over SSE, which reaches us without its body
        status, reason = error.response.status_code, error.response.reason_phrase
        hint = f" {HOW_TO_AUTHENTICATE}" if status == 401 else ""
        print(f"mcp-teach: {error.request.url} answered {status} {reason}.{hint}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, BrokenPipeError):
        return 0  # Ctrl-C, or the reader went away (e.g. `mcp-teach demo | head`)
    except OSError as error:
        print(f"mcp-teach: cannot start: {error}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcp-teach`` console script."""
    args = build_parser().parse_args(argv)
    return _run(args.handler, args)
