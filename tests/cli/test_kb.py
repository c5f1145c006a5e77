"""`toolweave kb ingest|search|stats|remove` against a real store in a temporary directory, and
`[kb.embed_retry]` applied to a failing embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.kb.formats import make_pdf
from tests.outage_embedder import Embeddings, Endpoint, endpoint, spec
from toolweave.cli import app

__all__ = ["endpoint"]  # the fixture


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)  # as on a fresh clone: a pipe, no width set
    (tmp_path / "toolweave.toml").write_text('[serve]\ndata_dir = "data"\n', encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ports.md").write_text("# 服务\n\n## 端口\n\n默认端口是 8765。\n", encoding="utf-8")
    (docs / "deploy.md").write_text("# Deploy\n\nRun behind a reverse proxy.\n", encoding="utf-8")
    make_pdf(docs / "scan.pdf")
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_ingest_search_stats_remove(project: Path) -> None:
    code, out = run("kb", "ingest", "docs")
    assert code == 0, out
    assert "added" in out and "pdf, 2 pages" in out and "flat text with no headings" in out
    assert "3 files: 3 added or replaced" in out
    code, out = run("kb", "ingest", "docs")  # resumes: nothing to do
    assert code == 0 and "0 added or replaced, 3 unchanged" in out
    code, out = run("kb", "search", "默认端口", "-k", "1", "--json")
    hits = json.loads(out)
    assert code == 0 and hits[0]["heading_path"] == "服务 > 端口" and "8765" in hits[0]["text"]
    code, out = run("kb", "search", "reverse proxy", "--mode", "keyword")
    assert code == 0 and "Deploy" in out
    code, out = run("kb", "stats")
    assert code == 0 and "3 documents" in out
    code, out = run("kb", "remove", hits[0]["doc_id"], "nope")
    assert code == 1 and f"removed {hits[0]['doc_id']}" in out and "not found nope" in out
    code, out = run("kb", "stats", "--namespace", "other")
    assert code == 0 and "0 documents" in out


def test_errors_are_clear(project: Path) -> None:
    code, out = run("kb", "ingest", "missing")
    assert code == 2 and "no such file or folder" in out
    code, out = run("kb", "ingest", "/dev/null")
    assert code == 2 and "neither a file nor a folder" in out
    (project / "docs" / "bad.docx").write_bytes(b"not a zip")
    code, out = run("kb", "ingest", "docs")
    assert code == 1 and "skipped" in out and out.count("bad.docx") == 1
    code, out = run("kb", "search", "x", "--mode", "fuzzy")
    assert code == 2 and "mode must be one of" in out
    code, out = run("kb", "stats", "--namespace", "bad name")
    assert code != 0 and "namespace 'bad name'" in out


def test_a_skipped_file_is_reported_once(project: Path) -> None:
    """In a real process (no pytest log capture): the progress line, not also a log warning."""
    import subprocess
    import sys

    (project / "docs" / "bad.docx").write_bytes(b"not a zip")
    toolweave = Path(sys.executable).with_name("toolweave")
    out = subprocess.run(
        [str(toolweave), "kb", "ingest", "docs"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 1
    assert (out.stdout + out.stderr).count("bad.docx") == 1, out.stdout + out.stderr


def test_stats_shows_titles_and_paths_as_written(project: Path) -> None:
    drafts = project / "docs" / "[drafts]"
    drafts.mkdir()
    (drafts / "plan.md").write_text("# [draft] 计划 [v2]\n\n下周发布。\n", encoding="utf-8")
    code, out = run("kb", "ingest", str(drafts))
    assert code == 0, out
    code, out = run("kb", "stats")
    assert code == 0 and "[draft] 计划 [v2]" in out and "[drafts]/plan.md" in out


def test_stats_reports_the_embedder_the_store_was_made_with(project: Path) -> None:
    code, out = run("kb", "ingest", "docs")
    assert code == 0, out
    config = project / "toolweave.toml"
    config.write_text(config.read_text() + '[kb]\nembedder = "hash"\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["kb", "stats"])
    assert result.exit_code == 0, result.output
    assert "wordllama" in result.stdout and "hash" not in result.stdout
    assert "[kb].embedder makes hash" in result.stderr and "made with wordllama" in result.stderr


def test_the_kb_commands_retry_the_embedder_as_kb_embed_retry_says(
    project: Path, endpoint: Endpoint
) -> None:
    (project / "toolweave.toml").write_text(
        f'[serve]\ndata_dir = "data"\n\n[kb]\nembedder = "{spec(endpoint)}"\n\n'
        "[kb.embed_retry]\nattempts = 1\nrecheck = 1234\n",
        encoding="utf-8",
    )
    code, out = run("kb", "ingest", "docs/ports.md")
    assert code == 0, out
    Embeddings.fail_next = 10**6  # now every request gets 503
    result = CliRunner().invoke(app, ["kb", "search", "默认端口", "-k", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["text"].endswith("默认端口是 8765。")  # by keywords
    assert "keywords only" in result.stderr and "tried again after 1234 s" in result.stderr
