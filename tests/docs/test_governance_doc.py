"""docs/governance.md's Python examples run as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.docs_examples import python_blocks, run_block

BLOCKS = python_blocks("governance.md")


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_governance_example_runs(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_block(BLOCKS[index], tmp_path, f"governance_example_{index}")
    assert capsys.readouterr().out.strip()


def test_the_examples_show_the_decisions() -> None:
    assert len(BLOCKS) == 5
