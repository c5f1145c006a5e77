"""The layers import downward only, as docs/architecture.md draws them.

tools < storage < llm < capabilities (mcp, skills, memory, kb, builtins) < governance, accounting
< agent < scheduler < host < cli. A package imports only packages of a lower layer (never one
beside it), and every import counts: module level, inside a function, and under
`if TYPE_CHECKING:` (a type-only import upward still ties the lower layer to the upper one's
names). The root's own modules (`errors`, `version`, `_lazy`, `_sse`, `_bounded`, `_extras`)
sit below everything; the root package itself is the facade over all layers and is not a layer.
"""

from __future__ import annotations

import ast

import pytest

from tests.api.source_tree import Module, modules

LAYERS: tuple[tuple[str, ...], ...] = (
    ("tools",),
    ("storage",),
    ("llm",),
    ("mcp", "skills", "memory", "kb", "builtins"),
    ("governance", "accounting"),
    ("agent",),
    ("scheduler",),
    ("host",),
    ("cli",),
)
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}
ROOT_MODULES = {"errors", "version", "_lazy", "_sse", "_bounded", "_extras"}


def _package(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def imported_packages(module: Module) -> dict[str, int]:
    """The toolweave packages `module` imports, each with the first line that does."""
    found: dict[str, int] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom):
            source = module.resolve(node)
            names = (
                [f"toolweave.{a.name}" for a in node.names] if source == "toolweave" else [source]
            )
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("toolweave."):
                found.setdefault(_package(name), node.lineno)
    return found


def upward_imports(package: str) -> list[str]:
    rank = RANK[package]
    bad = []
    for module in modules().values():
        if _package(module.name) != package:
            continue
        for target, line in imported_packages(module).items():
            if target == package or target in ROOT_MODULES:
                continue
            if RANK.get(target, len(LAYERS)) >= rank:
                bad.append(f"{module.path}:{line}: {package} imports {target}")
    return bad


def test_every_package_has_a_layer() -> None:
    packages = {_package(name) for name in modules() if name.count(".") >= 1}
    assert packages - set(RANK) == ROOT_MODULES


@pytest.mark.parametrize("package", list(RANK))
def test_a_package_imports_only_lower_layers(package: str) -> None:
    assert upward_imports(package) == []


@pytest.mark.parametrize("package", ["governance", "accounting", "storage"])
def test_governance_accounting_and_storage_never_import_the_agent_host_or_cli(
    package: str,
) -> None:
    for module in modules().values():
        if _package(module.name) == package:
            assert not {"agent", "host", "cli"} & set(imported_packages(module)), module.path


def test_scheduler_and_host_may_import_the_agent_never_the_reverse() -> None:
    users = {_package(m.name) for m in modules().values() if "agent" in imported_packages(m)} - {
        "agent",
        "",
    }
    assert {"scheduler", "host"} <= users
    agent = [m for m in modules().values() if _package(m.name) == "agent"]
    assert all(not {"scheduler", "host"} & set(imported_packages(m)) for m in agent)


def test_tools_imports_nothing_above_it() -> None:
    for module in modules().values():
        if _package(module.name) == "tools":
            assert set(imported_packages(module)) <= {"tools", *ROOT_MODULES}, module.path


def test_type_checking_and_function_local_imports_count() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from toolweave.agent import Agent\n"
        "def f():\n"
        "    from ..host import app\n"
        "    import toolweave.cli\n"
    )
    probe = Module(
        "toolweave.storage.probe", modules()["toolweave.storage"].path, ast.parse(source), False
    )
    assert imported_packages(probe) == {"agent": 3, "host": 5, "cli": 6}


# Inside a package, no import cycle either (every import counts, as above). These are the
# cycles left to break, each a set of modules; the list only shrinks, and `agent`, `governance`
# and `mcp` must end without one: `agent` and `governance` have none (RunResult has its own
# module, the `_run` helpers take what they read, orchestration reaches the agent through
# `ScopedAgent`); `mcp`'s root is in layers (client < toolset, the toolset reads a manager
# through `client.servers.ManagedServers`) and `shared.jsonrpc` reaches the peer through its
# `Peer` protocol; in `mcp.server` nothing below the app imports it: sessions reach their server
# through `SessionHost` (the handler table the server binds), handlers and transports through
# `ServerView`, and the task runner calls `_run_tool`, below it. `host` has none either: the
# console reads its host through `ConsoleHost`, and the sandbox paths are handed the skill roots.
KNOWN_CYCLES: dict[str, list[frozenset[str]]] = {
    "builtins": [frozenset({"builtins._sql_postgres", "builtins.sql"})],
    "memory": [
        frozenset({"memory._overview", "memory._search", "memory.maintenance", "memory.manager"})
    ],
    "scheduler": [frozenset({"scheduler.clock_tools", "scheduler.scheduler"})],
    "skills": [frozenset({"skills.library", "skills.tools"})],
    "storage": [frozenset({"storage.retrieval.fusion", "storage.retrieval.index"})],
    "tools": [frozenset({"tools.base", "tools.calls", "tools.context", "tools.registry"})],
}


def imported_modules(module: Module) -> set[str]:
    """The toolweave modules `module` imports (a name imported from a package counts as its
    submodule when it is one)."""
    known = modules()
    found: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom):
            source = module.resolve(node)
            for alias in node.names:
                target = f"{source}.{alias.name}"
                found.add(target if target in known else source)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in known}


def package_cycles(package: str) -> list[frozenset[str]]:
    """The import cycles among `package`'s modules (strongly connected components of two or
    more), named without the `toolweave.` prefix."""
    graph = {
        name: {t for t in imported_modules(m) if _package(t) == package}
        for name, m in modules().items()
        if _package(name) == package
    }
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[frozenset[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        order[node] = low[node] = len(order)
        stack.append(node)
        for target in graph[node]:
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member.removeprefix("toolweave."))
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(frozenset(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return cycles


@pytest.mark.parametrize("package", list(RANK))
def test_no_import_cycle_inside_a_package_beyond_the_known_ones(package: str) -> None:
    assert sorted(map(sorted, package_cycles(package))) == sorted(
        map(sorted, KNOWN_CYCLES.get(package, []))
    )
