"""mcp_teach.lessons.setup: what the first cell of every lesson does to its kernel."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from mcp_teach.client import warm_up
assert "jsonschema" not in sys.modules
warm_up().join(60)
import jsonschema.validators
print("jsonschema" in sys.modules, "jsonschema._format" in sys.modules)
"""


def test_warm_up_imports_jsonschema_in_the_background():
    """In a fresh interpreter (this one may have jsonschema already): the thread leaves it imported, formats too."""
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["True", "True"]


CLIENT_SCRIPT = """
from mcp_teach.client import teaching_client, warm_up
from mcp_teach.servers.calculator import build_calculator_server
thread = warm_up()
teaching_client(build_calculator_server())
print(thread.is_alive())
"""


def test_a_client_starts_only_after_the_background_import():
    """fastmcp imports jsonschema.validators itself; started while the warm-up runs, that import would fail."""
    result = subprocess.run(
        [sys.executable, "-c", CLIENT_SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["False"]
