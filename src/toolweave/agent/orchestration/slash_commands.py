"""Slash commands: `/name rest of line` becomes a prompt template before the run starts.

`Commands({"review": "Review $ARGUMENTS for bugs"})` maps names to templates; `$ARGUMENTS` (Claude
Code) and its short form `$args` are replaced by the rest of the line (`$ARGUMENTS[0]` / `$0` by its
first word), or it is appended when the template has none. The expansion is
`toolweave.skills.arguments.expand_arguments`, the one skills use, so a template means the same in
a command file and in a SKILL.md. Unknown commands pass through unchanged, so a message that
merely starts with "/" is not swallowed. Names are validated and may not shadow the built-in
commands a chat front end handles itself.

Definitions can live in a JSON or YAML file (`Commands.from_file`) or in a Claude Code style
directory of `*.md` files, subfolders included (`Commands.from_directory`, e.g.
`.claude/commands`; see `command_files` for names, frontmatter and the files it skips); both are
re-read when they change, checked on each use by modification time, so edits take effect
without a restart.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolweave.agent.orchestration.command_files import (
    command_files,
    command_meta,
    describe,
    reachable_names,
)
from toolweave.errors import ConfigError
from toolweave.skills.arguments import expand_arguments

logger = logging.getLogger("toolweave.agent.orchestration.slash_commands")

BUILTIN_COMMANDS = frozenset({"clear", "clock", "cmd", "exit", "help", "plan", "quit", "stop"})
"""Commands front ends handle themselves; a custom command may not take these names."""
MAX_TEMPLATE_CHARS = 128_000
"""A command template longer than this is refused (a file: skipped with a warning). Real
command files reach 120,000 characters; Claude Code sets no limit of its own."""
_NAME = re.compile(r"^[^\W_][\w-]{0,63}$")
_LINE = re.compile(r"^/(\S+)(?:\s+(.*))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Command:
    """One command: its template and, from frontmatter, a description, an argument hint, the
    tools it pre-approves and the model it runs on. `name` is the spelling `/help` lists;
    `namespace` is the subfolder of a command file (`dev` for `dev/code-review.md`)."""

    name: str
    template: str
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str = ""
    namespace: str = ""
    path: str = ""
    """The command file it was read from ("" for a mapping): under a folder the agent's own
    tools can write, its `allowed-tools` count only once the file is trusted."""

    @property
    def help_description(self) -> str:
        """The description `/help` shows: "(project:dev)" appended for a subfolder command."""
        scope = f"(project:{self.namespace})" if self.namespace else ""
        return " ".join(part for part in (self.description, scope) if part)

    def expand(self, arguments: str) -> str:
        return expand_arguments(self.template, arguments)


def check_command_name(name: object, where: str = "Commands", *, builtin_ok: bool = False) -> str:
    """`name` if it is a valid command name; `ConfigError` naming the fix otherwise. A name
    that shadows a built-in is refused unless `builtin_ok` (a subfolder file reached as
    `/dev:help`)."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ConfigError(
            f"{where}: command name {name!r} is invalid; use 1-64 letters (any language), "
            "digits, '_' or '-', starting with a letter or digit (no leading '/')"
        )
    if name in BUILTIN_COMMANDS and not builtin_ok:
        raise ConfigError(
            f"{where}: command name {name!r} would shadow the built-in /{name}; pick another name"
        )
    return name


def _template(name: str, raw: object, where: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(f"{where}: command {name!r} must have a non-empty template string")
    if len(raw) > MAX_TEMPLATE_CHARS:
        raise ConfigError(
            f"{where}: command {name!r} is {len(raw)} characters, longer than "
            f"MAX_TEMPLATE_CHARS ({MAX_TEMPLATE_CHARS})"
        )
    return raw


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
    return Command(checked, _template(checked, raw, where), description, argument_hint)


def parse_markdown_command(name: str, text: str, where: str, namespace: str = "") -> Command:
    """A Claude Code command file named `name` (its stem) in subfolder `namespace`: optional
    YAML frontmatter, then the template body. Whether a name a built-in has is reachable is the
    folder's decision (`command_files.reachable_names`)."""
    check_command_name(name, where, builtin_ok=True)
    meta, body = command_meta(text, where)
    return Command(
        name,
        _template(name, body.strip(), where),
        meta.description,
        meta.argument_hint,
        meta.allowed_tools,
        meta.model,
        namespace,
    )


class Commands:
    """A set of slash commands; `rewrite(text)` expands `/name args` or returns `text`."""

    def __init__(
        self, commands: Mapping[str, Any] | None = None, *, models: Mapping[str, Any] | None = None
    ) -> None:
        self._commands = {
            c.name: c for c in (_command(n, raw, "Commands") for n, raw in (commands or {}).items())
        }
        self._aliases: dict[str, str] = {}
        self._source: Path | None = None
        self._stamp: tuple[tuple[str, int, int], ...] = ()
        self.skipped: builtins.list[tuple[Path, str]] = []
        """Files of a command folder that were not loaded, with the reason (also logged)."""
        self.models: dict[str, Any] = dict(models or {})
        """The `model:` names command files use (`haiku`, `claude-3-5-haiku-20241022`) mapped
        to the `toolweave.llm.Model` a run of that command uses."""

    @classmethod
    def from_file(cls, path: str | Path, *, models: Mapping[str, Any] | None = None) -> Commands:
        """Load `{name: template | {template, description, argument-hint}}` from a JSON or YAML
        file; re-read whenever it changes."""
        commands = cls(models=models)
        commands._source = Path(path)
        commands._reload()
        return commands

    @classmethod
    def load(cls, path: str | Path, *, models: Mapping[str, Any] | None = None) -> Commands:
        """`from_directory` for a directory, `from_file` for a file."""
        target = Path(path).expanduser()
        if target.is_dir():
            return cls.from_directory(target, models=models)
        if not target.is_file():
            raise ConfigError(f"commands: {target} is neither a file nor a directory")
        return cls.from_file(target, models=models)

    @classmethod
    def from_directory(
        cls, path: str | Path, *, models: Mapping[str, Any] | None = None
    ) -> Commands:
        """Load `**/<name>.md` files (Claude Code's `.claude/commands`); re-read on change.
        `models` maps the `model:` names the files use to `Model`s."""
        directory = Path(path)
        if not directory.is_dir():
            raise ConfigError(f"Commands.from_directory: {directory} is not a directory")
        return cls.from_file(directory, models=models)

    # -- lookups ------------------------------------------------------------------------------

    def get(self, name: str) -> Command | None:
        """The command `/name` runs: its listed name or another spelling (`dev:code-review`)."""
        self._refresh()
        return self._commands.get(self._aliases.get(name, name))

    def list(self) -> builtins.list[Command]:
        self._refresh()
        return [self._commands[n] for n in sorted(self._commands)]

    def names(self) -> builtins.list[str]:
        return [c.name for c in self.list()]

    def invoke(self, text: str) -> tuple[Command, str] | None:
        """`(command, expanded template)` for `/name args`, None for any other text."""
        split = _split(text)
        command = self.get(split[0]) if split is not None else None
        if command is None or split is None:
            return None
        return command, command.expand(split[1])

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
            return command_files(source)
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
            self._commands, self._aliases = self._load_directory(source, files)
        else:
            self._commands, self._aliases = {c.name: c for c in _load_mapping(source)}, {}
        self._stamp = stamp

    def _load_directory(
        self, source: Path, files: builtins.list[Path]
    ) -> tuple[dict[str, Command], dict[str, str]]:
        """Every loadable file of a command folder; the others go to `skipped`, logged."""
        skipped: builtins.list[tuple[Path, str]] = []

        def skip(file: Path, reason: str) -> None:
            skipped.append((file, reason))
            logger.warning("slash command file %s skipped: %s", file, reason)

        parsed: dict[str, Command] = {}
        described = [describe(source, file) for file in files]
        for entry in described:
            try:
                text = entry.path.read_text(encoding="utf-8")
                parsed[str(entry.path)] = parse_markdown_command(
                    entry.name, text, str(entry.path), entry.namespace
                )
            except (ValueError, UnicodeDecodeError, OSError) as exc:
                skip(entry.path, str(exc).removeprefix(f"{entry.path}: "))
        names = reachable_names(
            [d for d in described if str(d.path) in parsed], BUILTIN_COMMANDS, skip
        )
        commands: dict[str, Command] = {}
        aliases: dict[str, str] = {}
        for path, spellings in names.items():
            command = dataclasses.replace(parsed[path], name=spellings[0], path=path)
            commands[command.name] = command
            aliases.update((spelling, command.name) for spelling in spellings[1:])
        self.skipped = skipped
        return commands, aliases

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
