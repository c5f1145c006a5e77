"""docs/governance.md's Python examples run as written."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "governance.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_governance_example_runs(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / f"governance_example_{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    runpy.run_path(str(script), run_name="governance_example")
    assert capsys.readouterr().out.strip()


def test_the_examples_show_the_decisions() -> None:
    assert len(BLOCKS) == 2
