"""The `mcpServers` config: Claude Desktop's format and VS Code's, validated field by field.

A file is read once into `ServerConfig`s; every mistake names its entry and field
(`mcpServers.fs.args must be a list of strings`), and a missing file is an error rather than
zero servers, so a typo in a path never silently leaves an agent without its tools.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError
from toolweave.mcp.client import MCPClient

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,48}$")
CONFIG_KEYS = ("mcpServers", "servers")  # Claude Desktop, VS Code
_HTTP_URL = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)
# Valid `type` values (VS Code's format) for a stdio entry (False) and an HTTP one (True).
_KINDS = {False: frozenset({"stdio"}), True: frozenset({"http", "streamable-http"})}


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One entry of `mcpServers`: a stdio command or an HTTP url."""

    name: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None
    #: Pass the host's whole environment to this stdio server (default: a minimal safe subset).
    inherit_env: bool = False

    @classmethod
    def from_dict(cls, name: str, raw: Any, *, where: str = "mcpServers") -> ServerConfig:
        """Validate one entry (Claude Desktop's shape, or VS Code's with a `type` field)."""
        where = f"{where}.{name}"
        if not SERVER_NAME.match(name):
            raise ConfigError(
                f"{where}: server names must be 1-48 letters, digits, '_' or '-' (they prefix "
                f"tool names models must accept); rename it"
            )
        if not isinstance(raw, dict):
            raise ConfigError(f"{where} must be an object with `command` or `url`")
        command, url = raw.get("command"), raw.get("url")
        if command is not None and not isinstance(command, str):
            raise ConfigError(
                f"{where}.command must be a string (the program), not {command!r}; put its "
                "arguments in `args`"
            )
        if url is not None and (not isinstance(url, str) or not _HTTP_URL.match(url)):
            raise ConfigError(f"{where}.url must be an http:// or https:// URL, not {url!r}")
        if bool(command) == bool(url):
            raise ConfigError(f"{where}: give exactly one of `command` (stdio) or `url` (HTTP)")
        kind = raw.get("type")
        if kind is not None and kind not in _KINDS[bool(url)]:
            expected = " or ".join(repr(k) for k in sorted(_KINDS[bool(url)]))
            raise ConfigError(
                f"{where}.type is {kind!r} but the entry has "
                f"{'`url`' if url else '`command`'}: use {expected}"
            )
        args, env, headers = raw.get("args", []), raw.get("env", {}), raw.get("headers", {})
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}.args must be a list of strings, not {args!r}")
        for key, value in (("env", env), ("headers", headers)):
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise ConfigError(f"{where}.{key} must be an object of string values")
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError(f"{where}.cwd must be a directory path string, not {cwd!r}")
        timeout = raw.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise ConfigError(f"{where}.timeout must be a positive number of seconds")
        inherit_env = raw.get("inherit_env", False)
        if not isinstance(inherit_env, bool):
            raise ConfigError(f"{where}.inherit_env must be true or false, not {inherit_env!r}")
        return cls(
            name=name,
            command=command or None,
            args=list(args),
            env=dict(env),
            cwd=cwd or None,
            url=url or None,
            headers=dict(headers),
            timeout=float(timeout) if timeout is not None else None,
            inherit_env=inherit_env,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.command is not None:
            out["command"] = self.command
            if self.args:
                out["args"] = list(self.args)
            if self.env:
                out["env"] = dict(self.env)
            if self.cwd:
                out["cwd"] = self.cwd
            if self.inherit_env:
                out["inherit_env"] = True
        else:
            out["url"] = self.url
            if self.headers:
                out["headers"] = dict(self.headers)
        if self.timeout is not None:
            out["timeout"] = self.timeout
        return out

    def make_client(self, timeout: float, **options: Any) -> MCPClient:
        timeout = self.timeout or timeout
        if self.command is not None:
            return MCPClient.stdio(
                self.command,
                self.args,
                self.env or None,
                self.cwd,
                timeout,
                name=self.name,
                inherit_env=self.inherit_env,
                **options,
            )
        assert self.url is not None
        return MCPClient.http(self.url, self.headers or None, timeout, name=self.name, **options)


def servers_key(raw: dict[str, Any]) -> str:
    """The key a config file keeps its servers under: VS Code's `servers` when that is the one
    present, else `mcpServers` (so edits write back in the file's own format)."""
    return "servers" if "servers" in raw and "mcpServers" not in raw else "mcpServers"


def load_config(source: str | Path | dict[str, Any]) -> dict[str, ServerConfig]:
    """Parse a config from a dict or a JSON file, validating every entry.

    Both formats in use are read: Claude Desktop's `{"mcpServers": {...}}` and VS Code's
    `{"servers": {...}}` (`.vscode/mcp.json`, whose entries carry `"type": "stdio" | "http"`).
    A missing file is an error, never an empty set of servers.
    """
    where = "config"
    if isinstance(source, dict):
        raw: Any = source
    else:
        path = Path(source)
        where = str(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(
                f"MCP config file {path} does not exist; check the path, or create it with "
                '{"mcpServers": {"name": {"command": "...", "args": [...]}}}'
            ) from None
        except ValueError as exc:
            raise ConfigError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a JSON object with `mcpServers` or `servers`")
    keys = [key for key in CONFIG_KEYS if key in raw]
    if len(keys) > 1:
        raise ConfigError(f"{where}: has both `mcpServers` and `servers`; keep one of them")
    if not keys:
        if raw and not isinstance(source, dict):
            raise ConfigError(
                f"{where}: no `mcpServers` (Claude Desktop) or `servers` (VS Code) object found; "
                f"top-level keys are {sorted(raw)}"
            )
        return {}
    servers = raw[keys[0]]
    if not isinstance(servers, dict):
        raise ConfigError(f"{where}: `{keys[0]}` must be an object mapping server names to entries")
    return {
        name: ServerConfig.from_dict(name, entry, where=keys[0]) for name, entry in servers.items()
    }
