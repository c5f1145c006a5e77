"""Slash commands: `/name rest of line` becomes a prompt template before the run starts.

`Commands({"review": "Review $ARGUMENTS for bugs"})` maps names to templates; `$ARGUMENTS` (Claude
Code) and its short form `$args` are replaced by the rest of the line (`$ARGUMENTS[0]` / `$0` by its
first word), or it is appended when the template has none. The expansion is
`toolweave.skills.arguments.expand_arguments`, the one skills use, so a template means the same in
a command file and in a SKILL.md. Unknown commands pass through unchanged, so a message that
merely starts with "/" is not swallowed. Names are validated and may not shadow the built-in
commands a chat front end handles itself.

Definitions can live in a JSON or YAML file (`Commands.from_file`) or in a Claude Code style
directory of `*.md` files with `description` / `argument-hint` frontmatter
(`Commands.from_directory`, e.g. `.claude/commands`); both are re-read when they change, checked
on each use by modification time, so edits take effect without a restart.
"""

from __future__ import annotations

import builtins
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError
from toolweave.skills.arguments import expand_arguments
from toolweave.storage.files import split_frontmatter

logger = logging.getLogger("toolweave.agent.orchestration.slash_commands")

BUILTIN_COMMANDS = frozenset({"clear", "clock", "cmd", "exit", "help", "plan", "quit", "stop"})
"""Commands front ends handle themselves; a custom command may not take these names."""
MAX_TEMPLATE_CHARS = 20_000
_NAME = re.compile(r"^[^\W_][\w-]{0,63}$")
_LINE = re.compile(r"^/(\S+)(?:\s+(.*))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Command:
    """One command: its template and, from frontmatter, a description and an argument hint."""

    name: str
    template: str
    description: str = ""
    argument_hint: str = ""

    def expand(self, arguments: str) -> str:
        return expand_arguments(self.template, arguments)


def check_command_name(name: object, where: str = "Commands") -> str:
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ConfigError(
            f"{where}: command name {name!r} is invalid; use 1-64 letters (any language), "
            "digits, '_' or '-', starting with a letter or digit (no leading '/')"
        )
    if name in BUILTIN_COMMANDS:
        raise ConfigError(
            f"{where}: command name {name!r} would shadow the built-in /{name}; pick another name"
        )
    return name


def _command(name: object, raw: Any, where: str) -> Command:
    checked = check_command_name(name, where)
    if isinstance(raw, Command):
        return raw
    description = argument_hint = ""
    if isinstance(raw, Mapping):
        unknown = set(raw) - {"template", "description", "argument-hint"}
        if unknown or not isinstance(raw.get("template"), str):
            raise ConfigError(
                f"{where}: command {checked!r} needs a string 'template' (optional "
                f"'description', 'argument-hint'), got keys {sorted(raw)}"
            )
        description = str(raw.get("description", ""))
        argument_hint = str(raw.get("argument-hint", ""))
        raw = raw["template"]
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(f"{where}: command {checked!r} must have a non-empty template string")
    if len(raw) > MAX_TEMPLATE_CHARS:
        raise ConfigError(f"{where}: command {checked!r} is longer than {MAX_TEMPLATE_CHARS} chars")
    return Command(checked, raw, description, argument_hint)


def parse_markdown_command(name: str, text: str, where: str) -> Command:
    """A Claude Code command file: optional YAML frontmatter, then the template body."""
    meta, body = split_frontmatter(text, where)
    meta = meta or {}
    return _command(
        name,
        {
            "template": body.strip(),
            "description": meta.get("description", ""),
            "argument-hint": meta.get("argument-hint", ""),
        },
        where,
    )


class Commands:
    """A set of slash commands; `rewrite(text)` expands `/name args` or returns `text`."""

    def __init__(self, commands: Mapping[str, Any] | None = None) -> None:
        self._commands = {
            c.name: c for c in (_command(n, raw, "Commands") for n, raw in (commands or {}).items())
        }
        self._source: Path | None = None
        self._stamp: tuple[tuple[str, int, int], ...] = ()

    @classmethod
    def from_file(cls, path: str | Path) -> Commands:
        """Load `{name: template | {template, description, argument-hint}}` from a JSON or YAML
        file; re-read whenever it changes."""
        commands = cls()
        commands._source = Path(path)
        commands._reload()
        return commands

    @classmethod
    def load(cls, path: str | Path) -> Commands:
        """`from_directory` for a directory, `from_file` for a file."""
        target = Path(path).expanduser()
        if target.is_dir():
            return cls.from_directory(target)
        if not target.is_file():
            raise ConfigError(f"commands: {target} is neither a file nor a directory")
        return cls.from_file(target)

    @classmethod
    def from_directory(cls, path: str | Path) -> Commands:
        """Load `<name>.md` files (Claude Code's `.claude/commands`); re-read on change."""
        directory = Path(path)
        if not directory.is_dir():
            raise ConfigError(f"Commands.from_directory: {directory} is not a directory")
        return cls.from_file(directory)

    # -- lookups ------------------------------------------------------------------------------

    def get(self, name: str) -> Command | None:
        self._refresh()
        return self._commands.get(name)

    def list(self) -> builtins.list[Command]:
        self._refresh()
        return [self._commands[n] for n in sorted(self._commands)]

    def names(self) -> builtins.list[str]:
        return [c.name for c in self.list()]

    def rewrite(self, text: str) -> str:
        """`/name rest` -> the expanded template; anything else (unknown command, plain text,
        a path such as `/etc/hosts`) comes back unchanged."""
        split = _split(text)
        command = self.get(split[0]) if split is not None else None
        return command.expand(split[1]) if command is not None and split else text

    def handles(self, text: str) -> bool:
        """Whether `text` is `/name ...` for one of these commands."""
        split = _split(text)
        return split is not None and split[0] in self

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    # -- reloading ----------------------------------------------------------------------------

    def _files(self) -> builtins.list[Path]:
        source = self._source
        assert source is not None
        if source.is_dir():
            return sorted(source.glob("*.md"))
        return [source]

    def _refresh(self) -> None:
        if self._source is None:
            return
        try:
            stamp = tuple((str(f), *_stat(f)) for f in self._files())
        except OSError:
            return  # a file mid-replace or removed: keep serving what was loaded
        if stamp != self._stamp:
            try:
                self._reload()
            except (ValueError, UnicodeDecodeError) as exc:
                # A half-finished edit must not break every message: keep the last good set.
                self._stamp = stamp
                logger.warning("slash commands not reloaded, keeping the previous set: %s", exc)

    def _reload(self) -> None:
        source = self._source
        assert source is not None
        files = self._files()
        stamp = tuple((str(f), *_stat(f)) for f in files)
        if source.is_dir():
            loaded = {}
            for file in files:
                command = parse_markdown_command(
                    file.stem, file.read_text(encoding="utf-8"), str(file)
                )
                loaded[command.name] = command
        else:
            loaded = {c.name: c for c in _load_mapping(source)}
        self._commands, self._stamp = loaded, stamp

    def __repr__(self) -> str:
        return f"Commands({sorted(self._commands)})"


def _split(text: str) -> tuple[str, str] | None:
    """`("name", "rest")` for `/name rest` (the rest may span lines), None for other text."""
    match = _LINE.match(text.strip())
    return (match.group(1), match.group(2) or "") if match is not None else None


def _stat(file: Path) -> tuple[int, int]:
    info = file.stat()
    return info.st_mtime_ns, info.st_size


def _load_mapping(file: Path) -> builtins.list[Command]:
    text = file.read_text(encoding="utf-8")
    if file.suffix in (".yaml", ".yml"):
        import yaml

        try:
            raw = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{file} is not valid YAML: {exc}") from None
    else:
        try:
            raw = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{file} is not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{file} must map command names to templates, got {type(raw).__name__}")
    return [_command(name, value, str(file)) for name, value in raw.items()]
