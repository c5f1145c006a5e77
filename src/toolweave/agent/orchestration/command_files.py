"""Claude Code command folders: `.claude/commands/**.md` read the way Claude Code reads them.

A folder people copy from a public repository holds files toolweave cannot use (a template past
the size limit, broken YAML, a `help.md` that collides with a built-in). Each such file is
skipped with a warning naming it and the reason; the rest load. Files in subfolders load too:
`dev/code-review.md` answers to `/code-review` (its description gains "(project:dev)", as in
Claude Code's current `/help`) and to the older spelling `/dev:code-review`. A bare name two
subfolders share, or one a top-level file already has, is reachable only by its namespaced
spelling. Built-in commands win over a file of the same name, as they do in Claude Code; a
subfolder file of that name keeps its namespaced spelling.

Frontmatter keeps `description`, `argument-hint` (always a string: `[project-name]` is the hint
as written, not a YAML list), `allowed-tools` (a list or a comma/space separated string) and
`model`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError
from toolweave.skills import split_tools
from toolweave.storage.files import parse_frontmatter, split_header

NAMESPACE_SEPARATOR = ":"
"""Between a command's subfolders and its name (`dev/code-review.md` is `/dev:code-review`)."""
_HINT_LINE = re.compile(r"^(argument-hint:)[ \t]*(.*?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class CommandMeta:
    """What a command file's frontmatter says besides its template."""

    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str = ""


def command_meta(text: str, where: str) -> tuple[CommandMeta, str]:
    """`(meta, body)` of a command file, read with the one frontmatter reader
    (`storage.files`); `ConfigError` naming `where` for unreadable YAML."""
    header, body = split_header(text, where)
    if header is None:
        return CommandMeta(), body
    raw = parse_frontmatter(_HINT_LINE.sub(_quote_hint, header), where)
    return _meta(raw, where), body


def _quote_hint(match: re.Match[str]) -> str:
    """`argument-hint: [a] [b]` as a YAML string: the hint is text shown to people."""
    value = match.group(2)
    if not value or value[0] in "\"'|>":
        return match.group(0)
    return f"{match.group(1)} {json.dumps(value, ensure_ascii=False)}"


def _meta(raw: dict[str, Any], where: str) -> CommandMeta:
    def text(key: str) -> str:
        value = raw.get(key)
        if value is None:
            return ""
        if not isinstance(value, str | int | float):
            raise ConfigError(f"{where}: frontmatter {key!r} must be a string, got {value!r}")
        return str(value).strip()

    tools = raw.get("allowed-tools", raw.get("allowed_tools"))
    if tools is not None and not isinstance(tools, str | list | tuple):
        raise ConfigError(f"{where}: frontmatter 'allowed-tools' must be a list or a string")
    return CommandMeta(
        text("description"), text("argument-hint"), tuple(split_tools(tools)), text("model")
    )


@dataclass(frozen=True, slots=True)
class CommandFile:
    """One `.md` file of a command folder: its bare name and subfolder namespace."""

    path: Path
    name: str
    namespace: str

    @property
    def qualified(self) -> str:
        return f"{self.namespace}{NAMESPACE_SEPARATOR}{self.name}" if self.namespace else self.name


def command_files(directory: Path) -> list[Path]:
    """Every `.md` file under `directory`, hidden folders left out, in a stable order."""
    return sorted(
        file
        for file in directory.rglob("*.md")
        if not any(part.startswith(".") for part in file.relative_to(directory).parts)
        and file.is_file()
    )


def describe(directory: Path, file: Path) -> CommandFile:
    relative = file.relative_to(directory)
    return CommandFile(file, file.stem, NAMESPACE_SEPARATOR.join(relative.parent.parts))


def reachable_names(
    files: list[CommandFile], builtin: frozenset[str], skip: Callable[[Path, str], None]
) -> dict[str, list[str]]:
    """For each file path, the names it answers to (first = the one `/help` lists).

    A top-level file owns its bare name; a subfolder file gets the bare name when no top-level
    file, built-in or other subfolder file claims it, and always its `namespace:name` spelling.
    """
    top_level = {f.name for f in files if not f.namespace}
    bare_count: dict[str, int] = {}
    for f in files:
        if f.namespace:
            bare_count[f.name] = bare_count.get(f.name, 0) + 1
    names: dict[str, list[str]] = {}
    for f in files:
        if f.name in builtin and not f.namespace:
            skip(f.path, f"the built-in /{f.name} takes precedence over this file")
            continue
        if not f.namespace:
            names[str(f.path)] = [f.name]
            continue
        own = [f.qualified]
        if f.name not in builtin and f.name not in top_level and bare_count[f.name] == 1:
            own.insert(0, f.name)
        names[str(f.path)] = own
    return names
