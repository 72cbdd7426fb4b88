"""The notes server of lesson 12: four tools over a folder of notes, behind four permission gates.

``save_note(title, content)``, ``list_notes()``, ``read_note(note_id)``, ``delete_note(note_id)`` over a
:class:`~mcp_teach.servers.notes_store.NoteStore` (the folder ``MCP_TEACH_NOTES_DIR``, by default a per-user data
folder); every title and id is checked before it becomes a path. The gates (:mod:`.gates`): who is calling
(bearer token -> user and role), which tools each role sees, which calls pass (role, rate limit, write hours) and
which notes each user may touch. Roles: ``admin`` all four tools on every note; ``student`` all four on their
own notes; ``readonly`` ``list_notes`` and ``read_note`` on every note.

**Users from a terminal** (``mcp-teach serve --server notes --transport streamable-http``):

- with ``MCP_AUTH_TOKEN`` set (the class secret), each student has their own token derived from it
  (:mod:`.student_tokens`, printed by ``mcp-teach class-tokens``): the student's name is the user (role
  ``student``), and the secret itself is the user ``instructor`` (role ``admin``). One shared token would make the
  whole class one user, able to read and delete each other's notes. ``mcp-teach serve --token`` sets the
  variable for the server it builds. Names that already mean someone else on a notes folder (``local``, the demo
  users, the roles, ``instructor``: :data:`~.student_tokens.RESERVED_NAMES`) are no student's.
- without it, the demo table :data:`DEMO_USERS`: ``alice`` and ``bob`` (students), ``carol`` (admin), ``dave``
  (readonly), with tokens that are public on purpose (``demo-alice-token-not-a-secret``...): for a loopback
  server in a lesson only.
- over stdio there is no request to authenticate: the calls are the local user's (``local``, admin), as the
  specification has it for stdio ("retrieve credentials from the environment", 2026-07-28,
  basic/authorization/index).

Each user keeps at most :data:`~.notes_store.MAX_NOTES_PER_USER` notes and :data:`~.notes_store.MAX_BYTES_PER_USER`
bytes of them, and the folder is private to the user who runs the server (:mod:`.notes_store` says why, and what
a shared machine cannot promise).

In-process (tests, the lesson) pass ``users=`` (token -> :class:`~mcp_teach.servers.gates.User`) or ``auth=``
(any fastmcp auth provider, e.g. ``InMemoryOAuthProvider``: its tokens' scopes name the role), ``clock=``
(a :class:`~mcp_teach.servers.gates.ManualClock`), ``notes_dir=``, ``denials=``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import datetime, time
from os import PathLike
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AuthProvider, TokenVerifier
from fastmcp.tools.base import ToolResult

from mcp_teach.config import load_settings
from mcp_teach.servers import gates
from mcp_teach.servers.explained_errors import ExplainingFastMCP
from mcp_teach.servers.notes_store import ID_RULE, NoteError, NoteNotFound, NoteOwned, NoteStore, OwnerRule
from mcp_teach.servers.rate_limits import FILE_NAME as RATE_LIMITS_FILE
from mcp_teach.servers.rate_limits import SharedSlidingWindow
from mcp_teach.servers.student_tokens import StudentTokens

SERVER_NAME = "mcp-teach-notes"
SERVER_VERSION = "1.0.0"
SERVER_INSTRUCTIONS = (
    "Notes for the mcp-teach course: save_note, list_notes, read_note, delete_note. A note's id is its title in "
    "lower case. What you may do depends on your role; a refusal says what is allowed."
)
READ_TOOLS = frozenset({"list_notes", "read_note"})
WRITE_TOOLS = frozenset({"save_note", "delete_note"})
ALL_TOOLS = READ_TOOLS | WRITE_TOOLS
ROLES: dict[str, frozenset[str]] = {"admin": ALL_TOOLS, "student": ALL_TOOLS, "readonly": READ_TOOLS}
#: The limits: 30 calls a minute, writes in the day only.
DEFAULT_CALLS_PER_MINUTE = 30
DEFAULT_WRITE_HOURS = gates.WriteHours(time(8, 0), time(22, 0))
#: Who calls over stdio or in memory, where there is no bearer token: the user who started the server.
LOCAL_USER = gates.User("local", "admin")
#: Public demo tokens (loopback lessons only; obviously not secrets) -> users.
DEMO_USERS: dict[str, gates.User] = {
    "demo-alice-token-not-a-secret": gates.User("alice", "student"),
    "demo-bob-token-not-a-secret": gates.User("bob", "student"),
    "demo-carol-token-not-a-secret": gates.User("carol", "admin"),
    "demo-dave-token-not-a-secret": gates.User("dave", "readonly"),
}


def configured_write_hours() -> gates.WriteHours:
    """``MCP_TEACH_WRITE_HOURS`` (an evening class sets ``08:00-23:30``), else 08:00-22:00."""
    hours = load_settings().write_hours
    return gates.WriteHours(*hours) if hours else DEFAULT_WRITE_HOURS


def terminal_auth() -> TokenVerifier:
    """Gate 1 of a server started from a terminal: students' own tokens from the class secret, else the demo table."""
    secret = load_settings().mcp_auth_token
    return StudentTokens(secret) if secret else gates.UserTokens(DEMO_USERS, known_roles=list(ROLES))


def _refused(error: Exception) -> ToolResult:
    """A bad title or id, or no such note: a tool execution error the model can correct (2026-07-28, server/tools,
    Error Handling), returned rather than raised so the server logs no traceback for a student's typo."""
    return ToolResult(content=str(error), is_error=True)


def build_notes_server(
    *,
    auth: AuthProvider | None = None,
    users: Mapping[str, gates.User] | None = None,
    notes_dir: str | PathLike[str] | None = None,
    clock: gates.Clock = datetime.now,
    denials: gates.DenialStyle = "tool-error",
    calls_per_minute: int = DEFAULT_CALLS_PER_MINUTE,
    write_hours: gates.WriteHours | None = None,
) -> FastMCP:
    """A fresh notes server behind the four gates (see the module docstring for every option).

    ``auth`` (a fastmcp auth provider) or ``users`` (bearer token -> user) authenticate HTTP requests; with
    neither, :func:`terminal_auth`. ``denials``: ``"tool-error"`` (``isError: true``, the spec's) or ``"text"``
    (``isError: false``, plain text); :mod:`.gates` says why the default.
    """
    if auth is not None and users is not None:
        raise ValueError("pass auth= (a fastmcp auth provider) or users= (token -> User), not both")
    store = NoteStore(notes_dir)
    policy = gates.Policy(
        tools_by_role=ROLES,
        write_tools=WRITE_TOOLS,
        resource_arguments={"read_note": "note_id", "delete_note": "note_id", "save_note": "title"},
        read_all_roles=frozenset({"readonly"}),
        change_all_roles=frozenset({"admin"}),
        calls_per_minute=calls_per_minute,
        write_hours=write_hours or configured_write_hours(),
        denials=denials,
    )
    auth = auth or (terminal_auth() if users is None else gates.UserTokens(users, known_roles=list(ROLES)))
    server = ExplainingFastMCP(SERVER_NAME, instructions=SERVER_INSTRUCTIONS, version=SERVER_VERSION, auth=auth)

    def caller() -> gates.User:
        user = gates.current_user(list(ROLES), LOCAL_USER)
        if user is None:  # the gates refuse such calls before any tool runs
            raise ToolError("This request names no user.")
        return user

    def may_change(user: gates.User) -> OwnerRule:
        """Gate 4's rule for the store, which applies it under its lock: a damaged note (owner None) only for the
        roles that may change every note."""
        return lambda owner: user.role in policy.change_all_roles if owner is None else policy.may_change(user, owner)

    def refusals_answered(tool: Callable[..., str]) -> Callable[..., str | ToolResult]:
        """``tool`` with the store's refusals as its result: gate 4's, decided again on the note used where it cannot
        race, in the policy's style; a bad title or id, a full quota, or no such note, as :func:`_refused`."""

        @functools.wraps(tool)
        def answer(*args: Any, **kwargs: Any) -> str | ToolResult:
            try:
                return tool(*args, **kwargs)
            except NoteOwned as error:
                return policy.deny(str(error))
            except (NoteError, NoteNotFound) as error:
                return _refused(error)

        return answer

    def save_note(title: str, content: str) -> str:
        """Save a note under a title (its id is the title in lower case); saving an existing title replaces it."""
        user = caller()
        note = store.save(title, content, owner=user.name, may_change=may_change(user))
        return f"Saved note {note.note_id!r} (owner {note.owner}, {len(note.content)} characters)."

    def list_notes() -> str:
        """List the notes you may read: id, title and owner of each, and which files were skipped as no notes."""
        user = caller()
        listing = store.scan()
        notes = [note for note in listing.notes if policy.may_read(user, note.owner)]
        lines = [f"- {note.note_id}: {note.title} (owner {note.owner})" for note in notes]
        if notes:
            text = f"Notes {user.name} may read ({len(notes)}):\n" + "\n".join(lines)
        else:
            text = f"No notes that {user.name} may read yet. save_note creates one."
        if listing.skipped:
            count = len(listing.skipped)
            text += (
                f"\nSkipped {count} {'file' if count == 1 else 'files'} in the notes folder that are not notes this "
                f"server wrote: {', '.join(map(repr, listing.skipped))}. read_note on one says why and what to do."
            )
        return text

    def read_note(note_id: str) -> str:
        """Read one note by its id (list_notes shows the ids)."""
        note = store.read(note_id, may_read=functools.partial(policy.may_read, caller()))  # decided on the note read
        return f"Note {note.note_id!r}: {note.title} (owner {note.owner})\n\n{note.content}"

    def delete_note(note_id: str) -> str:
        """Delete one note by its id."""
        note = store.delete(note_id, may_change=may_change(caller()))
        if note is None:  # the id was checked by the store, so it is the file's name
            return f"Deleted the damaged file of the note {note_id.lower()!r}."
        return f"Deleted note {note.note_id!r} (owner {note.owner})."

    descriptions = {
        save_note: f"Save a note. The title becomes its id in lower case and must be {ID_RULE}.",
        list_notes: "List the notes you may read, with their ids and owners.",
        read_note: "Read a note by its id (see list_notes).",
        delete_note: "Delete a note by its id (see list_notes).",
    }
    for function, description in descriptions.items():
        server.tool(refusals_answered(function), description=description, output_schema=None)
    # One rate limit for every worker process serving this folder (a class server with --workers).
    window = SharedSlidingWindow(policy.calls_per_minute, clock, store.folder / RATE_LIMITS_FILE)
    gates.install_gates(server, policy, clock=clock, owner_of=store.owner_of, local_user=LOCAL_USER, window=window)
    return server
