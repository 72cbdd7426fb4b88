"""mcp_teach.notebook_setup: what the first cell of every lesson does to its kernel."""

from __future__ import annotations

import subprocess
import sys

from support import HANG_TIMEOUT

SCRIPT = """
import sys
from mcp_teach.notebook_setup import skip_format_grammar
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


COLAB = """
import sys, types
from mcp_teach.notebook_setup import use_colab_widget_manager
use_colab_widget_manager()
print("google.colab" in sys.modules)
calls = []
output = types.SimpleNamespace(enable_custom_widget_manager=lambda: calls.append("enabled"))
sys.modules["google"] = types.ModuleType("google")
sys.modules["google.colab"] = types.ModuleType("google.colab")
sys.modules["google.colab"].output = output
sys.modules["google.colab.output"] = output
use_colab_widget_manager()
print(calls)
"""


def test_the_colab_widget_manager_is_turned_on_only_in_a_colab_kernel():
    """Outside Colab nothing is imported; in a kernel that has google.colab (a stand-in here), the manager is on."""
    result = subprocess.run([sys.executable, "-c", COLAB], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.splitlines() == ["False", "['enabled']"]
