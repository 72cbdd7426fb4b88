"""One credential per student on a class server, all derived from the instructor's class secret.

A single shared token makes the whole class one user: everyone may read and delete everyone's notes, end
everyone's sessions, and use up one rate limit together. Here each student's token is
``<name>.<HMAC-SHA256(class secret, name)>`` (:func:`student_token`, printed by ``mcp-teach class-tokens``):
the server checks it by computing the HMAC again, so it needs no roster file and every worker process agrees
without sharing anything but the secret. A student cannot make a token for another name without the secret
(HMAC is a pseudo-random function, RFC 2104), and the name travels in the clear so a log can say who called.

The class secret itself stays the instructor's (role ``admin``): students are given their own tokens, never
the secret. A name that already means someone else where the notes lie (:data:`RESERVED_NAMES`: ``local``, the
user of a stdio server; the demo users ``alice``...; the roles; ``instructor``) is refused when a token is made
and when one is checked: a note's owner is a name, so a student ``local`` would own the local user's notes.

Revoking one student means a new secret and new tokens for all; a roster with per-student random tokens would
allow revoking one, at the price of a file every worker must read.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

from fastmcp.server.auth import AccessToken, TokenVerifier

from mcp_teach.config import check_token
from mcp_teach.servers.gates import _digest

#: A student's name: 1-32 of lower-case letters, digits, ``-`` and ``_``, starting with a letter or digit.
STUDENT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
NAME_RULE = "1 to 32 characters: lower-case letters a-z, digits, '-' and '_', starting with a letter or digit"
#: The name the class secret itself stands for.
INSTRUCTOR = "instructor"
#: Names that already mean someone else where a class server's notes may lie: the owner of a note is a name, so a
#: student by one of them would own that person's notes (the local user's of a stdio server, the demo users').
RESERVED_NAMES = frozenset({INSTRUCTOR, "local", "alice", "bob", "carol", "dave", "admin", "student", "readonly"})
#: What the HMAC is computed over besides the name, so a token made for another purpose never matches.
_PURPOSE = b"mcp-teach student token v1\x00"
#: Characters of the URL-safe base64 HMAC kept in a token (32 of them: 192 bits).
MAC_LENGTH = 32


def check_student_name(name: str) -> str:
    """``name`` if it can be a student's, else ``ValueError`` saying what is allowed."""
    if not STUDENT_NAME.fullmatch(name):
        raise ValueError(f"the student name {name!r} is not allowed: a student name is {NAME_RULE}")
    if name in RESERVED_NAMES:
        raise ValueError(
            f"the student name {name!r} already means someone else on the notes server (the class secret's own name, "
            "the local user of a stdio server, the demo users and the roles): choose another student name"
        )
    return name


def _mac(secret: str, name: str) -> str:
    digest = hmac.new(secret.encode("utf-8"), _PURPOSE + name.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")[:MAC_LENGTH]


def student_token(secret: str, name: str) -> str:
    """The token of student ``name`` on the class server whose secret is ``secret``."""
    check_token(secret)
    return f"{check_student_name(name)}.{_mac(secret, name)}"


class StudentTokens(TokenVerifier):
    """Checks a bearer token against one class secret: the secret is the instructor (role ``admin``), ``name.mac``
    a student (role ``student``).

    The result is an access token whose subject and client id are the person's name (so the SDK binds each
    2025-11-25 session to the student who opened it) and whose one scope is the role, as an OAuth token's is.
    Comparisons take the same time however much of a guess is right.
    """

    def __init__(self, secret: str) -> None:
        super().__init__()
        self._secret = check_token(secret)
        self._secret_digest = _digest(secret)

    def identify(self, token: str) -> tuple[str, str] | None:
        """``(name, role)`` of whoever ``token`` belongs to, or None."""
        if hmac.compare_digest(_digest(token), self._secret_digest):
            return INSTRUCTOR, "admin"
        name, dot, mac = token.partition(".")
        if not dot or not STUDENT_NAME.fullmatch(name) or name in RESERVED_NAMES:
            return None
        if hmac.compare_digest(mac.encode("ascii", "replace"), _mac(self._secret, name).encode("ascii")):
            return name, "student"
        return None

    def access_token(self, token: str) -> AccessToken | None:
        """The verified token as fastmcp's ``AccessToken``, or None."""
        found = self.identify(token)
        if found is None:
            return None
        name, role = found
        return AccessToken(token=token, client_id=name, subject=name, scopes=[role], claims={"sub": name, "role": role})

    async def verify_token(self, token: str) -> AccessToken | None:
        return self.access_token(token)
