"""mcp_teach.lessons.setup: what the first cell of every lesson does to its kernel."""

from __future__ import annotations

import subprocess
import sys

from support import HANG_TIMEOUT

SCRIPT = """
import sys
from mcp_teach.lessons.setup import skip_format_grammar
skip_format_grammar()
import jsonschema.validators
valid = jsonschema.validators.validator_for({"type": "object"})({"type": "object"}).is_valid({})
print(valid, sys.modules["rfc3987_syntax"] is not None)
"""


def test_jsonschema_imports_without_the_format_grammar():
    """In a fresh interpreter: jsonschema validates as before, without loading rfc3987_syntax (a second's import)."""
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=HANG_TIMEOUT, check=True
    )
    assert result.stdout.split() == ["True", "False"]
