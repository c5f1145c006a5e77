"""docs/builtins.md's Python examples run as written (offline: none of them sends a request)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.docs_examples import python_blocks, run_block

BLOCKS = python_blocks("builtins.md")


def test_builtins_tour_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_block(BLOCKS[0], tmp_path, "builtins_tour")
    out = capsys.readouterr().out
    assert "你好, world" in out and "exit code 0" in out and "refused" in out


def test_configurable_api_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_block(BLOCKS[1], tmp_path, "builtins_http_api")
    assert capsys.readouterr().out.strip() == "meme ['msg', 'num']"


def test_the_page_has_both_examples() -> None:
    assert len(BLOCKS) == 2
