"""The README's Python examples run as written, from the repository root."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
OFFLINE = [b for b in BLOCKS if "npx" not in b]  # nothing may reach the network


def test_readme_has_examples() -> None:
    assert len(OFFLINE) == len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(OFFLINE)))
def test_readme_example_runs(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / f"readme_example_{index}.py"
    script.write_text(OFFLINE[index], encoding="utf-8")
    monkeypatch.setattr(sys, "argv", [str(script)])
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(script), run_name="readme_example")  # not __main__: servers do not start
    out = capsys.readouterr().out
    if "print(" in OFFLINE[index]:
        assert out.strip(), "an example that prints must print something"
