"""The banner docs/serve.md shows is the one `toolweave serve --http 127.0.0.1:8765` prints with
no toolweave.toml: what is served, where the data lives, how to connect."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolweave.cli import serve_cmd
from toolweave.host import ToolHost, load_host_config

DOCS = Path(__file__).resolve().parents[2] / "docs" / "serve.md"
EXECUTABLE = "/path/to/.venv/bin/toolweave"
PROJECT = "/path/to/project"


def documented_banner() -> str:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("```\ntoolweave serve: MCP endpoint") + len("```\n")
    return text[start : text.index("```", start)]


def test_the_docs_show_the_real_banner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("TOOLWEAVE_SERVE_TOKEN", raising=False)
    monkeypatch.chdir(project)
    monkeypatch.setattr(serve_cmd, "_executable", lambda: EXECUTABLE)
    config = load_host_config(env={})
    config.transport = "http"
    host = ToolHost(config)
    real = serve_cmd._banner(host).replace(str(project), PROJECT)
    assert documented_banner() == real
