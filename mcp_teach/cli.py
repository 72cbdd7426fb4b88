"""The ``mcp-teach`` command line.

Libraries are imported by the command that needs them: ``mcp-teach tap`` is started by a host for every
connection and must start in a few tens of milliseconds, so it runs before anything else is imported.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from mcp_teach.config import LANGUAGES, LOOPBACK, load_settings

DEMO_QUESTION = "multiply 3 by 4, then subtract 5"
URL_HELP = (
    "talk to a server that is already running, e.g. started with 'mcp-teach serve' in another terminal "
    "(a URL ending in /sse uses SSE, any other streamable HTTP); --transport is then ignored"
)


def refused(command: str, why: object, exit_code: int = 2) -> int:
    """Say on stderr why ``mcp-teach COMMAND`` stopped; the exit code it ends with."""
    print(f"mcp-teach {command}: {why}", file=sys.stderr)
    return exit_code


def lab(args: argparse.Namespace) -> int:
    """Open the lessons in JupyterLab at the first lesson (replaces this process, so Ctrl-C stops JupyterLab as usual).

    No folder named: a clone's ``notebooks/``, else the course folder this is run in, else the course copied from
    the installed package into ``./mcp-teach-course`` (an earlier copy is opened as it is, never overwritten).
    """
    from mcp_teach.course.course_folder import CourseFolderError, first_lesson

    folder = args.folder
    if folder is None:
        try:
            folder = _course_to_open(args.lang)
        except CourseFolderError as error:
            return refused("lab", error)
    if not folder.is_dir():
        print(f"mcp-teach lab: no folder {folder}: run it from the course's folder, or name the lessons' folder")
        return 2
    opened = first_lesson(folder) or folder  # JupyterLab serves the lesson's folder and opens the lesson
    command = [sys.executable, "-m", "jupyterlab", str(opened), *args.jupyter_args]
    if os.name == "posix" and os.geteuid() == 0 and "--allow-root" not in command:
        command.append("--allow-root")  # containers often run as root, which JupyterLab refuses without it
    print("Opening JupyterLab; stop it with Ctrl-C (twice) here, or File → Shut Down in JupyterLab.", flush=True)
    os.execv(sys.executable, command)
    return 0  # not reached: execv replaces this process


def _course_to_open(language: str) -> Path:
    from mcp_teach.course.course_folder import MANIFEST, copy_course, default_folder, edition, first_lesson

    (clone,) = edition((Path("notebooks"),), language)
    if first_lesson(clone):
        return clone
    if Path(MANIFEST).is_file():
        return Path(".")
    copy_course(default_folder(language), language=language)
    return default_folder(language)


def lessons(args: argparse.Namespace) -> int:
    """Copy the course from the installed package into a folder of the student's, or bring that copy up to date."""
    from mcp_teach.course.course_folder import CourseFolderError, copy_course, default_folder

    args.folder = args.folder or default_folder(args.lang)
    try:
        plan = copy_course(args.folder, update=args.update, language=args.lang)
    except CourseFolderError as error:
        return refused("lessons", error)
    if plan.first_copy:
        print(f"open them with: mcp-teach lab {shlex.quote(str(args.folder))}")
    return 0


def execute_notebooks(args: argparse.Namespace) -> int:
    """Re-run the solved lessons in fresh kernels, save their outputs, and rebuild the blank lessons."""
    from mcp_teach.course.authoring import SOLUTIONS, course_notebooks, execute_notebook

    for path in args.notebooks or course_notebooks(SOLUTIONS):
        print(f"executing {path} ...", file=sys.stderr, flush=True)
        execute_notebook(path)
    return build(args)


def build(args: argparse.Namespace) -> int:
    """Rebuild nbgrader's metadata and the blank lessons from notebooks/solutions/ (or the solved lessons named)."""
    from mcp_teach.course.authoring import build_lessons

    for path in build_lessons(args.notebooks or None):
        print(f"wrote {path}")
    return 0


def student_copy(args: argparse.Namespace) -> int:
    """Write student versions of notebooks: solutions replaced, exercise outputs cleared."""
    from mcp_teach.exercises.student_copy import describe_copy, plan_copies, write_copies

    try:
        plans = plan_copies(args.paths, args.output)
    except (ValueError, FileNotFoundError) as error:  # malformed exercise tags (ConventionError) included
        return refused("student-copy", error)
    if not plans:
        return refused("student-copy", "no notebooks found")
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
            return refused("grade", f"no notebooks in {args.path}")
    except FileNotFoundError as error:
        return refused("grade", error)
    limits = Limits(cell_timeout=args.timeout, time_limit=args.time_limit)
    try:
        results = grade_all(args.path, limits, lambda line: print(line, file=sys.stderr, flush=True))
    except KeyboardInterrupt:
        return refused("grade", "interrupted, no report written", 130)
    csv_path = args.csv or default_csv(args.path)
    write_csv(results, csv_path)
    print(report(results))
    print(f"report written to {csv_path}")
    return 0 if all_passed(results) else 1


def demo(args: argparse.Namespace) -> int:
    """The whole tour in a terminal."""
    from mcp_teach.course.terminal import run_demo

    asyncio.run(run_demo(load_settings(), args.transport, args.question, print, url=args.url))
    return 0


def chat(args: argparse.Namespace) -> int:
    """An interactive chat with the calculator through the LLM loop."""
    from mcp_teach.course.terminal import run_chat

    asyncio.run(run_chat(load_settings(), args.transport, input, print, url=args.url))
    return 0


def serve_model(args: argparse.Namespace) -> int:
    """Serve the offline teaching model over HTTP (OpenAI- and Anthropic-compatible)."""
    from mcp_teach.llm.serve import run_model_server

    run_model_server(host=args.host, port=args.port, api_key=args.api_key)
    return 0


def class_tokens(args: argparse.Namespace) -> int:
    """Print each student's own token for the class server whose secret is ``MCP_AUTH_TOKEN``."""
    from mcp_teach.config import TOKEN_RULE, TOKEN_VARIABLE
    from mcp_teach.servers.student_tokens import student_token

    secret = load_settings().mcp_auth_token
    if not secret:
        started = f"the one 'mcp-teach serve' is started with; {TOKEN_RULE}"
        return refused("class-tokens", f"set {TOKEN_VARIABLE} to the class secret first ({started})")
    names = list(args.names)
    if args.roster is not None:
        try:
            lines = args.roster.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            return refused("class-tokens", f"cannot read the roster {args.roster}: {error.strerror}")
        names += [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not names:
        return refused("class-tokens", "name the students, or pass --roster FILE (one name a line)")
    try:
        rows = [f"{name}\t{student_token(secret, name)}" for name in dict.fromkeys(names)]
    except ValueError as error:
        return refused("class-tokens", error)
    print("\n".join(rows))
    return 0


TAP_USAGE = (
    "mcp-teach tap --out FILE -- COMMAND [ARGS...]\n"
    "       mcp-teach tap --out FILE --listen 127.0.0.1:PORT --upstream URL"
)
TAP_PARSER = {
    "help": "record what any host sends: run it in front of a stdio server command, or as an HTTP proxy",
    "usage": TAP_USAGE,
    "description": (
        "stdio: a host starts 'mcp-teach tap --out FILE -- COMMAND...' instead of COMMAND; the tap starts the "
        "server, relays its stdin/stdout byte for byte (stderr passed through) and appends every message to FILE "
        "(JSON Lines). HTTP: a reverse proxy on --listen that forwards every request to --upstream and records the "
        "exchanges (SSE events as they stream). Credentials are redacted in FILE, never on the wire. In a "
        "notebook: load_tap(FILE) from mcp_teach.wire.host_tap_recording gives a Capture; to_har() in "
        "mcp_teach.wire.har exports HTTP to HAR 1.2."
    ),
}


def add_tap_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="the recording (appended to)")
    parser.add_argument("--listen", metavar="HOST:PORT", help="HTTP: where the proxy listens (PORT 0: any free one)")
    parser.add_argument("--upstream", metavar="URL", help="HTTP: the MCP server's URL, e.g. http://127.0.0.1:8000/mcp")


def tap(argv: list[str]) -> int:
    """``mcp-teach tap``: a stdio relay (``-- COMMAND...``) or an HTTP proxy (``--listen``, ``--upstream``)."""
    split = argv.index("--") if "--" in argv else len(argv)
    options, command, separator = argv[:split], argv[split + 1 :], split < len(argv)
    parser = argparse.ArgumentParser(prog="mcp-teach tap", **{k: v for k, v in TAP_PARSER.items() if k != "help"})
    add_tap_arguments(parser)
    args = parser.parse_args(options)
    http = args.listen is not None or args.upstream is not None
    if http and (separator or args.listen is None or args.upstream is None):
        parser.error("an HTTP tap needs both --listen and --upstream, and no '-- COMMAND'")
    if not http and not command:
        parser.error("give the server command after '--', or --listen and --upstream for HTTP")
    try:
        if http:
            from mcp_teach.wire.host_tap_http import run_http_tap

            return run_http_tap(args.out, args.listen, args.upstream)
        from mcp_teach.wire.host_tap_stdio import run_stdio_tap

        return run_stdio_tap(args.out, command)
    except (ValueError, OSError) as error:  # a bad --listen or --upstream, a recording or port not to be had
        parser.error(str(error))


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-teach", description="The mcp-teach course companion.")
    commands = parser.add_subparsers(dest="command", required=True)
    lab_parser = commands.add_parser("lab", help="open the lessons in JupyterLab (works as root too)")
    lab_parser.add_argument(
        "folder",
        nargs="?",
        type=Path,
        help="the lessons (default: ./notebooks in a clone, else the course copied into ./mcp-teach-course)",
    )
    lab_parser.add_argument(
        "jupyter_args", nargs=argparse.REMAINDER, help="passed on to jupyter lab (write options as --port=9000)"
    )
    lab_parser.add_argument("--lang", choices=LANGUAGES, default="en", help="the course's language (zh: Chinese)")
    lab_parser.set_defaults(handler=lab)
    lessons_parser = commands.add_parser(
        "lessons",
        help="copy the course (lessons and solved lessons) from the installed package into a folder of yours",
        description=(
            "Copies the blank lessons and, in solutions/, the solved ones into FOLDER and records what it copied "
            "(FOLDER/.mcp-teach-course.json). Run again after upgrading mcp-teach: it says what is new or changed, "
            "and --update copies those; a lesson you edited is never overwritten."
        ),
    )
    lessons_parser.add_argument(
        "folder", nargs="?", type=Path, help="default: ./mcp-teach-course (./mcp-teach-course-zh with --lang zh)"
    )
    lessons_parser.add_argument("--lang", choices=LANGUAGES, default="en", help="the course's language (zh: Chinese)")
    lessons_parser.add_argument(
        "--update", action="store_true", help="copy new and changed lessons into an earlier copy (edited ones are kept)"
    )
    lessons_parser.set_defaults(handler=lessons)
    from mcp_teach.serve import add_serve_arguments, serve

    serve_parser = commands.add_parser("serve", help="run a course MCP server (default: the calculator)")
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
    model_serve = model_commands.add_parser("serve", help="serve it on loopback (OpenAI and Anthropic APIs)")
    model_serve.add_argument("--host", default=LOOPBACK, help="interface to listen on (default 127.0.0.1)")
    model_serve.add_argument("--port", type=int, default=8001, help="TCP port (default 8001, 0 for any)")
    model_serve.add_argument("--api-key", help="require this key (default: accept any)")
    model_serve.set_defaults(handler=serve_model)
    tokens_parser = commands.add_parser(
        "class-tokens",
        help="print each student's own token for a class server (from the class secret in MCP_AUTH_TOKEN)",
        description=(
            "Each student gets their own token, derived from the class secret, so a class server tells students "
            "apart: their own notes, sessions and rate limit. Prints NAME<TAB>TOKEN, one student a line. Give "
            "each student only their own token; the class secret itself is the instructor's (admin)."
        ),
    )
    tokens_parser.add_argument("names", nargs="*", help="the students' names (lower-case letters, digits, - and _)")
    tokens_parser.add_argument("--roster", type=Path, metavar="FILE", help="a file of names, one a line (# comments)")
    tokens_parser.set_defaults(handler=class_tokens)
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
        "execute-notebooks",
        help="re-run the solved lessons, save their outputs and rebuild the blank lessons (for contributors)",
    )
    execute_parser.add_argument(
        "notebooks", nargs="*", type=Path, help="default: notebooks/solutions/[0-9][0-9]_*.ipynb"
    )
    execute_parser.set_defaults(handler=execute_notebooks)
    build_parser_ = commands.add_parser(
        "build-lessons", help="rebuild the blank lessons (and nbgrader's metadata) from notebooks/solutions/"
    )
    build_parser_.add_argument(
        "notebooks", nargs="*", type=Path, help="solved lessons (default: notebooks/solutions/[0-9][0-9]_*.ipynb)"
    )
    build_parser_.set_defaults(handler=build)
    add_tap_arguments(commands.add_parser("tap", **TAP_PARSER))
    from mcp_teach.course.conformance import add_conformance_parser

    add_conformance_parser(commands)
    from mcp_teach.course.nbgrader_course import add_nbgrader_course_parser

    add_nbgrader_course_parser(commands)
    return parser


def _reporting_client_errors(args: argparse.Namespace) -> int:
    """``args.handler(args)``; what a model or a server answered wrong is one line on stderr, exit code 1."""
    import httpx2
    from mcp.shared.exceptions import MCPError

    from mcp_teach.llm.errors import LLMError
    from mcp_teach.transports.class_token import HOW_TO_AUTHENTICATE

    try:
        return args.handler(args)
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcp-teach`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["tap"]:
        return tap(argv[1:])  # first, before the other commands' libraries are imported
    from mcp_teach.serve import run_reporting_errors

    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # JupyterLab's own options (mcp-teach lab --no-browser --port=9000) go to JupyterLab
        if args.command != "lab":
            parser.parse_args(argv)  # exits with argparse's message naming them
        args.jupyter_args = [*unknown, *args.jupyter_args]
    return run_reporting_errors(_reporting_client_errors, args)
