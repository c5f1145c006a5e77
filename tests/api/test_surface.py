"""The public surface a user reads first: `toolweave.__all__` matches the lazy export list, `from
toolweave import *` exports only public names, every public exception derives from
`ToolweaveError`, no public name lives in a private module, and no submodule reaches up through
the root package (the root names every layer, so importing it from a layer would invert them)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import toolweave
from toolweave import ConfigError, ToolweaveError

PACKAGES = (
    "toolweave.tools",
    "toolweave.storage",
    "toolweave.memory",
    "toolweave.llm",
    "toolweave.mcp",
    "toolweave.agent",
    "toolweave.host",
    "toolweave.kb",
)
SRC = Path(toolweave.__file__).parent
SUBMODULES = {m.name for m in pkgutil.iter_modules(toolweave.__path__)}


def test_all_matches_the_lazy_exports_and_the_type_checking_imports() -> None:
    assert sorted(toolweave.__all__) == sorted({*toolweave._EXPORTS, "__version__"})
    assert len(toolweave.__all__) == len(set(toolweave.__all__))
    for name in toolweave.__all__:
        assert getattr(toolweave, name) is not None, name
    # What type checkers see (the TYPE_CHECKING imports) is exactly what runs.
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(n for n in tree.body if isinstance(n, ast.If))
    typed = {
        a.asname or a.name for n in guarded.body if isinstance(n, ast.ImportFrom) for a in n.names
    }
    assert typed == set(toolweave._EXPORTS)


def test_star_import_exports_only_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from toolweave import *", namespace)
    exported = {name for name in namespace if name != "__builtins__"}
    assert exported == set(toolweave.__all__)
    assert not {"Any", "TYPE_CHECKING", "annotations", "importlib"} & exported


def _public_classes() -> list[tuple[str, type]]:
    found: list[tuple[str, type]] = []
    for package in ("toolweave", *PACKAGES):
        module = importlib.import_module(package)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value):
                found.append((f"{package}.{name}", value))
    return found


def test_every_public_exception_derives_from_toolweave_error() -> None:
    errors = [(name, cls) for name, cls in _public_classes() if issubclass(cls, BaseException)]
    names = {name.rsplit(".", 1)[1] for name, _ in errors}
    # The families the issue names are all there: tool, model, MCP, agent, configuration.
    assert {"ToolError", "ModelError", "ModelConfigError", "AgentError", "ConfigError"} <= names
    assert any(name.startswith("Mcp") or name.startswith("MCP") for name in names)
    for name, cls in errors:
        assert issubclass(cls, ToolweaveError), f"{name} does not derive from ToolweaveError"


def test_configuration_errors_are_value_errors_naming_the_field() -> None:
    from toolweave.agent import Agent
    from toolweave.llm import ModelConfigError, ScriptedModel, model_from_string

    with pytest.raises(ConfigError, match="max_turns"):
        Agent(ScriptedModel([]), max_turns=0)
    with pytest.raises(ModelConfigError) as caught:
        model_from_string("nope")
    assert isinstance(caught.value, ConfigError) and isinstance(caught.value, ValueError)


def test_no_public_name_lives_in_a_private_module() -> None:
    for package in ("toolweave", *PACKAGES):
        if package == "toolweave.mcp":
            continue  # the MCP core's layout (its OAuth provider) belongs to its own change
        module = importlib.import_module(package)
        for name in module.__all__:
            home = getattr(getattr(module, name), "__module__", None) or package
            private = [part for part in home.split(".") if part.startswith("_")]
            assert not private, f"{package}.{name} is defined in the private module {home}"


def _modules() -> list[Path]:
    return sorted(path for path in SRC.rglob("*.py") if path != SRC / "__init__.py")


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_submodule_imports_the_root_package(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    depth = len(path.relative_to(SRC).parts) - 1  # a relative import of this depth is the root
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert all(alias.name != "toolweave" for alias in node.names), path
        elif isinstance(node, ast.ImportFrom):
            root = (node.level == 0 and node.module == "toolweave") or (
                node.level == depth + 1 and node.module is None
            )
            # `from toolweave import llm` names a subpackage, not the root's re-exports.
            names = {alias.name for alias in node.names} - SUBMODULES
            assert not (root and names), f"{path}:{node.lineno} imports {names} from the root"


def test_the_version_is_defined_once() -> None:
    from importlib.metadata import version

    from toolweave.version import __version__

    assert toolweave.__version__ is __version__
    assert version("toolweave") == __version__
