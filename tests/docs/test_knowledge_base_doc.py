"""The Python examples of docs/knowledge-base.md run as written (in a temporary directory)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "knowledge-base.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
RUNNABLE = [b for b in BLOCKS if "asyncio.run(" in b]


def test_examples_found() -> None:
    assert len(RUNNABLE) == 3


@pytest.mark.parametrize("index", range(len(RUNNABLE)))
def test_example_runs(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# 指南\n\n## 安装\n\npip install toolweave\n")
    script = tmp_path / "example.py"
    script.write_text(RUNNABLE[index], encoding="utf-8")
    runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip()
