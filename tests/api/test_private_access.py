"""No module reaches into another's private attributes, and no package imports another's private
names: a rename of a private must never break code elsewhere silently.

- `obj._name` is refused when `_name` is defined (a def, a class or an assigned attribute) in
  some other module of toolweave and not in this one; `self._x`, `cls._x` and a module's use of
  its own privates are fine.
- `from M import _name`, or importing a private module (`toolweave.mcp.server._guards`), is
  refused across top-level packages (`toolweave.<package>`): a private is internal to the package
  that holds it. The root's private modules (`toolweave._lazy`, `toolweave._sse`) are shared by
  every package.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache

from tests.api.source_tree import Module, modules

KNOWN_ATTRIBUTE_REACHES: dict[str, set[str]] = {}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


@cache
def _owners() -> dict[str, set[str]]:
    """Which modules define each private name."""
    owners: dict[str, set[str]] = defaultdict(set)
    for module in modules().values():
        for name in _defined(module.tree):
            if _private(name):
                owners[name].add(module.name)
    return owners


def _attribute_reaches(module: Module) -> list[str]:
    own = _defined(module.tree)
    allowed = KNOWN_ATTRIBUTE_REACHES.get(module.name, set())
    found = []
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        if node.attr in own or node.attr in allowed or not _owners().get(node.attr):
            continue
        homes = ", ".join(sorted(_owners()[node.attr]))
        found.append(f"{module.path}:{node.lineno}: {ast.unparse(node)} (defined in {homes})")
    return found


def _top(name: str) -> str:
    return ".".join(name.split(".")[:2])


def _private_imports(module: Module) -> list[str]:
    found = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom):
            source = module.resolve(node)
            imported = [(source, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            imported = [(alias.name, "") for alias in node.names]
        else:
            continue
        for source, name in imported:
            if not source.startswith("toolweave.") or _top(source) == _top(module.name):
                continue
            parts = [*source.split(".")[1:], name]
            if any(_private(part) for part in parts[1:] if part) or (
                _private(parts[0]) and name and _private(name)
            ):
                found.append(f"{module.path}:{node.lineno}: {source} {name}".rstrip())
    return found


def test_no_module_reaches_into_another_modules_private_attributes() -> None:
    reaches = [line for m in modules().values() for line in _attribute_reaches(m)]
    assert reaches == []


def test_the_known_reaches_are_still_there() -> None:
    """An entry that no longer reaches anything is removed, so the list only shrinks."""
    for name, attributes in KNOWN_ATTRIBUTE_REACHES.items():
        used = {
            node.attr
            for node in ast.walk(modules()[name].tree)
            if isinstance(node, ast.Attribute) and node.attr in attributes
        }
        assert used == attributes, f"{name}: drop {sorted(attributes - used)} from the list"


def test_no_package_imports_another_packages_private_names() -> None:
    imports = [line for m in modules().values() for line in _private_imports(m)]
    assert imports == []


def test_the_checks_catch_what_they_describe() -> None:
    """The detector itself, on a module written to break both rules."""
    source = (
        "from toolweave.memory.manager import _x\n"
        "import toolweave.mcp.server._guards\n"
        "from toolweave._lazy import lazy_exports\n"
        "def f(scheduler, self):\n"
        "    scheduler._poke()\n"
        "    self._poke()\n"
    )
    probe = Module(
        "toolweave.host.probe", modules()["toolweave.host"].path, ast.parse(source), False
    )
    assert [line.split(": ", 1)[1] for line in _attribute_reaches(probe)] == [
        "scheduler._poke (defined in toolweave.scheduler.scheduler)"
    ]
    assert [line.split(": ", 1)[1] for line in _private_imports(probe)] == [
        "toolweave.memory.manager _x",
        "toolweave.mcp.server._guards",
    ]
