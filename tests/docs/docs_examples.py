"""The Python blocks of a docs page, and running one as a script, for the docs-page tests."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def python_blocks(page: str) -> list[str]:
    """Every ```python block of docs/<page>, in order."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def run_block(block: str, directory: Path, name: str) -> None:
    """Run `block` as the script `directory/name.py` under the module name `name`, so an
    `if __name__ == "__main__":` block (a server start) does not run."""
    script = directory / f"{name}.py"
    script.write_text(block, encoding="utf-8")
    runpy.run_path(str(script), run_name=name)
