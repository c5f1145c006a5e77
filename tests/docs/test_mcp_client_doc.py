"""docs/mcp-client.md's agent example (an Agent with the skills of a served MCP server) runs
as written, from the repository root, and prints what its comments say."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.docs_examples import python_blocks, run_block

ROOT = Path(__file__).resolve().parents[2]


def test_the_agent_with_a_servers_skills_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (block,) = [b for b in python_blocks("mcp-client.md") if "skills=library" in b]
    monkeypatch.chdir(ROOT)
    run_block(block, tmp_path, "mcp_client_agent_skills")
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "['docs__code-review', 'docs__release-notes', 'docs__web-research']",
        "# Skill: docs__web-research (from MCP server 'docs', verified)",
    ]
