"""The `toolweave` command line: a thin Typer layer over the library.

Typer and Rich come with the `cli` extra (`pip install 'toolweave[cli]'`), so a library user
does not install them. `main` checks for them before anything else and, when they are missing,
prints the one line that fixes it and exits 1, with no traceback.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

CLI_REQUIREMENTS = ("typer", "rich", "click")
"""The modules the command line needs beyond the library (click comes with typer)."""
INSTALL_HINT = "pip install 'toolweave[cli]'"

if TYPE_CHECKING:
    from toolweave.cli.application import app


def main() -> None:
    try:
        from toolweave.cli.application import app
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in CLI_REQUIREMENTS:
            raise
        sys.stderr.write(
            f"toolweave: the command line needs {missing!r}, which is not installed; "
            f"install the cli extra: {INSTALL_HINT}\n"
        )
        raise SystemExit(1) from None
    app()


__getattr__, __dir__ = lazy_exports(__name__, {"app": "toolweave.cli.application"})


__all__ = ["app", "main"]
