"""JupyterHub configuration: every user's server starts with that user's own class-server token in MCP_AUTH_TOKEN.

The Littlest JupyterHub: copy to /opt/tljh/config/jupyterhub_config.d/ and run `sudo tljh-config reload hub`.
Zero to JupyterHub: paste it under hub.extraConfig (z2jh-config.yaml does).

The hub's own Python has no mcp-teach, so the token is made here with the standard library, exactly as
`mcp-teach class-tokens` makes it (mcp_teach/servers/student_tokens.py; tests/test_jupyterhub.py keeps the two
equal). The class secret comes from MCP_TEACH_CLASS_SECRET in the hub's environment, else from the file named by
MCP_TEACH_CLASS_SECRET_FILE (default /etc/mcp-teach/class-secret, readable by root only). The secret never reaches
a user: each user's server gets only the token derived for their name.

A hub user name that is a student name is kept, unless it has the shape of a derived name (a dash and 16 letters
of hash at the end): then it is derived too, so nobody can sign up as the name derived for someone else and get
their token. The hash is 80 bits of SHA-256, too many to search for a second name with the same one.
"""

import base64
import hashlib
import hmac
import os
import re
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub defines get_config when it loads this file)

STUDENT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
DERIVED_NAME = re.compile(r".*-[a-z2-7]{16}")
PURPOSE = b"mcp-teach student token v1\x00"


def class_secret() -> str:
    secret = os.environ.get("MCP_TEACH_CLASS_SECRET")
    if secret is None:
        secret = Path(os.environ.get("MCP_TEACH_CLASS_SECRET_FILE", "/etc/mcp-teach/class-secret")).read_text()
    return secret.strip()


def student_name(hub_name: str) -> str:
    """A hub user name as a student name: kept when it is one that cannot be a derived one, else derived (a readable
    part and a hash of the whole name, so two names stay two)."""
    if STUDENT_NAME.fullmatch(hub_name) and not DERIVED_NAME.fullmatch(hub_name) and hub_name != "instructor":
        return hub_name
    tag = base64.b32encode(hashlib.sha256(hub_name.encode("utf-8")).digest()).decode("ascii")[:16].lower()
    readable = re.sub(r"[^a-z0-9_-]+", "-", hub_name.lower())[:15].strip("-_") or "user"
    return f"{readable}-{tag}"


def student_token(secret: str, name: str) -> str:
    digest = hmac.new(secret.encode("utf-8"), PURPOSE + name.encode("ascii"), hashlib.sha256).digest()
    return f"{name}.{base64.urlsafe_b64encode(digest).decode('ascii')[:32]}"


SECRET = class_secret()
c.Spawner.environment.update({"MCP_AUTH_TOKEN": lambda spawner: student_token(SECRET, student_name(spawner.user.name))})
