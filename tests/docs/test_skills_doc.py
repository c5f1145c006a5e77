"""docs/skills.md's Python examples run as written, from the repository root."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(
    r"```python\n(.*?)```", (ROOT / "docs" / "skills.md").read_text(encoding="utf-8"), re.DOTALL
)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_skills_doc_example_runs(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / f"skills_doc_{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(script), run_name="skills_doc")
    if "print(" in BLOCKS[index]:
        assert capsys.readouterr().out.strip()


def test_skills_doc_has_examples() -> None:
    assert len(BLOCKS) == 5
