"""No API key or credential lands in the repository: code, docs, captures and notebook outputs alike.

Test modules are the one exception: they hold made-up keys on purpose, to prove that redaction works.
"""

import re
import subprocess
from pathlib import Path

from mcp_teach.wire.redact import SECRET_PATTERN

ROOT = Path(__file__).resolve().parents[1]
#: An Authorization header with a real-looking credential (not ``[REDACTED]``, not a ``<placeholder>``).
AUTHORIZATION = re.compile(r"authorization[\"']?\s*[:=]\s*[\"']?(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)


def tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in listed.splitlines() if not name.startswith("tests/")]


def test_the_scan_sees_the_notebooks_and_the_package():
    names = {path.relative_to(ROOT).as_posix() for path in tracked_files()}
    assert "notebooks/04_llm_tool_loop.ipynb" in names and "mcp_teach/wire/redact.py" in names


def test_no_tracked_file_contains_a_key_or_credential():
    findings = []
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for pattern in (SECRET_PATTERN, AUTHORIZATION):
            findings += [f"{path.relative_to(ROOT)}: {match.group(0)[:12]}…" for match in pattern.finditer(text)]
    assert findings == [], "possible secrets committed:\n" + "\n".join(findings)


def test_the_patterns_catch_what_they_are_for():
    assert SECRET_PATTERN.search('"api_key": "sk-proj-AbCdEfGhIjKlMnOpQrSt"')
    assert AUTHORIZATION.search('"authorization": "Bearer abcdefghijklmnop"')
    assert not AUTHORIZATION.search('"authorization": "[REDACTED]"')
    assert not AUTHORIZATION.search("send ``Authorization: Bearer <api_key>``")
