"""The built toolweave wheel and clean virtualenvs to install it (and projects using it) into.

A venv made here has no pip of its own and borrows this environment's dependencies through a
`.pth` line, so installs run with `--no-index` and nothing is downloaded; what is installed into
the venv itself comes first on its path, so a test can tell the wheel from the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD_TIMEOUT = 300
"""Seconds a wheel build or a pip install may take on a loaded 2-core machine."""


def clean_env() -> dict[str, str]:
    """This process's environment without what would point a venv back at the checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def build_wheel(outdir: Path) -> Path:
    """Build toolweave's wheel from the checkout into `outdir` (as `make dist` does)."""
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(outdir)],
        cwd=ROOT, check=True, capture_output=True, timeout=BUILD_TIMEOUT,
    )  # fmt: skip
    (wheel,) = outdir.glob("toolweave-*.whl")
    return wheel


class BorrowingVenv:
    """A clean venv at `path` whose dependencies are this environment's."""

    def __init__(self, path: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
        self.bin = path / "bin"
        self.python = self.bin / "python"
        self.site = Path(
            self.run("python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
        )
        (self.site / "borrowed_dependencies.pth").write_text(
            sysconfig.get_paths()["purelib"] + "\n"
        )

    def run(self, program: str, *args: str, cwd: Path | None = None) -> str:
        """Run the venv's `program` (python, or a script it installed); its stdout, stripped."""
        done = subprocess.run(
            [str(self.bin / program), *args],
            check=True, capture_output=True, text=True, env=clean_env(), cwd=cwd,
            timeout=BUILD_TIMEOUT,
        )  # fmt: skip
        return done.stdout.strip()

    def pip_install(self, *args: str) -> None:
        """`pip install --no-index ARGS` into the venv (this environment's pip drives it)."""
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(self.python), "install", "-q",
             "--no-index", *args],
            check=True, capture_output=True, timeout=BUILD_TIMEOUT, env=clean_env(),
        )  # fmt: skip
