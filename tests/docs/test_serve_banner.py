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
    config = load_host_config(env={}).model_copy(update={"transport": "http"})
    host = ToolHost(config)
    real = serve_cmd._banner(host).replace(str(project), PROJECT)
    assert documented_banner() == real


def test_the_documented_defaults_are_the_programs() -> None:
    """serve.md's providers default, and index.md's install line for memory, kb and notes."""
    import json

    from toolweave.host.config import DEFAULT_PROVIDERS
    from toolweave.host.providers.base import PROVIDER_EXTRAS

    row = next(
        line for line in DOCS.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `[serve].providers` |")
    )  # fmt: skip
    assert json.loads(row.split("`")[3]) == list(DEFAULT_PROVIDERS)
    index = (DOCS.parent / "index.md").read_text(encoding="utf-8")
    install = next(line for line in index.splitlines() if line.startswith("pip install"))
    extras = install.split("[", 1)[1].split("]", 1)[0].split(",")
    assert set(PROVIDER_EXTRAS.values()) <= set(extras)


def test_a_configured_console_token_is_named_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The banner used to print the literal `<console token>`, which names nothing a person
    set; a configured token is never printed, so the banner says which setting holds it."""
    monkeypatch.setattr(serve_cmd, "_executable", lambda: EXECUTABLE)
    monkeypatch.chdir(tmp_path)
    config = load_host_config(env={"TOOLWEAVE_SERVE__CONSOLE_TOKEN": "s3cret-console"})
    assert config.console_token == "s3cret-console"
    serve_cmd._print_banner(ToolHost(config.model_copy(update={"transport": "http"})))
    out = capsys.readouterr().out
    assert "/console#token=<your [serve].console_token>" in out and "s3cret-console" not in out
