"""Four permission gates, one behind the other, as fastmcp parts any course server can put in front of its tools.

1. the transport authenticates (:class:`UserTokens`: bearer token -> user, role as the token's scope; fastmcp's
   ``auth=`` answers 401 before any JSON-RPC is read); over stdio the calls are the local user's;
2. ``tools/list`` shows each role only its tools (:class:`ToolVisibility`);
3. ``tools/call`` checks the role, a sliding-window rate limit and the write hours (:class:`CallPermission`);
4. the arguments name only what the user may touch (:class:`ResourcePermission`).

Lesson 12 writes the four gate classes in its cells (the text here is theirs); :class:`Policy` holds the rules
they apply, :class:`ManualClock` lets tests and the lesson move time by hand. Every denial names the gate, who,
what, why and what would be allowed, as a tool execution error (``isError: true``) or, with
``denials="text"``, as plain text.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Any, Literal, Protocol

from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.server.dependencies import get_access_token, get_http_request
from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult

DenialStyle = Literal["tool-error", "text"]
DENIAL_STYLES: tuple[DenialStyle, ...] = ("tool-error", "text")
#: What a gate reads the time from: tests and the lesson pass a :class:`ManualClock`.
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class User:
    """Who is calling: a name (the owner recorded on notes) and a role (what the gates allow)."""

    name: str
    role: str

    def __str__(self) -> str:
        return f"{self.role} {self.name}"


@dataclass
class ManualClock:
    """A clock that moves only when told to: ``clock.set("21:30")``, ``clock.advance(seconds=61)``."""

    now: datetime = field(default_factory=lambda: datetime(2026, 7, 28, 10, 0))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        """Move on by a ``timedelta(**delta)`` (``minutes=1``, ``seconds=30``); returns the new time."""
        self.now += timedelta(**delta)
        return self.now

    def set(self, hh_mm: str) -> datetime:
        """Jump to ``"HH:MM"`` on the same day; returns the new time."""
        self.now = datetime.combine(self.now.date(), time.fromisoformat(hh_mm))
        return self.now


@dataclass(frozen=True)
class WriteHours:
    """The hours write tools may run, ``start`` inclusive to ``end`` exclusive (server time)."""

    start: time = time(8, 0)
    end: time = time(22, 0)

    def __contains__(self, moment: datetime) -> bool:
        return self.start <= moment.time() < self.end

    def __str__(self) -> str:
        return f"from {self.start:%H:%M} to {self.end:%H:%M} (server time)"


class RateWindow(Protocol):
    """What gate 3 counts calls with: :class:`SlidingWindow` in one process, or one shared by several."""

    def admit(self, who: str) -> float | None: ...


#: Write tools at any hour: for a cell or a check that is about something else than the time window.
ANY_TIME = WriteHours(time(0, 0), time.max)


@dataclass
class SlidingWindow:
    """At most ``limit`` calls per user in any ``seconds`` long window (not per calendar minute)."""

    limit: int
    clock: Clock
    seconds: float = 60.0
    _calls: dict[str, deque[datetime]] = field(default_factory=lambda: defaultdict(deque))

    def admit(self, who: str) -> float | None:
        """Count a call by ``who`` and return None, or return how many seconds until one is allowed again."""
        now = self.clock()
        calls = self._calls[who]
        while calls and (now - calls[0]).total_seconds() >= self.seconds:
            calls.popleft()
        if len(calls) >= self.limit:
            return self.seconds - (now - calls[0]).total_seconds()
        calls.append(now)
        return None


@dataclass(frozen=True)
class Policy:
    """What each role may do on one server: the rules the four gates apply.

    ``tools_by_role``: the tools each role sees and may call; ``write_tools``: those that change something (time
    window); ``resource_arguments``: tool -> the argument naming the resource it touches; ``read_all_roles`` /
    ``change_all_roles``: roles that may read / change resources owned by others.
    """

    tools_by_role: Mapping[str, frozenset[str]]
    write_tools: frozenset[str]
    resource_arguments: Mapping[str, str]
    read_all_roles: frozenset[str] = frozenset()
    change_all_roles: frozenset[str] = frozenset()
    calls_per_minute: int = 30
    write_hours: WriteHours = WriteHours()
    denials: DenialStyle = "tool-error"

    def __post_init__(self) -> None:
        if self.denials not in DENIAL_STYLES:
            raise ValueError(f"denials must be one of {', '.join(DENIAL_STYLES)}, not {self.denials!r}")
        if self.calls_per_minute < 1:
            raise ValueError(f"calls_per_minute must be 1 or more, not {self.calls_per_minute!r}")

    def may_read(self, user: User, owner: str) -> bool:
        return owner == user.name or user.role in self.read_all_roles or user.role in self.change_all_roles

    def may_change(self, user: User, owner: str) -> bool:
        return owner == user.name or user.role in self.change_all_roles

    def roles_allowed(self, tool: str) -> list[str]:
        return [role for role, tools in self.tools_by_role.items() if tool in tools]

    def deny(self, text: str) -> ToolResult:
        """A refusal in the chosen style: ``isError: true`` (the spec's) or ``false`` (plain text)."""
        return ToolResult(content=text, is_error=self.denials == "tool-error")


# Gate 1 -------------------------------------------------------------------------------------------------------


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


class UserTokens(TokenVerifier):
    """Gate 1 for fixed tokens: each bearer token names one :class:`User`; an unknown token gets fastmcp's 401.

    Only digests of the tokens are kept (nothing to print by accident), and a lookup by digest takes the same
    time however much of a guess is right. The user's role travels as the token's only scope, the way an OAuth
    token's scopes do.
    """

    def __init__(self, users: Mapping[str, User], known_roles: Sequence[str] | None = None) -> None:
        super().__init__()
        for user in users.values():
            if known_roles is not None and user.role not in known_roles:
                raise ValueError(f"user {user.name!r} has role {user.role!r}; known roles: {', '.join(known_roles)}")
        self._users = {_digest(token): user for token, user in users.items()}

    async def verify_token(self, token: str) -> AccessToken | None:
        user = self._users.get(_digest(token))
        if user is None:
            return None
        return AccessToken(
            token=token, client_id=user.name, scopes=[user.role], claims={"sub": user.name, "role": user.role}
        )


def current_user(roles: Sequence[str], local_user: User | None) -> User | None:
    """Who makes the current request: the HTTP request's token (gate 1), or ``local_user`` over stdio/in memory.

    The token names the user by its ``sub`` claim (else its client id) and the role by the first of its scopes that
    is one, the way an OAuth token's scopes say what it may do.
    """
    try:
        get_http_request()
    except RuntimeError:  # no HTTP request: stdio or in memory, credentials "from the environment"
        return local_user
    token = get_access_token()
    role = None if token is None else next((scope for scope in token.scopes if scope in roles), None)
    return None if role is None else User(str(token.claims.get("sub") or token.client_id), role)


@dataclass
class Gate(Middleware):
    """What every gate knows: the policy and who is calling."""

    policy: Policy
    local_user: User | None = None

    def user(self) -> User | None:
        return current_user(list(self.policy.tools_by_role), self.local_user)


class Authenticated(Gate):
    """Gate 1 inside the server: a call must come from a user with a known role (fastmcp's auth did the 401s).

    Refuses what got past the transport without one: an HTTP server built without ``auth=``, or an OAuth token
    whose scopes name no role.
    """

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        if self.user() is None:
            roles = ", ".join(self.policy.tools_by_role)
            return self.policy.deny(
                f"Denied by gate 1 (authentication): this request names no user with a role, so no tool may run. "
                f"Send 'Authorization: Bearer <token>' with a token issued for one of the roles {roles}."
            )
        return await call_next(context)


class ToolVisibility(Gate):
    """Gate 2: ``tools/list`` answers each role only the tools it may call (nobody: no tools)."""

    async def on_list_tools(self, context: MiddlewareContext, call_next: Any) -> Any:
        tools = await call_next(context)
        user = self.user()
        allowed = self.policy.tools_by_role.get(user.role, frozenset()) if user else frozenset()
        return [tool for tool in tools if tool.name in allowed]


@dataclass
class CallPermission(Gate):
    """Gate 3: the role may call the tool, the user is within the rate limit, a write tool is within its hours."""

    clock: Clock = datetime.now
    window: RateWindow | None = None

    def __post_init__(self) -> None:
        if self.window is None:
            self.window = SlidingWindow(self.policy.calls_per_minute, self.clock)

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        user, tool, policy = self.user(), context.message.name, self.policy
        if user is None:  # gate 1 refuses these first; never let them through here either
            return policy.deny("Denied by gate 3: the request names no user.")
        allowed = policy.tools_by_role.get(user.role, frozenset())
        if tool not in allowed and tool in {name for tools in policy.tools_by_role.values() for name in tools}:
            return policy.deny(
                f"Denied by gate 3 (role): {user} may call {', '.join(sorted(allowed)) or 'no tools'}; "
                f"{tool} needs the role {' or '.join(policy.roles_allowed(tool))}."
            )
        wait = self.window.admit(user.name)
        if wait is not None:
            return policy.deny(
                f"Denied by gate 3 (rate limit): {user} made {policy.calls_per_minute} tool calls in the last "
                f"60 seconds, the most allowed per minute. Try again in {wait:.0f} seconds."
            )
        now = self.clock()
        if tool in policy.write_tools and now not in policy.write_hours:
            reads = ", ".join(sorted(allowed - policy.write_tools)) or "none"
            return policy.deny(
                f"Denied by gate 3 (time window): {tool} changes data and is allowed {policy.write_hours}; "
                f"it is {now:%H:%M}. Tools that only read ({reads}) work at any time; try {tool} again after "
                f"{policy.write_hours.start:%H:%M}."
            )
        return await call_next(context)


@dataclass
class ResourcePermission(Gate):
    """Gate 4: the resource an argument names (a note id) belongs to the user, or the role may touch all.

    ``owner_of(value)`` returns the owner, or None if there is no such resource yet (the tool itself then says
    "not found", or creates it for the user); a value that is no valid name goes on to the tool, which refuses it
    with the rule for names.
    """

    owner_of: Callable[[str], str | None] = lambda value: None

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        user, tool, policy = self.user(), context.message.name, self.policy
        argument = policy.resource_arguments.get(tool)
        value = (context.message.arguments or {}).get(argument) if argument else None
        if user is None or not isinstance(value, str):
            return await call_next(context)
        try:
            owner = self.owner_of(value)
        except ValueError:
            return await call_next(context)
        changes = tool in policy.write_tools
        if owner is None or (policy.may_change if changes else policy.may_read)(user, owner):
            return await call_next(context)
        verb = "change" if changes else "read"
        who_may = sorted(policy.change_all_roles if changes else policy.read_all_roles | policy.change_all_roles)
        return policy.deny(
            f"Denied by gate 4 (ownership): {user} may only {verb} their own notes; the note {value!r} belongs "
            f"to {owner}. Call list_notes to see the notes you may {verb}; besides the owner, only the role "
            f"{' or '.join(who_may)} may {verb} it."
        )


def install_gates(
    server: Any,
    policy: Policy,
    *,
    clock: Clock,
    owner_of: Callable[[str], str | None],
    local_user: User | None,
    window: RateWindow | None = None,
) -> None:
    """Put the gates in front of ``server``'s tools, in order: 1 who, 2 which tools, 3 which calls, 4 which notes.

    ``window`` counts the calls for the rate limit (default: in this process only).
    """
    for gate in (
        Authenticated(policy, local_user),
        ToolVisibility(policy, local_user),
        CallPermission(policy, local_user, clock=clock, window=window),
        ResourcePermission(policy, local_user, owner_of=owner_of),
    ):
        server.add_middleware(gate)
