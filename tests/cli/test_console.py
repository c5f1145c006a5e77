"""Output that is not a terminal is never wrapped, whatever `$COLUMNS` says, and every console
the command line prints through comes from `make_console`."""

from __future__ import annotations

import ast
import io
import sys
from pathlib import Path

import pytest

import toolweave.cli
from toolweave.cli.console import make_console

CLI = Path(toolweave.cli.__file__).parent


@pytest.mark.parametrize("columns", [None, "40"])
def test_a_pipe_gets_whole_lines(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    line = "/a/very/long/path/" + "段落" * 60 + "/deploy.md: md, 37 characters, 1 heading"
    make_console().print(line)
    assert out.getvalue() == line + "\n"


def test_no_other_console_is_made() -> None:
    makers = []
    for path in sorted(CLI.glob("*.py")):
        if path.name == "console.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Console":
                makers.append(f"{path.name}:{node.lineno}")
    assert makers == []
