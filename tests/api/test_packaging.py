"""Packaging promises: the command line's dependencies are an extra, and without them the
`toolweave` command says how to install them (exit 1, no traceback); the MIT licence that
pyproject declares ships with the source; the package metadata agrees with it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("missing", ["typer", "rich"])
def test_the_command_says_how_to_install_the_cli_extra(missing: str) -> None:
    # `None` in sys.modules makes `import typer` fail exactly as an absent package does.
    code = f"import sys; sys.modules[{missing!r}] = None\nfrom toolweave.cli import main\nmain()"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "pip install 'toolweave[cli]'" in proc.stderr and repr(missing) in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_the_library_does_not_depend_on_the_cli() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = " ".join(project["dependencies"])
    assert "typer" not in runtime and "rich" not in runtime
    assert {r.split(">")[0] for r in project["optional-dependencies"]["cli"]} == {"typer", "rich"}
    assert any("cli" in r for r in project["optional-dependencies"]["dev"])
    code = "import sys, toolweave.agent, toolweave.mcp, toolweave.host\n"
    code += "print(sorted(m for m in ('typer', 'rich', 'click') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_mit_license_ships() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    meta = metadata("toolweave")
    assert meta["License-Expression"] == "MIT" or meta["License"] == "MIT"
