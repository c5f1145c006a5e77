"""No module is over `MAX_MODULE_LINES`: past that a file holds more than one responsibility and
is split by them (as the SQLite index's keyword ranking and the loop's stream reading were).

The count is of the file as the formatter writes it without `# fmt: skip`, so hand-packed lines
never keep a file under the cap."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.api.source_tree import SRC, modules

MAX_MODULE_LINES = 500


def test_no_module_is_over_five_hundred_lines() -> None:
    sizes = {
        name: len(module.path.read_text(encoding="utf-8").splitlines())
        for name, module in modules().items()
    }
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


_SKIP = re.compile(r"\s*# fmt: skip$", re.MULTILINE)
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_no_module_is_over_five_hundred_lines_once_formatted(tmp_path: Path) -> None:
    for path in SRC.rglob("*.py"):
        copy = tmp_path / path.relative_to(SRC)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(_SKIP.sub("", path.read_text(encoding="utf-8")), encoding="utf-8")
    ruff = [sys.executable, "-m", "ruff", "format", "--config", str(PYPROJECT), str(tmp_path)]
    subprocess.run(ruff, check=True, capture_output=True)
    sizes = {
        path.relative_to(tmp_path).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in tmp_path.rglob("*.py")
    }
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}
