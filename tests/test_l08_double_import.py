"""mcp_teach.lessons.l08_double_import: a real python -m run lists fewer tools with the registry in main.py."""

from __future__ import annotations

import tempfile
from pathlib import Path

from mcp_teach.lessons.l08_double_import import run_double_import_demo


def test_broken_lists_fewer_tools_than_fixed_and_nothing_is_left_behind(run) -> None:
    before = set(Path(tempfile.gettempdir()).glob("mcp-teach-l08-*"))
    demo = run(run_double_import_demo)
    assert demo.broken.listed == ["add"]
    assert demo.fixed.listed == ["add", "subtract", "multiply"]
    assert demo.broken.main_loaded_as == ["__main__", "broken.main"]
    assert demo.fixed.main_loaded_as == ["__main__"]
    assert "REGISTER subtract into TOOLS of module 'broken.main'" in demo.broken.log[2]
    assert demo.broken.log[-1].startswith("SERVER module '__main__' reads TOOLS")
    assert "registry.py" in demo.files["fixed"] and "registry.py" not in demo.files["broken"]
    assert set(Path(tempfile.gettempdir()).glob("mcp-teach-l08-*")) == before
