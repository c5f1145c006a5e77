"""Which optional extra brings which modules, so a missing one is reported as the one
`pip install 'toolweave[<extra>]'` that fixes it rather than a bare `ModuleNotFoundError`.

`missing` only looks modules up (the tool host's banner uses it at start-up, importing
nothing); `require` imports the modules a feature is about to use, right where it starts, and
turns their absence into `MissingDependency`.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable

from toolweave.errors import MissingDependency

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "memory": ("numpy", "rjieba", "wordllama"),
    "kb": ("numpy", "rjieba", "wordllama", "markitdown", "watchfiles"),
    "server": ("starlette", "uvicorn"),
    "durable": ("dbos",),
}
"""The modules each extra installs that toolweave imports (pyproject.toml lists the packages)."""
RETRIEVAL_MODULES = ("numpy", "rjieba")
"""What embedded retrieval (memory, the knowledge base) imports for every store and embedder."""


def missing(extra: str) -> str | None:
    """The first module of `extra` that is not installed, or None when all are."""
    for module in EXTRA_MODULES[extra]:
        if importlib.util.find_spec(module) is None:
            return module
    return None


def require(extra: str, feature: str, modules: Iterable[str] | None = None) -> None:
    """Import `modules` (default: all of `extra`'s); raise `MissingDependency` naming `feature`
    and the `pip install` of `extra` when one is not installed."""
    for module in EXTRA_MODULES[extra] if modules is None else modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            if exc.name != module:
                raise
            raise MissingDependency(feature, module, extra) from None
