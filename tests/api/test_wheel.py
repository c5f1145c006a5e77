"""The built wheel installs into a clean venv and works: `toolweave --version` and one served
tool call over stdio. The venv borrows this environment's dependencies through a `.pth` line
(installed with `--no-deps`, nothing downloaded), and the test checks that toolweave itself is
imported from the wheel, not from the checkout."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.wheel_env import BorrowingVenv, clean_env
from toolweave.mcp import MCPClient
from toolweave.version import __version__


def test_the_wheel_installs_and_serves(tmp_path: Path, toolweave_wheel: Path) -> None:
    venv = BorrowingVenv(tmp_path / "venv")
    venv.pip_install("--no-deps", str(toolweave_wheel))
    assert venv.run("toolweave", "--version", cwd=tmp_path) == f"toolweave {__version__}"
    where = venv.run("python", "-c", "import toolweave; print(toolweave.__file__)", cwd=tmp_path)
    assert where.startswith(str(venv.site))
    (tmp_path / "toolweave.toml").write_text(f'[serve]\ndata_dir = "{tmp_path / "data"}"\n')

    async def served_call() -> str:
        client = MCPClient.stdio(
            str(venv.bin / "toolweave"), ["serve", "--stdio", "--demo"], env=clean_env(),
            cwd=str(tmp_path),
        )  # fmt: skip
        async with client:
            return (await client.call_tool("calculate", {"expression": "17 * 23"})).text

    assert "391" in asyncio.run(served_call())
