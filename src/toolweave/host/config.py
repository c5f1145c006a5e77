"""`toolweave.toml`: what `toolweave serve` exposes and how, with defaults that work offline.

Every setting has a default, so no file at all is a valid configuration: the demo tools over
stdio, nothing downstream, no network. Errors name the exact key and the fix.

```toml
[serve]
name = "toolweave"             # serverInfo.name
transport = "stdio"            # "stdio" or "http"
host = "127.0.0.1"             # HTTP bind address; beyond loopback a token is required
port = 8765
path = "/mcp"
token = ""                     # bearer token; or env TOOLWEAVE_SERVE_TOKEN
allowed_origins = []           # browser origins besides loopback (DNS-rebinding guard)
providers = ["demo", "builtins"]  # capability providers to expose, in order
tool_timeout = 60.0            # seconds per call
connect_deadline = 5.0         # seconds the first tools/list waits for downstream servers
data_dir = "~/.toolweave"      # embedded SQLite and caches of stateful providers
max_body_bytes = 4194304       # HTTP: larger request bodies get 413
max_sessions = 1000            # HTTP: live sessions; the least recently seen is closed first
session_idle_timeout = 600.0   # HTTP: seconds before an unused session is closed
query_log = true               # a row per served tool call in data_dir (`toolweave log`)
daily_calls_per_client = 0     # tool calls one client may make per UTC day; 0 = no limit
daily_calls = 0                # tool calls all clients together may make per UTC day
commands = ""                  # slash commands served as MCP prompts: a JSON/YAML file or a
                               # .claude/commands directory of *.md files
store_dsn = ""                 # Postgres DSN for the query log and quotas, shared by hosts

hooks = ""                     # Claude Code hooks file (e.g. "hooks.json"), relative to this file

[serve.rules]                  # permission rules in Claude Code syntax (see docs/governance.md)
allow = []                     # e.g. ["bash(git *)", "files__read_*"]
deny = []                      # e.g. ["bash(rm *)"]; always wins
ask = []                       # asked through MCP elicitation when the client supports it
default = "ask"                # for shell, delete and destructive tools no rule matched

[serve.policy]                 # PermissionPolicy applied before any tool runs or forwards
allowed = []                   # e.g. ["read", "mcp:github"]; non-empty = whitelist
denied = []                    # e.g. ["shell", "mcp:filesystem"]; always wins
allow_unspecified = true

[skills]                       # provider "skills": Agent Skills as tools, prompts, resources
roots = []                     # skill roots; relative to this file; [] = the usual places
allow = []                     # whitelist of skill names; [] = every skill found
self_management = false        # also publish skill_list / skill_install / skill_remove
scripts = false                # publish skill_run (bundled scripts; still asked/ruled as shell)
script_timeout = 60.0          # seconds a bundled script may run
watch_interval = 2.0           # seconds between checks of the roots for edits; 0 = off

[builtins]                     # the built-in tools (docs/builtins.md; host/builtins_provider.py)
root = "~/work"                # filesystem jail; default [serve].data_dir/workspace

[kb]                           # provider "kb": the knowledge base (docs/knowledge-base.md)
paths = []                     # files and folders ingested at start and watched; relative to
                               # this file. Stores live in [serve].data_dir (kb.db)

[notes]                        # provider "notes": Markdown notes ([serve].data_dir/notes)

[mcpServers.files]             # downstream servers proxied as `files__<tool>`
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
```
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError
from toolweave.mcp.shared.constants import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    LOOPBACK_HOSTS,
)

DEFAULT_CONFIG_FILE = "toolweave.toml"
TOKEN_ENV = "TOOLWEAVE_SERVE_TOKEN"

#: Positive numeric bounds on what HTTP clients may push (see `MCPServer.asgi_app`).
_LIMITS = ("max_body_bytes", "max_sessions", "session_idle_timeout")
_SERVE_KEYS = {
    "name",
    "transport",
    "host",
    "port",
    "path",
    "token",
    "allowed_origins",
    "providers",
    "tool_timeout",
    "connect_deadline",
    "data_dir",
    "policy",
    "rules",
    "hooks",
    *_LIMITS,
    "query_log",
    "daily_calls_per_client",
    "daily_calls",
    "commands",
    "store_dsn",
}
_POLICY_KEYS = {"allowed", "denied", "allow_unspecified"}
_SKILLS_KEYS = {
    "roots",
    "allow",
    "self_management",
    "scripts",
    "script_timeout",
    "watch_interval",
}


@dataclass(slots=True)
class PolicyConfig:
    allowed: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    allow_unspecified: bool = True


@dataclass(slots=True)
class SkillsConfig:
    """`[skills]`: where the `skills` provider finds skills and what it publishes."""

    roots: list[Path] | None = None
    allow: list[str] | None = None
    self_management: bool = False
    scripts: bool = False
    script_timeout: float = 60.0
    watch_interval: float = 2.0


@dataclass(slots=True)
class HostConfig:
    """The parsed `toolweave.toml` (see the module docstring for every key and default)."""

    name: str = "toolweave"
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8765
    path: str = "/mcp"
    token: str | None = None
    allowed_origins: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=lambda: ["demo", "builtins"])
    tool_timeout: float = 60.0
    connect_deadline: float = 5.0
    data_dir: Path = field(default_factory=lambda: Path("~/.toolweave").expanduser())
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    rules: dict[str, Any] = field(default_factory=dict)
    hooks: Path | None = None
    query_log: bool = True
    daily_calls_per_client: int = 0
    daily_calls: int = 0
    commands: Path | None = None
    store_dsn: str = ""
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    skills: SkillsConfig = field(default_factory=SkillsConfig)
    builtins: dict[str, Any] = field(default_factory=dict)
    """The raw `[builtins]` table, validated by the builtins provider."""
    kb: dict[str, Any] = field(default_factory=dict)
    """The raw `[kb]` table, validated by the kb provider (host/kb.py)."""
    notes: dict[str, Any] = field(default_factory=dict)
    """The raw `[notes]` table, validated by the notes provider (host/kb.py)."""
    source: Path | None = None

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK_HOSTS

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"http://{host}:{self.port}{self.path}"

    def check(self) -> None:
        """Cross-field rules: a token is mandatory once the server is reachable off-host."""
        if self.transport == "http" and not self.loopback and not self.token:
            raise ConfigError(
                f"[serve].host = {self.host!r} exposes the server beyond this machine: set "
                f"[serve].token (or pass --token, or set the {TOKEN_ENV} environment variable) so "
                "clients must send a bearer token, or bind to 127.0.0.1"
            )


def _expect(where: str, value: Any, kind: type | tuple[type, ...], hint: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{where} must be {hint}, not {value!r}")
    return value


def _strings(where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, not {value!r}")
    return list(value)


def parse_config(raw: dict[str, Any], *, source: Path | None = None) -> HostConfig:
    """Validate a decoded TOML document into a `HostConfig`."""
    where = str(source or DEFAULT_CONFIG_FILE)
    unknown_top = set(raw) - {"serve", "mcpServers", "skills", "builtins", "kb", "notes"}
    if unknown_top:
        raise ConfigError(
            f"{where}: unknown top-level table(s) {sorted(unknown_top)}; toolweave serve reads "
            "[serve], [serve.policy], [skills], [builtins], [kb], [notes] and [mcpServers.<name>]"
        )
    serve = _expect("[serve]", raw.get("serve", {}), dict, "a table")
    unknown = set(serve) - _SERVE_KEYS
    if unknown:
        raise ConfigError(
            f"[serve]: unknown key(s) {sorted(unknown)}; known: {sorted(_SERVE_KEYS)}"
        )
    config = HostConfig(source=source)
    if "name" in serve:
        config.name = _expect("[serve].name", serve["name"], str, "a string")
    if "transport" in serve:
        config.transport = serve["transport"]
        if config.transport not in ("stdio", "http"):
            raise ConfigError(
                f"[serve].transport must be 'stdio' or 'http', not {config.transport!r}"
            )
    if "host" in serve:
        config.host = _expect("[serve].host", serve["host"], str, "an address like 127.0.0.1")
    if "port" in serve:
        config.port = _expect("[serve].port", serve["port"], int, "an integer 0-65535")
        if not 0 <= config.port < 65536:
            raise ConfigError(
                f"[serve].port must be 0-65535 (0 picks a free port), not {config.port}"
            )
    if "path" in serve:
        config.path = _expect("[serve].path", serve["path"], str, "a path like /mcp")
        if not config.path.startswith("/"):
            raise ConfigError(f"[serve].path must start with '/', e.g. '/mcp', not {config.path!r}")
    token = _expect("[serve].token", serve.get("token", ""), str, "a string (the bearer token)")
    config.token = token or os.environ.get(TOKEN_ENV) or None
    if "allowed_origins" in serve:
        config.allowed_origins = _strings("[serve].allowed_origins", serve["allowed_origins"])
    if "providers" in serve:
        config.providers = _strings("[serve].providers", serve["providers"])
    if "tool_timeout" in serve:
        timeout = _expect("[serve].tool_timeout", serve["tool_timeout"], (int, float), "seconds")
        if timeout <= 0:
            raise ConfigError("[serve].tool_timeout must be a positive number of seconds")
        config.tool_timeout = float(timeout)
    if "connect_deadline" in serve:
        deadline = _expect(
            "[serve].connect_deadline", serve["connect_deadline"], (int, float), "seconds"
        )
        if deadline <= 0:
            raise ConfigError("[serve].connect_deadline must be a positive number of seconds")
        config.connect_deadline = float(deadline)
    if "data_dir" in serve:
        data_dir = _expect("[serve].data_dir", serve["data_dir"], str, "a directory path")
        config.data_dir = Path(data_dir).expanduser()
    for key in _LIMITS:
        if key in serve:
            default = getattr(config, key)
            kind = int if isinstance(default, int) else (int, float)
            value = _expect(f"[serve].{key}", serve[key], kind, f"a positive number like {default}")
            if value <= 0:
                raise ConfigError(f"[serve].{key} must be positive, not {value}")
            setattr(config, key, type(default)(value))
    _orchestration(config, serve)
    policy = _expect("[serve.policy]", serve.get("policy", {}), dict, "a table")
    unknown = set(policy) - _POLICY_KEYS
    if unknown:
        raise ConfigError(
            f"[serve.policy]: unknown key(s) {sorted(unknown)}; known: {sorted(_POLICY_KEYS)}"
        )
    config.policy = PolicyConfig(
        allowed=_strings("[serve.policy].allowed", policy.get("allowed", [])),
        denied=_strings("[serve.policy].denied", policy.get("denied", [])),
        allow_unspecified=_expect(
            "[serve.policy].allow_unspecified",
            policy.get("allow_unspecified", True),
            bool,
            "true or false",
        ),
    )
    rules = _expect("[serve.rules]", serve.get("rules", {}), dict, "a table")
    if rules:
        from toolweave.agent.rules import Rules

        base = str(source.parent.resolve()) if source is not None else os.getcwd()
        try:
            Rules.from_mapping(rules, source=f"{where} [serve.rules]", root=base)
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        config.rules = rules
    if serve.get("hooks"):
        hooks = Path(_expect("[serve].hooks", serve["hooks"], str, "a path to a hooks.json"))
        hooks = hooks.expanduser()
        if not hooks.is_absolute() and source is not None:
            hooks = source.parent / hooks
        config.hooks = hooks
    config.mcp_servers = _expect("[mcpServers]", raw.get("mcpServers", {}), dict, "a table")
    config.skills = _skills(raw.get("skills", {}), source)
    config.builtins = _expect("[builtins]", raw.get("builtins", {}), dict, "a table")
    config.kb = _expect("[kb]", raw.get("kb", {}), dict, "a table")
    config.notes = _expect("[notes]", raw.get("notes", {}), dict, "a table")
    return config


def _skills(raw: Any, source: Path | None) -> SkillsConfig:
    table = _expect("[skills]", raw, dict, "a table")
    unknown = set(table) - _SKILLS_KEYS
    if unknown:
        raise ConfigError(
            f"[skills]: unknown key(s) {sorted(unknown)}; known: {sorted(_SKILLS_KEYS)}"
        )
    base = source.parent if source is not None else Path.cwd()
    roots = _strings("[skills].roots", table.get("roots", []))
    allow = _strings("[skills].allow", table.get("allow", []))
    flags = {
        key: _expect(f"[skills].{key}", table.get(key, False), bool, "true or false")
        for key in ("self_management", "scripts")
    }
    seconds = {}
    for key, default in (("script_timeout", 60.0), ("watch_interval", 2.0)):
        value = _expect(f"[skills].{key}", table.get(key, default), (int, float), "seconds")
        if value < 0 or (key == "script_timeout" and value == 0):
            raise ConfigError(f"[skills].{key} must be a positive number of seconds, not {value}")
        seconds[key] = float(value)
    return SkillsConfig(
        roots=[base / Path(r).expanduser() for r in roots] or None,
        allow=allow or None,
        self_management=flags["self_management"],
        scripts=flags["scripts"],
        script_timeout=seconds["script_timeout"],
        watch_interval=seconds["watch_interval"],
    )


def _orchestration(config: HostConfig, serve: dict[str, Any]) -> None:
    """The query log, call quotas, served commands and their shared store."""
    if "query_log" in serve:
        config.query_log = _expect("[serve].query_log", serve["query_log"], bool, "true or false")
    for key in ("daily_calls_per_client", "daily_calls"):
        if key in serve:
            value = _expect(f"[serve].{key}", serve[key], int, "a whole number (0 = no limit)")
            if value < 0:
                raise ConfigError(f"[serve].{key} must be 0 (no limit) or more, not {value}")
            setattr(config, key, value)
    if "commands" in serve:
        commands = _expect("[serve].commands", serve["commands"], str, "a file or directory")
        config.commands = Path(commands).expanduser() if commands else None
    if "store_dsn" in serve:
        config.store_dsn = _expect(
            "[serve].store_dsn", serve["store_dsn"], str, "a Postgres DSN such as postgresql://..."
        )


def load_host_config(path: str | Path | None = None) -> HostConfig:
    """Read `path`, or `./toolweave.toml` when it exists, or return the defaults."""
    if path is None:
        candidate = Path(DEFAULT_CONFIG_FILE)
        if not candidate.is_file():
            return parse_config({})
        path = candidate
    file = Path(path)
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"config file {file} does not exist; create it or drop --config"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file} is not valid TOML: {exc}") from None
    return parse_config(raw, source=file)
