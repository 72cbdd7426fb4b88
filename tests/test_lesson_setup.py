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


WAIT_SCRIPT = """
from mcp_teach.client import wait_for_warm_up, warm_up
thread = warm_up()
wait_for_warm_up()
import jsonschema.validators
print(thread.is_alive())
"""


def test_waiting_for_the_warm_up_leaves_it_finished():
    """What lesson 09's form handler does before fastmcp imports jsonschema.validators itself."""
    result = subprocess.run(
        [sys.executable, "-c", WAIT_SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["False"]
