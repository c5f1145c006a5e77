"""Every file a docstring names exists: a docstring that points at `host/providers/proxy.py` or
`docs/governance.md` is followed by the next reader, so a move or a rename must update it.

A name counts when it is a Python file (`agent/_run/loop.py`, or a bare `loop.py`) or a page
under `docs/`; other Markdown names (`SKILL.md`, `dev/code-review.md`) are the user's files. It
is looked up where a reader would look: next to the module, in its package's parents, under
`src/toolweave/`, and at the repository root. `EXAMPLES` lists the few names docstrings use as
examples of a user's file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.api.source_tree import SRC, modules

ROOT = SRC.parents[1]
_NAME = re.compile(r"(?<![\w./~-])((?:[\w-]+/)*[\w-]+\.py|docs/[\w-]+\.md)(?![\w/])")
EXAMPLES = frozenset(
    {
        "src/app.py",  # `@src/app.py` in a slash command embeds a user's file
        "tools/check.py",  # a hook command in a user's settings
        "fill.py",  # skill scripts, named relative to a skill
        "scripts/fill.py",
        "ooxml/scripts/pack.py",
        "docs/readme.md",  # a path argument a model passes to the filesystem tools
    }
)


def _docstrings(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text:
                found.append(text)
    return found


def _exists(name: str, module: Path) -> bool:
    bases = [module.parent, *module.parent.parents]
    bases = [b for b in bases if b == ROOT or SRC in (b, *b.parents)] + [SRC, ROOT]
    if any((base / name).exists() for base in bases):
        return True
    if "/" not in name:  # a bare module name: anywhere in the package tree
        return any(SRC.rglob(name))
    return False


def named_files(text: str) -> list[str]:
    names = []
    for match in _NAME.finditer(text):
        if match.group(1) not in EXAMPLES:
            names.append(match.group(1))
    return names


def missing_files() -> list[str]:
    missing = []
    for module in modules().values():
        for text in _docstrings(module.tree):
            for name in named_files(text):
                if not _exists(name, module.path):
                    missing.append(f"{module.path.relative_to(ROOT)}: {name}")
    return sorted(set(missing))


def test_every_file_a_docstring_names_exists() -> None:
    assert missing_files() == []


def test_the_check_sees_a_moved_file() -> None:
    text = "Served by `host/providers/proxy.py`, formerly `mcp/proxy.py`; see docs/serve.md."
    assert named_files(text) == ["host/providers/proxy.py", "mcp/proxy.py", "docs/serve.md"]
    here = SRC / "mcp" / "__init__.py"
    assert _exists("host/providers/proxy.py", here)
    assert not _exists("mcp/proxy.py", here)
    assert _exists("docs/serve.md", here)
