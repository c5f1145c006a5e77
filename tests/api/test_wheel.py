"""The built wheel installs into a clean venv and works: `toolweave --version` and one served
tool call over stdio. The venv borrows this environment's dependencies through a `.pth` line
(installed with `--no-deps`, nothing downloaded), and the test checks that toolweave itself is
imported from the wheel, not from the checkout."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from toolweave.mcp import MCPClient
from toolweave.version import __version__

ROOT = Path(__file__).resolve().parents[2]


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def test_the_wheel_installs_and_serves(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=ROOT, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = dist.glob("toolweave-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    (site / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=300, env=clean_env(),
    )  # fmt: skip
    version = subprocess.run(
        [str(venv / "bin" / "toolweave"), "--version"],
        check=True, capture_output=True, text=True, env=clean_env(), cwd=tmp_path,
    )  # fmt: skip
    assert version.stdout.strip() == f"toolweave {__version__}"
    where = subprocess.run(
        [str(python), "-c", "import toolweave; print(toolweave.__file__)"],
        check=True, capture_output=True, text=True, env=clean_env(), cwd=tmp_path,
    )  # fmt: skip
    assert where.stdout.strip().startswith(str(site))
    (tmp_path / "toolweave.toml").write_text(f'[serve]\ndata_dir = "{tmp_path / "data"}"\n')

    async def served_call() -> str:
        client = MCPClient.stdio(
            str(venv / "bin" / "toolweave"), ["serve", "--stdio", "--demo"], env=clean_env(),
            cwd=str(tmp_path),
        )  # fmt: skip
        async with client:
            return (await client.call_tool("calculate", {"expression": "17 * 23"})).text

    assert "391" in asyncio.run(served_call())
