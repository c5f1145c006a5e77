"""Folder ingest never follows a link out of its root (issue 32, item 5).

The review's attack: a sandboxed `ln -s` in a folder the host ingests (`kb` folder ingest, the
`[kb].paths` watcher) pointed at a host-only file in the host's /tmp, which the sandbox cannot
see; the host then indexed it and `kb_search` returned it to every client. Here the links are
made from inside the real sandbox, and a folder is swapped for a link between the walk and the
read (the race the walk alone cannot close).
"""

from __future__ import annotations

import os
from pathlib import Path

from toolweave.builtins import shell_tool
from toolweave.kb import KnowledgeBase
from toolweave.kb.errors import DocumentError
from toolweave.kb.ingest import collect_files, ingest_paths
from toolweave.kb.results import AddResult
from toolweave.tools import ToolContext

SECRET = "host-only 机密 passphrase"


async def sandboxed(workspace: Path, command: str) -> str:
    tool = shell_tool(workspace, deny=[], allow=["Bash(*)"])
    result = await tool.execute({"command": command}, ToolContext(tool_call_approved=True))
    return result.text


async def test_links_planted_from_the_sandbox_are_not_ingested(tmp_path: Path) -> None:
    secret_dir = tmp_path / "host-only"  # under the host's /tmp: the sandbox cannot see it
    secret_dir.mkdir()
    (secret_dir / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\n公开的笔记 public notes.\n", encoding="utf-8")
    said = await sandboxed(
        docs, f"ln -s {secret_dir}/secret.md leak.md && ln -s {secret_dir} leakdir && ls"
    )
    assert "leak.md" in said and "leakdir" in said, said
    assert collect_files([docs]) == [docs / "notes.md"]
    kb = KnowledgeBase(tmp_path / "kb.db")
    try:
        summary = await ingest_paths(kb, [docs], prune=True)
        assert [r.report.source for r in summary.added] == [str(docs / "notes.md")]
        hits = await kb.search("passphrase 机密", k=5)
        assert all(SECRET not in hit.text for hit in hits)
    finally:
        await kb.close()


async def test_a_folder_swapped_for_a_link_mid_ingest_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.md").write_text(f"# B\n\n{SECRET}\n", encoding="utf-8")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nfirst\n", encoding="utf-8")
    (docs / "sub" / "b.md").write_text("# B\n\nsecond\n", encoding="utf-8")
    failed: list[str] = []

    def swap_after_first(path: Path, outcome: AddResult | DocumentError) -> None:
        if path.name == "a.md":  # walked already: now sub/ becomes a link out of the root
            (docs / "sub" / "b.md").unlink()
            (docs / "sub").rmdir()
            os.symlink(outside, docs / "sub")
        elif isinstance(outcome, DocumentError):
            failed.append(outcome.message)

    kb = KnowledgeBase(tmp_path / "kb.db")
    try:
        summary = await ingest_paths(kb, [docs], on_file=swap_after_first)
        assert [r.report.source for r in summary.added] == [str(docs / "a.md")]
        assert failed and "changed while it was read" in failed[0], failed
        assert str(outside) not in failed[0]  # the error names the file, not the link's target
        hits = await kb.search("passphrase", k=5)
        assert all(SECRET not in hit.text for hit in hits)
    finally:
        await kb.close()
