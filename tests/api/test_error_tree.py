"""The error tree drawn in `toolweave.errors` (and in docs/architecture.md) is the real one: every
public exception class appears once, under its first base, with its other bases named "also",
in the package the drawing says; and every one lives in an `errors` module."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

import toolweave
import toolweave.errors

DOCS = Path(__file__).parents[2] / "docs" / "architecture.md"
_LINE = re.compile(r"^(?P<prefix>[ │├└─]*)(?P<name>[A-Za-z]+)(?: \((?P<notes>[^)]*)\))?")


@dataclass(frozen=True)
class Drawn:
    name: str
    parent: str | None
    also: frozenset[str]
    package: str


def drawn_tree(text: str) -> dict[str, Drawn]:
    """The classes a drawing names, from its `ToolweaveError` line to the end of the tree."""
    lines = text[text.index("    ToolweaveError\n") :].split("\n")
    stack: list[tuple[int, str, str]] = []  # (depth, name, package)
    found: dict[str, Drawn] = {}
    for line in lines:
        body = line[4:]
        match = _LINE.match(body)
        if not body.strip() or match is None:
            break
        depth = len(match["prefix"]) // 4
        name = match["name"]
        notes = [n.strip() for n in (match["notes"] or "").split(";") if n.strip()]
        also = frozenset(n.removeprefix("also ") for n in notes if n.startswith("also "))
        packages = [n for n in notes if not n.startswith("also ")]
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1] if stack else None
        package = packages[0] if packages else (parent[2] if parent else "")
        assert name not in found, f"{name} is drawn twice"
        found[name] = Drawn(name, parent[1] if parent else None, also, package)
        stack.append((depth, name, package))
    return found


def public_exceptions() -> dict[str, type[BaseException]]:
    classes: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(toolweave.__path__, "toolweave."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and not name.startswith("_")
            ):
                classes[name] = value
    classes.update(ToolweaveError=toolweave.errors.ToolweaveError)
    return classes


def test_the_docstring_draws_every_public_exception_as_it_is() -> None:
    drawn = drawn_tree(toolweave.errors.__doc__ or "")
    classes = public_exceptions()
    assert sorted(drawn) == sorted(classes)
    for name, node in drawn.items():
        cls = classes[name]
        bases = [base.__name__ for base in cls.__bases__]
        if node.parent is None:
            assert bases == ["Exception"]
            continue
        assert bases[0] == node.parent, f"{name}: the first base is {bases[0]}"
        assert set(bases[1:]) == node.also, f"{name}: also {bases[1:]}"
        if node.package:
            assert cls.__module__.startswith(f"toolweave.{node.package}."), (name, cls.__module__)


def test_every_public_exception_lives_in_an_errors_module() -> None:
    for name, cls in public_exceptions().items():
        assert cls.__module__.rsplit(".", 1)[-1] == "errors", f"{name} is in {cls.__module__}"


def test_the_architecture_page_draws_the_same_tree() -> None:
    assert drawn_tree(DOCS.read_text(encoding="utf-8")) == drawn_tree(
        toolweave.errors.__doc__ or ""
    )
