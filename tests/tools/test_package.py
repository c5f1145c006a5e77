"""The package surface: every tool-core name is re-exported from `toolweave`, and importing the
package (or the light half of the tool core) loads no heavy dependency, which is what keeps
`import toolweave` inside its time budget (benchmarks/import_time.py measures the time)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolweave
import toolweave.tools as core


def test_the_roots_tool_names_are_the_tool_cores_objects() -> None:
    """The root offers the names a first agent needs; each is the `toolweave.tools` object."""
    shared = set(toolweave.__all__) & set(core.__all__)
    assert {"Tool", "ToolContext", "ToolRegistry", "ToolResult", "tool"} <= shared
    for name in shared:
        assert getattr(toolweave, name) is getattr(core, name), name
    assert sorted(core.__all__) == sorted(core._EXPORTS) == sorted(set(core.__all__))
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = toolweave.Nope


HEAVY = ("pydantic", "pydantic_core", "griffe", "json_repair", "httpx", "typer", "rich")


@pytest.mark.parametrize(
    "statement",
    [
        "import toolweave",
        "from toolweave.tools import ToolContext, ToolError, ToolResult, Permission",
    ],
)
def test_light_imports_load_no_heavy_dependency(statement: str) -> None:
    code = f"import sys\n{statement}\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
