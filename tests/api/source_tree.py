"""The parsed source tree the boundary tests read: every module of `toolweave` by dotted name,
with its syntax tree, so the tests check what the code says, not what importing it does."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import toolweave

SRC = Path(toolweave.__file__).parent


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool

    @property
    def package(self) -> str:
        """The package this module belongs to (a package's `__init__` belongs to itself)."""
        return self.name if self.is_package else self.name.rpartition(".")[0]

    def resolve(self, node: ast.ImportFrom) -> str:
        """The absolute module an import names (relative imports resolved)."""
        if node.level == 0:
            return node.module or ""
        base = self.package.split(".")
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, node.module] if node.module else base)


@cache
def modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = ["toolweave", *path.relative_to(SRC).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found[name] = Module(name, path, tree, is_package)
    return found
