"""The 2026-07-28 examples of docs/mcp-server.md (input-required results, tasks, custom headers,
skills) run as written and print what their comments say."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.docs_examples import python_blocks, run_block

BLOCKS = {
    "input_required": ("state_key=", ["input_required ['confirm']", "api: deployed"]),
    "tasks": ("task_store=store", ["task working", "completed report 2026: 12 months"]),
    "custom_headers": ("header_params=", ["'x-mcp-header': 'Region'", "=?base64?"]),
    "skills": (
        "add_skills(",
        [
            "skill://pdf-processing/SKILL.md ['skill://pdf-processing/references/FORMS.md']",
            "verified: True",
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_the_page_example_runs(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker, expected = BLOCKS[name]
    (block,) = [b for b in python_blocks("mcp-server.md") if marker in b]
    run_block(block, tmp_path, f"mcp_server_{name}")
    printed = capsys.readouterr().out
    for text in expected:
        assert text in printed
