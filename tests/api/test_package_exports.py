"""Every package's `__init__` exports the same way: lazily (`toolweave._lazy.lazy_exports`, no
eager import of toolweave modules), at most `MAX_EXPORTS` names, each of which resolves; and a
name has one home: the same object is never exported by two packages unless one contains the
other (a parent may gather its subpackages' names, as `toolweave` and `toolweave.mcp` do)."""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict

import pytest

from tests.api.source_tree import modules

MAX_EXPORTS = 40
EAGER_ALLOWED = {"toolweave._lazy", "toolweave.version"}
PACKAGES = sorted(name for name, module in modules().items() if module.is_package)


def _eager_imports(name: str) -> list[str]:
    """toolweave modules the package's `__init__` imports at module level (not under
    TYPE_CHECKING, not inside a function)."""
    module = modules()[name]
    return [
        f"line {node.lineno}: {module.resolve(node)}"
        for node in module.tree.body
        if isinstance(node, ast.ImportFrom)
        and module.resolve(node).startswith("toolweave")
        and module.resolve(node) not in EAGER_ALLOWED
    ]


def _uses_lazy_exports(name: str) -> bool:
    for node in modules()[name].tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "lazy_exports":
                return True
    return False


def _defined_here(name: str) -> set[str]:
    found: set[str] = set()
    for node in modules()[name].tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return found


@pytest.mark.parametrize("name", PACKAGES)
def test_a_package_exports_lazily_and_at_most_forty_names(name: str) -> None:
    package = importlib.import_module(name)
    exported = list(getattr(package, "__all__", []))
    assert _eager_imports(name) == []
    assert len(exported) <= MAX_EXPORTS, f"{name} exports {len(exported)} names"
    if set(exported) - _defined_here(name) - {"__version__"}:
        assert _uses_lazy_exports(name), f"{name} exports imported names without lazy_exports"
    for public in exported:
        assert getattr(package, public) is not None, f"{name}.{public}"


def test_a_name_has_one_home() -> None:
    exporters: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for name in PACKAGES:
        package = importlib.import_module(name)
        for public in getattr(package, "__all__", []):
            value = getattr(package, public)
            if isinstance(value, type) or callable(value):
                exporters[id(value)].append((name, public))
    for places in exporters.values():
        for first, public in places:
            for second, _ in places:
                related = first.startswith(second + ".") or second.startswith(first + ".")
                assert first == second or related, f"{public}: exported by {first} and {second}"
