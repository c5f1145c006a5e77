"""Which optional extra brings which modules, so a missing one is reported as the one
`pip install 'toolweave[<extra>]'` that fixes it rather than a bare `ModuleNotFoundError`.

The modules are looked up, never imported here: `import toolweave` stays light, and a caller
checks (`missing`) or demands (`require`) an extra right where the feature starts.
"""

from __future__ import annotations

import importlib.util

from toolweave.errors import MissingDependency

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "memory": ("numpy", "rjieba", "wordllama", "networkx"),
    "kb": ("numpy", "rjieba", "wordllama", "markitdown", "watchfiles"),
    "server": ("starlette", "uvicorn"),
}
"""The modules each extra installs that toolweave imports (pyproject.toml lists the packages)."""


def missing(extra: str) -> str | None:
    """The first module of `extra` that is not installed, or None when all are."""
    for module in EXTRA_MODULES[extra]:
        if importlib.util.find_spec(module) is None:
            return module
    return None


def require(extra: str, feature: str) -> None:
    """Raise `MissingDependency` naming `feature` and `extra` when a module of it is missing."""
    module = missing(extra)
    if module is not None:
        raise MissingDependency(feature, module, extra)
