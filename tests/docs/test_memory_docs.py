"""docs/memory.md's complete Python examples (those that run themselves) run as written."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "memory.md"
BLOCKS = [
    b
    for b in re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    if "asyncio.run(" in b
]


def test_the_page_has_a_runnable_example() -> None:
    assert BLOCKS


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_memory_docs_example_runs(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / f"memory_doc_{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="memory_doc")
    out = capsys.readouterr().out
    assert "Python" in out and "'total': 4" in out
