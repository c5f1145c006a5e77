"""Configuration tools: let an agent read and (with an administrator's approval) change its
own settings and extension files.

`config_get` / `config_set` work over registered keys only (an unregistered key is refused, not
created), mask sensitive values in every answer, and write the settings file atomically.
`config_file_get` / `config_file_set` read and replace the extension files (`mcp.json`,
`hooks.json`, `commands.json`, `prompts.json`): the new text must be valid JSON before anything
is written, the write is atomic, and files with a reloader (hooks, commands) take effect at
once. Both setters require administrator approval, whatever the other rules say.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError
from toolweave.storage.files import atomic_write
from toolweave.tools.base import Tool
from toolweave.tools.errors import InvalidArguments
from toolweave.tools.function_tool import tool
from toolweave.tools.permissions import Permission

EXTENSION_FILES = ("commands.json", "hooks.json", "mcp.json", "prompts.json")
"""The extension files `config_file_get` / `config_file_set` manage."""
MASK = "********"

Reloader = Callable[[Path], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """A setting the agent may read and propose to change."""

    name: str
    description: str
    default: Any = None
    kind: type = str
    sensitive: bool = False


class AgentConfig:
    """Registered settings persisted in one JSON file, plus a directory of extension files.

    `reloaders` maps an extension file name to a callable run after it is written (how hooks
    and commands hot-reload); files without one take effect on the next start.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        keys: Iterable[ConfigKey],
        *,
        files_dir: str | os.PathLike[str] | None = None,
        reloaders: dict[str, Reloader] | None = None,
    ) -> None:
        self.path = Path(path)
        self.keys = {key.name: key for key in keys}
        self.files_dir = Path(files_dir) if files_dir is not None else self.path.parent
        self.reloaders = dict(reloaders or {})
        unknown = set(self.reloaders) - set(EXTENSION_FILES)
        if unknown:
            raise ConfigError(
                f"reloaders: unknown file(s) {sorted(unknown)}; known: {EXTENSION_FILES}"
            )
        self._lock = threading.Lock()

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        if not isinstance(data, dict):
            raise ConfigError(f"{self.path} must hold a JSON object of settings")
        return data

    def get(self, name: str) -> Any:
        key = self._key(name)
        return self._load().get(name, key.default)

    def set(self, name: str, value: Any) -> None:
        key = self._key(name)
        if not isinstance(value, key.kind) or (key.kind is int and isinstance(value, bool)):
            raise InvalidArguments(
                f"{name} must be a {key.kind.__name__}, not {value!r}", tool="config_set"
            )
        with self._lock:
            data = self._load()
            data[name] = value
            _write(self.path, json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")

    def shown(self, name: str) -> str:
        """The value as a model may see it: sensitive ones masked."""
        key = self._key(name)
        value = self.get(name)
        if key.sensitive:
            return MASK if value else "(not set)"
        return json.dumps(value, ensure_ascii=False)

    def file_path(self, file: str) -> Path:
        if file not in EXTENSION_FILES:
            raise InvalidArguments(
                f"file {file!r} is not an extension file; choose one of {list(EXTENSION_FILES)}",
                tool="config_file_get",
            )
        return self.files_dir / file

    async def write_file(self, file: str, content: str) -> str:
        path = self.file_path(file)
        try:
            json.loads(content)
        except json.JSONDecodeError as exc:
            raise InvalidArguments(
                f"content is not valid JSON ({exc}); {file} was left unchanged",
                tool="config_file_set",
            ) from None
        await asyncio.to_thread(_write, path, content)
        reload = self.reloaders.get(file)
        if reload is None:
            return f"{file} saved; it takes effect when the host restarts"
        outcome = reload(path)
        if inspect.isawaitable(outcome):
            await outcome
        return f"{file} saved and reloaded"

    def _key(self, name: str) -> ConfigKey:
        key = self.keys.get(name)
        if key is None:
            raise InvalidArguments(
                f"{name!r} is not a registered setting; known: {sorted(self.keys)}",
                tool="config_get",
            )
        return key


def _write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, content, new_mode=0o644)


_ADMIN_WRITE: dict[str, Any] = {
    "permissions": [Permission.WRITE],
    "destructive": True,
    "open_world": False,
    "admin_approval": True,  # always asks the admin approver, whatever the rules say
}


def config_tools(config: AgentConfig) -> list[Tool]:
    """`config_get`, `config_set`, `config_file_get`, `config_file_set` over `config`."""

    @tool(read_only=True, permissions=[Permission.READ], open_world=False)
    def config_get(key: str | None = None) -> str:
        """Read a setting, or list every registered setting when `key` is omitted.

        Args:
            key: The setting's name.
        """
        if key is not None:
            return f"{key} = {config.shown(key)}"
        lines = [
            f"{n} = {config.shown(n)}  # {config.keys[n].description}" for n in sorted(config.keys)
        ]
        return "\n".join(lines) or "(no settings are registered)"

    @tool(primary_arg="key", **_ADMIN_WRITE)
    def config_set(key: str, value: str) -> str:
        """Change a registered setting (needs administrator approval; takes effect after a
        restart).

        Args:
            key: The setting's name (see config_get).
            value: The new value; JSON for numbers, booleans and lists (e.g. 30, true).
        """
        kind = config._key(key).kind
        parsed: Any = value
        if kind is not str:
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                raise InvalidArguments(
                    f"value for {key} must be JSON of a {kind.__name__}, e.g. 30 or true",
                    tool="config_set",
                ) from None
        config.set(key, parsed)
        return f"{key} = {config.shown(key)} saved; it takes effect after a restart"

    @tool(read_only=True, permissions=[Permission.READ], open_world=False, primary_arg="file")
    def config_file_get(file: str) -> str:
        """Read an extension file (mcp.json, hooks.json, commands.json, prompts.json).

        Args:
            file: The file's name.
        """
        path = config.file_path(file)
        return path.read_text(encoding="utf-8") if path.is_file() else f"({file} does not exist)"

    @tool(primary_arg="file", **_ADMIN_WRITE)
    async def config_file_set(file: str, content: str) -> str:
        """Replace an extension file with new JSON text (needs administrator approval).

        Args:
            file: mcp.json, hooks.json, commands.json or prompts.json.
            content: The complete new file content; must be valid JSON.
        """
        return await config.write_file(file, content)

    return [config_get, config_set, config_file_get, config_file_set]
