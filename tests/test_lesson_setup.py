"""mcp_teach.lessons.setup: what the first cell of every lesson does to its kernel."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from mcp_teach.lessons.setup import warm_up
assert "jsonschema" not in sys.modules
warm_up().join(60)
import jsonschema.validators
print("jsonschema" in sys.modules, "jsonschema._format" in sys.modules)
"""


def test_warm_up_imports_jsonschema_in_the_background():
    """In a fresh interpreter (this one may have jsonschema already): the thread leaves it imported, formats too."""
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["True", "True"]

