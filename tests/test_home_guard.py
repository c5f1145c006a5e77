"""Tests never touch the real home: the temporary HOME and the watch on writes (home_guard)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests import home_guard
from toolweave.host.config import HostConfig


def test_home_and_data_dir_are_temporary(temporary_home: Path) -> None:
    assert Path("~").expanduser() == temporary_home
    assert not temporary_home.resolve().is_relative_to(home_guard.REAL_HOME)
    assert HostConfig().data_dir == temporary_home / ".toolweave"
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.path.expanduser('~'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout.strip() == str(temporary_home)


def test_a_write_into_the_real_home_is_recorded() -> None:
    """Each probe fails before it creates anything; the audit hook still sees it."""
    missing = home_guard.REAL_HOME / "toolweave-guard-probe-missing"
    with pytest.raises(FileNotFoundError):
        os.mkdir(missing / "data")
    with pytest.raises(sqlite3.OperationalError):
        sqlite3.connect(f"file:{missing / 'kb.db'}?mode=ro", uri=True)
    with pytest.raises(FileNotFoundError):
        open(missing / "note.md", "w")  # noqa: SIM115 - it cannot open
    recorded, home_guard.violations[:] = list(home_guard.violations), []
    assert any(v.startswith("os.mkdir(") and "probe-missing" in v for v in recorded)
    assert any(v.startswith("sqlite3.connect(") for v in recorded)
    assert any(v.startswith("open(") for v in recorded)


def test_reads_caches_and_temporary_files_are_not_writes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    (home_guard.REAL_HOME / ".bashrc").exists() and (home_guard.REAL_HOME / ".bashrc").read_bytes()
    assert home_guard.violations == []
    assert not home_guard._outside_allowed(home_guard.REAL_HOME / ".cache" / "pip" / "x")
    assert home_guard._outside_allowed(home_guard.REAL_HOME / ".toolweave" / "kb.db")
    assert not home_guard._outside_allowed(":memory:")
