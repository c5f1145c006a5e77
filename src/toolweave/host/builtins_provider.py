"""The `builtins` provider: the built-in tools served by `toolweave serve`, safe by default.

`[builtins]` in `toolweave.toml` switches each tool on. Without any setting the host serves the
filesystem tools jailed to `[serve].data_dir/workspace`, `time` and `todo_write`; `sql_query`
needs a DSN, `fetch` an allow-list or an explicit `fetch = true`, and the shell `shell = true`,
after which every command no allow rule matches goes through the approval gate (MCP
elicitation) or is refused.

```toml
[builtins]
root = "~/work"                # filesystem jail (default: [serve].data_dir/workspace)
filesystem = true
writable = true                # write_file and edit_file
time = true
todo = true
sql_dsn = ""                   # sqlite:///path.db or postgresql://... turns sql_query on
sql_timeout = 5.0
sql_max_rows = 50
fetch = false                  # true, or a non-empty allow_domains, turns fetch on
allow_domains = []
shell = false
shell_allow = []               # regexes of commands that run without asking
shell_deny = ["^rm\\s"]        # default: toolweave.builtins.shell.DEFAULT_DENY
shell_timeout = 30.0
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError
from toolweave.tools.base import Tool

from .config import HostConfig

_BOOLEANS = ("filesystem", "writable", "time", "todo", "fetch", "shell")
_LISTS = ("allow_domains", "shell_allow", "shell_deny")
_NUMBERS = ("sql_timeout", "sql_max_rows", "shell_timeout")
_STRINGS = ("root", "sql_dsn")
KNOWN_KEYS = frozenset((*_BOOLEANS, *_LISTS, *_NUMBERS, *_STRINGS))


@dataclass(slots=True)
class BuiltinsConfig:
    """The validated `[builtins]` table (see the module docstring for each key)."""

    root: Path
    filesystem: bool = True
    writable: bool = True
    time: bool = True
    todo: bool = True
    sql_dsn: str = ""
    sql_timeout: float = 5.0
    sql_max_rows: int = 50
    fetch: bool = False
    allow_domains: list[str] = field(default_factory=list)
    shell: bool = False
    shell_allow: list[str] = field(default_factory=list)
    shell_deny: list[str] | None = None
    shell_timeout: float = 30.0


def parse_builtins(raw: dict[str, Any], data_dir: Path) -> BuiltinsConfig:
    """Validate `[builtins]`; errors name the key and what it must be."""
    unknown = set(raw) - KNOWN_KEYS
    if unknown:
        raise ConfigError(
            f"[builtins]: unknown key(s) {sorted(unknown)}; known: {sorted(KNOWN_KEYS)}"
        )
    values: dict[str, Any] = {}
    for key, value in raw.items():
        where = f"[builtins].{key}"
        if key in _BOOLEANS and not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, not {value!r}")
        if key in _LISTS and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            raise ConfigError(f"{where} must be a list of strings, not {value!r}")
        if key in _NUMBERS and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            raise ConfigError(f"{where} must be a positive number, not {value!r}")
        if key in _STRINGS and not isinstance(value, str):
            raise ConfigError(f"{where} must be a string, not {value!r}")
        values[key] = value
    root = Path(values.pop("root")).expanduser() if "root" in values else data_dir / "workspace"
    if "sql_max_rows" in values:
        values["sql_max_rows"] = int(values["sql_max_rows"])
    return BuiltinsConfig(root=root, **values)


class BuiltinsProvider:
    """Builds the enabled built-ins once and releases the SQL connection on close."""

    name = "builtins"

    def __init__(self, config: HostConfig) -> None:
        self.config = config
        self.settings = parse_builtins(config.builtins, config.data_dir)
        self._closers: list[Any] = []

    async def tools(self) -> list[Tool]:
        from toolweave import builtins

        settings = self.settings
        tools: list[Tool] = []
        if settings.filesystem or settings.shell:
            settings.root.mkdir(parents=True, exist_ok=True)
        if settings.filesystem:
            tools += builtins.filesystem_tools(settings.root, writable=settings.writable)
        if settings.time:
            tools.append(builtins.time_tool())
        if settings.todo:
            tools.append(builtins.todo_tool())
        if settings.sql_dsn:
            reader = builtins.SQLReader(
                settings.sql_dsn, settings.sql_timeout, settings.sql_max_rows
            )
            self._closers.append(reader)
            tools += reader.tools()
        if settings.fetch or settings.allow_domains:
            tools.append(builtins.fetch_tool(settings.allow_domains or None))
        if settings.shell:
            tools.append(
                builtins.shell_tool(
                    settings.root,
                    deny=settings.shell_deny,
                    allow=settings.shell_allow,
                    timeout=settings.shell_timeout,
                )
            )
        return tools

    async def close(self) -> None:
        for closer in self._closers:
            await closer.close()
        self._closers.clear()
