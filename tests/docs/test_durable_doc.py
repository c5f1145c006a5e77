"""docs/durable.md: each Python block runs as written, offline, in a process of its own (DBOS
is process-wide state), and prints what the page says it prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.docs_examples import python_blocks

BLOCKS = python_blocks("durable.md")
EXPECTED = [
    ["waiting: c1 deploy", "Done."],
    ["paused - Waiting for approval: rotate_keys", "success - Keys rotated."],
    ["read 3 pages", "read 3 pages"],
]


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_durable_page_example_runs(index: int, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKS[index]],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == len(EXPECTED[index]), proc.stdout
    for line, start in zip(lines, EXPECTED[index], strict=True):
        assert line.startswith(start) or start in line, (line, start)
