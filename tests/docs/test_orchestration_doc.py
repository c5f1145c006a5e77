"""docs/orchestration.md runs as written: every Python block, in order, offline (ScriptedModel
and FunctionModel stand in for providers), in a temporary directory."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "docs" / "orchestration.md").read_text(encoding="utf-8")
PYTHON = re.findall(r"```python\n(.*?)```", TEXT, re.DOTALL)


def test_every_block_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outputs = []
    for index, block in enumerate(PYTHON):
        script = tmp_path / f"orchestration_{index}.py"
        script.write_text(block, encoding="utf-8")
        runpy.run_path(str(script), run_name="__main__")
        outputs.append(capsys.readouterr().out.splitlines())
    assert len(outputs) == 4
    assert outputs[0] == [
        "北京: sunny. Review done.",
        "Review the weather report for bugs and risky changes.",
        "success ['subagent_run']",
        "['get_weather', 'subagent_run']",
    ]
    assert outputs[1] == ["['reviewers']"]
    assert outputs[2] == ["1000 950 UTC"]
    assert outputs[3] == [
        "('ops', 'No open incidents.')",
        "['30 9 * * 1-5']",
    ]
