"""mcp_teach.lessons.l08_double_import: a real python -m run lists fewer tools with the registry in main.py."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from mcp_teach.lessons.l08_double_import import (
    demo_files,
    listing,
    numbered_addresses,
    run_package,
    run_variant,
)


def test_broken_lists_fewer_tools_than_fixed_and_nothing_is_left_behind(run) -> None:
    before = set(Path(tempfile.gettempdir()).glob("mcp-teach-l08-*"))
    broken, fixed = run(run_variant, "broken"), run(run_variant, "fixed")
    assert broken.listed == ["add"] and fixed.listed == ["add", "subtract"]
    assert broken.main_loaded_as == ["__main__", "broken.main"]
    assert fixed.main_loaded_as == ["__main__"]
    assert "REGISTER subtract into TOOLS of module 'broken.main'" in broken.log[2]
    assert broken.log[-1].startswith("SERVER module '__main__' reads TOOLS")
    assert "<dict 2>" in broken.text() and "0x" not in broken.text()
    assert "registry.py" in demo_files("fixed", fixed=True) and "registry.py" not in demo_files("x", fixed=False)
    assert set(Path(tempfile.gettempdir()).glob("mcp-teach-l08-*")) == before


def test_any_package(run) -> None:
    files = demo_files("mine", fixed=True)
    del files["__init__.py"]  # run_package writes one: a regular package, whatever else is installed
    assert run(run_package, files, "mine").listed == ["add", "subtract"]
    with pytest.raises(RuntimeError, match="answered nothing to tools/list"):
        run(run_package, {"main.py": "raise SystemExit('no server here')"}, "quiet")
    with pytest.raises(ValueError, match="identifier"):
        run(run_package, files, "not-a-name")


def test_addresses_are_numbered_in_order_and_listing_summarises_serve() -> None:
    assert numbered_addresses(["at 0xab1", "at 0xcd2", "again 0xab1"]) == [
        "at <dict 1>",
        "at <dict 2>",
        "again <dict 1>",
    ]
    text = listing(demo_files("broken", fixed=False), "broken")
    assert "# ---- broken/tools.py ----" in text and "from broken.main import register_tool" in text
    assert "def serve(): ..." in text and "anyio" not in text
