"""docs/builtins.md's Python examples run as written (offline: none of them sends a request)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "builtins.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_builtins_doc_example_runs(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / f"builtins_example_{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip()
    if index == 0:
        assert "你好, world" in out and "exit code 0" in out and "refused" in out
    else:
        assert out.strip() == "meme ['msg', 'num']"


def test_the_page_has_both_examples() -> None:
    assert len(BLOCKS) == 2
