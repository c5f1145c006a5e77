"""`toolweave mcp new`: the project depends on a toolweave that exists (the wheel it copies, the
checkout, or an index) and installs into a clean venv with nothing downloaded, where its own tests
pass and its server answers a call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from tests.wheel_env import ROOT, BorrowingVenv, clean_env
from toolweave.cli import app
from toolweave.mcp import MCPClient
from toolweave.mcp.server.scaffold import running_source
from toolweave.version import __version__


def new(project: Path, *source: str) -> tuple[int, str, str]:
    args = ["mcp", "new", "weather-tools", "--dir", str(project)]
    result = CliRunner().invoke(app, [*args, *(["--toolweave-source", *source] if source else [])])
    return result.exit_code, result.stdout, result.stderr


def dependencies(project: Path) -> list[str]:
    import tomllib

    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*meta["dependencies"], *meta["optional-dependencies"]["http"]]


def test_the_project_installs_from_the_wheel_and_works(
    tmp_path: Path, toolweave_wheel: Path
) -> None:
    project = tmp_path / "天气-project"
    code, out, err = new(project, str(toolweave_wheel))
    assert code == 0, err
    assert "copied into wheels/" in out
    copied = project / "wheels" / toolweave_wheel.name
    assert copied.read_bytes() == toolweave_wheel.read_bytes()
    assert dependencies(project) == [
        f"toolweave @ {{root:uri}}/wheels/{toolweave_wheel.name}",
        f"toolweave[server] @ {{root:uri}}/wheels/{toolweave_wheel.name}",
    ]
    venv = BorrowingVenv(tmp_path / "venv")
    # Not -e: hatchling's editable build needs `editables`, which build isolation would fetch.
    venv.pip_install("--no-build-isolation", f"{project}[dev]")
    where = venv.run("python", "-c", "import toolweave; print(toolweave.__file__)", cwd=tmp_path)
    assert where.startswith(str(venv.site))  # the project's dependency, not the checkout
    found = "from toolweave.mcp.server.scaffold import running_source; print(running_source())"
    assert venv.run("python", "-c", found, cwd=tmp_path) == str(copied)
    second = tmp_path / "second"  # the installed toolweave's own default: the wheel it came from
    out = venv.run("toolweave", "mcp", "new", "second", "--dir", str(second), cwd=tmp_path)
    assert "copied into wheels/" in out
    assert (second / "wheels" / toolweave_wheel.name).is_file()
    assert (second / ".github" / "workflows" / "ci.yml").is_file()
    tests = venv.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert "3 passed" in tests

    async def served_call() -> str:
        client = MCPClient.stdio(str(venv.bin / "weather-tools"), [], env=clean_env())
        async with client:
            return (await client.call_tool("hello", {"name": "小明", "excited": True})).text

    assert asyncio.run(served_call()) == "Hello, 小明!"


def test_by_default_the_project_uses_the_running_checkout(tmp_path: Path) -> None:
    assert running_source() == ROOT
    code, out, _ = new(tmp_path / "p")
    assert code == 0 and f"the checkout {ROOT}" in out
    assert dependencies(tmp_path / "p") == [
        f"toolweave @ {ROOT.as_uri()}",
        f"toolweave[server] @ {ROOT.as_uri()}",
    ]
    assert not (tmp_path / "p" / "wheels").exists()


def test_index_and_a_bad_source(tmp_path: Path) -> None:
    code, out, _ = new(tmp_path / "p", "index")
    assert code == 0 and "a package index" in out
    assert dependencies(tmp_path / "p") == [
        f"toolweave>={__version__}",
        f"toolweave[server]>={__version__}",
    ]
    not_wheel = tmp_path / "toolweave.zip"
    not_wheel.write_bytes(b"PK")
    code, _, err = new(tmp_path / "q", str(not_wheel))
    (line,) = err.strip().splitlines()
    assert code == 2 and "neither a toolweave wheel" in line and str(not_wheel) in line
    assert not (tmp_path / "q").exists()
