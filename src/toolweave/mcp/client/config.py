"""The `mcpServers` config: every format MCP hosts write, validated field by field.

Claude Desktop's and Cursor's `{"mcpServers": {...}}`, VS Code's `{"servers": {...}, "inputs":
[...]}` (JSONC: comments and trailing commas), a Claude Code plugin's `.mcp.json` that maps
names to entries with no wrapper, and Antigravity's `serverUrl` for `url`. Variables in an
entry's strings are expanded (`config_values`). A server name may be anything people type
(`"Obsidian Rest MCP"`); its tool prefix is derived from it (`Obsidian_Rest_MCP__<tool>`) and
is the name the manager knows it by, while `ServerConfig.label` keeps the name as written.

A file is read once into `ServerConfig`s; every mistake names its entry and field
(`mcpServers.fs.args must be a list of strings`), and a missing file is an error rather than
zero servers, so a typo in a path never silently leaves an agent without its tools.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError
from toolweave.mcp.client import MCPClient
from toolweave.mcp.client.config_values import InputAsker, Variables, parse_inputs, parse_jsonc

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,48}$")
"""The shape of a tool prefix (and of a server name used as one as written)."""
MAX_SERVER_NAME_CHARS = 64
CONFIG_KEYS = ("mcpServers", "servers")  # Claude Desktop, VS Code
_HTTP_URL = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)
# Valid `type` values for a stdio entry (False) and an HTTP one (True); "sse" is the legacy
# HTTP+SSE transport.
_KINDS = {False: frozenset({"stdio"}), True: frozenset({"http", "streamable-http", "sse"})}
_ENTRY_KEYS = frozenset({"command", "url", "serverUrl", "type"})
_CONFIG_DIRS = frozenset({".vscode", ".cursor", ".claude", ".gemini", ".antigravitycli"})


def _seconds(value: Any) -> float | None:
    return float(value) if value is not None else None


def server_prefix(name: str) -> str:
    """The tool prefix of server `name`: the name itself when it has the prefix shape, else its
    ASCII letters, digits, '_' and '-' with other runs as '_' (`Obsidian Rest MCP` ->
    `Obsidian_Rest_MCP`), else `server_<hash>` for a name with none of them."""
    if SERVER_NAME.match(name):
        return name
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:48].rstrip("_")
    return slug or f"server_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


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
    #: Seconds the server has to start and complete the handshake (`discover_timeout`; None:
    #: the client's default, generous enough for a server that takes 30 s to start).
    discover_timeout: float | None = None
    #: Seconds the server has to list its skills (None: `MCPManager(skills_timeout=...)`).
    skills_timeout: float | None = None
    #: Pass the host's whole environment to this stdio server (default: a minimal safe subset).
    inherit_env: bool = False
    #: "sse" for the legacy HTTP+SSE transport, "http" for Streamable HTTP, None to decide by
    #: probing (a url ending in /sse that answers 405 to POST is legacy SSE).
    transport: str | None = None
    #: The server's name as written in the file, when it differs from `name` (its tool prefix).
    label: str = ""

    @classmethod
    def from_dict(cls, name: str, raw: Any, *, where: str = "mcpServers") -> ServerConfig:
        """Validate one entry (Claude Desktop's shape, or VS Code's with a `type` field)."""
        where = f"{where}.{name}"
        if (
            not name.strip()
            or len(name) > MAX_SERVER_NAME_CHARS
            or any(not c.isprintable() for c in name)
        ):
            raise ConfigError(
                f"{where}: a server name must be 1-{MAX_SERVER_NAME_CHARS} printable "
                "characters; rename it"
            )
        if not isinstance(raw, dict):
            raise ConfigError(f"{where} must be an object with `command` or `url`")
        command, url = raw.get("command"), raw.get("url", raw.get("serverUrl"))
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
        seconds = {key: raw.get(key) for key in ("timeout", "discover_timeout", "skills_timeout")}
        for key, value in seconds.items():
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 < value < math.inf  # NaN too (JSON and TOML both can spell it)
            ):
                raise ConfigError(
                    f"{where}.{key} must be a positive finite number of seconds, not {value!r}"
                )
        inherit_env = raw.get("inherit_env", False)
        if not isinstance(inherit_env, bool):
            raise ConfigError(f"{where}.inherit_env must be true or false, not {inherit_env!r}")
        prefix = server_prefix(name)
        return cls(
            name=prefix,
            label=name if prefix != name else "",
            transport=("sse" if kind == "sse" else "http") if url and kind else None,
            command=command or None,
            args=list(args),
            env=dict(env),
            cwd=cwd or None,
            url=url or None,
            headers=dict(headers),
            timeout=_seconds(seconds["timeout"]),
            discover_timeout=_seconds(seconds["discover_timeout"]),
            skills_timeout=_seconds(seconds["skills_timeout"]),
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
            if self.transport == "sse":
                out["type"] = "sse"
            if self.headers:
                out["headers"] = dict(self.headers)
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.discover_timeout is not None:
            out["discover_timeout"] = self.discover_timeout
        if self.skills_timeout is not None:
            out["skills_timeout"] = self.skills_timeout
        return out

    def make_client(self, timeout: float, **options: Any) -> MCPClient:
        timeout = self.timeout or timeout
        if self.discover_timeout is not None:
            options.setdefault("discover_timeout", self.discover_timeout)
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
        if self.transport == "sse":
            return MCPClient.sse(self.url, self.headers or None, timeout, name=self.name, **options)
        return MCPClient.http(
            self.url,
            self.headers or None,
            timeout,
            name=self.name,
            legacy_sse_fallback=self.transport is None,
            **options,
        )


def servers_key(raw: dict[str, Any]) -> str:
    """The key a config file keeps its servers under: VS Code's `servers` when that is the one
    present, else `mcpServers` (so edits write back in the file's own format)."""
    return "servers" if "servers" in raw and "mcpServers" not in raw else "mcpServers"


def load_config(
    source: str | Path | dict[str, Any],
    *,
    ask: InputAsker | None = None,
    workspace: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, ServerConfig]:
    """Parse a config from a dict or a JSON/JSONC file, validating every entry.

    Claude Desktop's `{"mcpServers": {...}}`, VS Code's `{"servers": {...}}` (whose entries
    carry `"type": "stdio" | "http" | "sse"`) and a plugin `.mcp.json` of bare entries are read.
    Variables are expanded with `workspace` as `${workspaceFolder}` (default: the folder
    holding the file, or the project above a `.vscode`-style folder; for a dict, the current
    directory); `ask` answers `${input:id}` (None: such an entry is refused with an error).
    The result is keyed by each server's tool prefix. A missing file is an error, never an
    empty set of servers.
    """
    where = "config"
    folder = Path.cwd()
    if isinstance(source, dict):
        raw: Any = source
    else:
        path = Path(source)
        where = str(path)
        folder = path.resolve().parent
        folder = folder.parent if folder.name in _CONFIG_DIRS else folder
        try:
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise ConfigError(
                f"MCP config file {path} does not exist; check the path, or create it with "
                '{"mcpServers": {"name": {"command": "...", "args": [...]}}}'
            ) from None
        raw = parse_jsonc(text, where)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a JSON object with `mcpServers` or `servers`")
    keys = [key for key in CONFIG_KEYS if key in raw]
    if len(keys) > 1:
        raise ConfigError(f"{where}: has both `mcpServers` and `servers`; keep one of them")
    if keys:
        servers, label = raw[keys[0]], keys[0]
    elif raw and all(isinstance(v, dict) and _ENTRY_KEYS & set(v) for v in raw.values()):
        servers, label = raw, where  # a plugin's `.mcp.json`: entries with no wrapper
    elif raw and not isinstance(source, dict):
        raise ConfigError(
            f"{where}: no `mcpServers` (Claude Desktop) or `servers` (VS Code) object found; "
            f"top-level keys are {sorted(raw)}"
        )
    else:
        return {}
    if not isinstance(servers, dict):
        raise ConfigError(f"{where}: `{label}` must be an object mapping server names to entries")
    variables = Variables(
        Path(workspace) if workspace is not None else folder,
        parse_inputs(raw.get("inputs") if keys else None, where),
        ask,
        environ if environ is not None else dict(os.environ),
    )
    configs: dict[str, ServerConfig] = {}
    for name, entry in servers.items():
        spot = f"{label}.{name}"
        config = ServerConfig.from_dict(name, variables.expand_entry(entry, spot), where=label)
        if config.name in configs:
            first = configs[config.name].label or config.name
            raise ConfigError(
                f"{spot}: servers {first!r} and {name!r} both get the tool prefix "
                f"{config.name!r}; rename one of them"
            )
        configs[config.name] = config
    return configs
