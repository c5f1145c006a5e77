"""Lazy package exports (PEP 562): the one `__getattr__`/`__dir__` pair every package uses.

A package lists `name -> module` and its public names import on first use, so `import
toolweave` and a stdio MCP server's cold start pay only for what they touch. A module is given
relative to the package (`"client"`, `".types"`, `"client.auth"`) or absolute
(`"toolweave.tools"`). This module imports nothing of toolweave, so any package may use it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)` in a package's `__init__`."""

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        spec = target if target.startswith("toolweave") else "." + target.lstrip(".")
        value = getattr(importlib.import_module(spec, package), name)
        vars(sys.modules[package])[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
