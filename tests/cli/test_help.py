"""Every `--help` of the command line shows the text its source defines, word for word.

The test walks the command tree typer builds from the app and, beside it, the app's own
registrations (the help given to `Typer`/`command` or the docstring, and each parameter's
`help=`). It renders `--help` for every command and group the way a pipe sees it (no terminal,
`$COLUMNS` unset) and finds each source text in the output once the panel borders and the
wrapping are taken out, so Rich markup cannot eat a bracketed word and a flag never shows a
type as if it took a value. A prompt the command line asks shows its text as written too.
"""

from __future__ import annotations

import inspect
import io
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from typer.main import get_command, get_command_name, solve_typer_info_help
from typer.models import ParameterInfo, TyperInfo
from typer.testing import CliRunner
from typer.utils import get_params_from_function

from toolweave.cli.agent_tools import ask_input
from toolweave.cli.application import app
from toolweave.mcp.client.config_values import InputSpec

BORDERS = re.compile(r"[│╭╮╰╯─]")


@dataclass
class Source:
    path: tuple[str, ...]
    help: str
    params: dict[str, str] = field(default_factory=dict)


def flat(text: str) -> str:
    """Text with the panel borders gone and every run of whitespace one space."""
    return " ".join(BORDERS.sub(" ", text).split())


def param_helps(callback: object) -> dict[str, str]:
    if callback is None:
        return {}
    helps = {}
    for name, meta in get_params_from_function(callback).items():  # type: ignore[arg-type]
        if isinstance(meta.default, ParameterInfo) and meta.default.help:
            helps[name] = meta.default.help
    return helps


def sources(info: TyperInfo, path: tuple[str, ...] = ()) -> Iterator[Source]:
    instance = info.typer_instance
    assert instance is not None
    callback = instance.registered_callback.callback if instance.registered_callback else None
    yield Source(path, solve_typer_info_help(info), param_helps(callback))
    for command in instance.registered_commands:
        assert command.callback is not None
        name = command.name or get_command_name(command.callback.__name__)
        text = command.help or inspect.getdoc(command.callback) or ""
        yield Source((*path, name), text, param_helps(command.callback))
    for group in instance.registered_groups:
        assert group.name is not None
        yield from sources(group, (*path, group.name))


def click_paths(command: object, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from click_paths(sub, (*path, name))


SOURCES = list(sources(TyperInfo(app)))


def test_the_walk_covers_every_command() -> None:
    assert sorted(s.path for s in SOURCES) == sorted(click_paths(get_command(app)))
    assert len(SOURCES) > 30


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: " ".join(s.path) or "toolweave")
def test_help_shows_the_source_text(source: Source, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    result = CliRunner().invoke(app, [*source.path, "--help"])
    assert result.exit_code == 0, result.output
    shown = flat(result.output)
    assert flat(source.help.partition("\f")[0]) in shown
    for name, text in source.params.items():
        assert flat(text) in shown, f"--help of {source.path} loses the help of {name}"
    assert "<bool>" not in result.output


def test_the_known_bracketed_texts_survive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    run = flat(CliRunner().invoke(app, ["run", "--help"]).output)
    assert "its providers, [mcpServers] and [serve.policy]." in run
    stdio = flat(CliRunner().invoke(app, ["serve", "--help"]).output)
    assert "--stdio Serve one client" in stdio


def test_a_prompt_shows_its_brackets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("k-1\n"))
    assert ask_input(InputSpec("key", "API key [required] for 天气 [beta]")) == "k-1"
    assert "API key [required] for 天气 [beta]" in capsys.readouterr().out


def test_the_command_list_is_reflowed_not_broken_at_the_docstrings_lines() -> None:
    """At 80 columns the top-level list used to break `serve`'s line after "proxied" and
    `chat`'s after "and the": the docstring's own line breaks were kept inside the panel."""
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "80", "TERM": "dumb"})
    rows = [BORDERS.sub("", line).strip() for line in result.stdout.splitlines()]
    for row in rows:
        words = row.split()
        if row.startswith(("serve ", "chat ", "memory ")):
            assert len(row) > 60, rows  # a first row filled to the panel's width
        assert not (words and words[-1] in ("proxied", "the") and len(row) < 50), row
