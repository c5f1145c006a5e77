"""`toolweave.toml`: what `toolweave serve` exposes and how, with defaults that work offline.

Every setting has a default, so no file at all is a valid configuration: the real capabilities
(memory, the knowledge base, notes, skills and the safe built-ins, all under `data_dir`) over
stdio, nothing downstream, no network; the demo tools are the provider `demo` (`--demo`).
Every table is a pydantic model (`[serve]` here, the others registered in `sections.SECTIONS`
by the provider that reads them): unknown keys and wrong types are errors that name the key,
the file line and the fix.

Environment variables override the file: `TOOLWEAVE_<TABLE>__<KEY>` with `__` between nested
names, the value read as a TOML value (`TOOLWEAVE_SERVE__PORT=9000`,
`TOOLWEAVE_SERVE__POLICY__DENIED='["shell"]'`; anything that is not TOML is a string).

```toml
[serve]
name = "toolweave"             # serverInfo.name
transport = "stdio"            # "stdio" or "http"
host = "127.0.0.1"             # HTTP bind address; beyond loopback a token is required
port = 8765
path = "/mcp"
token = ""                     # bearer token; or env TOOLWEAVE_SERVE_TOKEN
                               # [serve.tokens] alice = "..." : a token per client, each its
                               # own principal (own quota and memory)
allowed_origins = []           # browser origins besides loopback (DNS-rebinding guard)
providers = ["builtins", "memory", "kb", "notes", "skills"]  # capability providers, in order;
                               # add "demo" (or pass --demo) for the offline demo tools
tool_timeout = 60.0            # seconds per call
task_after = 0.0               # seconds after which a call still running becomes an MCP task
                               # (for clients that support tasks); 0 = never
task_timeout = 1800.0          # seconds a call that became a task may run (not tool_timeout)
connect_deadline = 5.0         # seconds the first tools/list waits for downstream servers
max_held_calls = 100           # per downstream server: calls held open while their 2026
                               # caller answers
max_held_calls_per_client = 10 # of them, how many one client may have held at once
held_call_ttl = 600.0          # seconds one is held before it is cancelled
tool_search = false            # past the threshold, list tool_search, tool_call,
                               # tool_search_pinned and the tools each client's searches found
tool_search_threshold = 30     # search mode only when more tools than this are published
tool_search_pinned = []        # tools listed as usual in search mode, e.g. ["read_file"]
data_dir = "~/.toolweave"      # embedded SQLite and caches of stateful providers
max_body_bytes = 4194304       # larger HTTP bodies get 413, larger stdio lines an error
max_sessions = 1000            # HTTP: live sessions; past it a new session gets 429
session_idle_timeout = 600.0   # HTTP: seconds before an unused session is closed
idempotency_ttl = 86400.0      # seconds a 2026 call's idempotency key and answer are kept
body_read_timeout = 30.0       # HTTP: seconds a client has to send a request body (408 past)
query_log = true               # a row per served tool call in data_dir (`toolweave log`)
daily_calls_per_client = 0     # tool calls one client may make per UTC day; 0 = no limit
daily_calls = 0                # tool calls all clients together may make per UTC day
commands = ""                  # slash commands served as MCP prompts: a JSON/YAML file or a
                               # .claude/commands directory of *.md files
store_dsn = ""                 # Postgres DSN shared by replicas: query log, quotas, MCP tasks,
                               # sessions, approvals, the HTTP event store (docs/serve.md)
state_key = ""                 # the secret sealing input-required requestStates (env
                               # TOOLWEAVE_STATE_KEY); the same on every replica; "" = random
instance = ""                  # this replica's name in the fleet (unique, stable across its
                               # restarts); "" = "<host name>:<port>"
drain_notice = 2.0             # on SIGTERM: seconds GET /ready answers 503 before the replica
                               # stops accepting (>= the balancer's fall x inter)
drain_timeout = 30.0           # then: seconds running calls have to finish before they are cut
console = true                 # the web console at /console over HTTP (its own token)
console_approvals = false      # calls no client can be asked about wait in the console
approvals_per_client = 10      # of them, how many one client may have waiting at once
console_token = ""             # the console's own credential (env TOOLWEAVE_CONSOLE_TOKEN);
                               # empty: a fresh one is made at start and printed once

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
install_domains = []           # skill_install may download from these (github.com, ...)
scripts = false                # publish skill_run (bundled scripts; still asked/ruled as shell)
script_timeout = 60.0          # seconds a bundled script may run
script_sandbox = "on"          # bubblewrap under scripts; "off" runs them bare (each asks)
script_network = false         # true: scripts may use the network
script_writable = []           # directories scripts may write (besides a private /tmp)
script_max_output_bytes = 1048576  # script output read into memory at most
script_memory_bytes = 1073741824   # per script process; also script_max_processes (256),
                                   # script_tmp_bytes (256 MiB), script_file_bytes (1 GiB)
watch_interval = 2.0           # seconds between checks of the roots for edits; 0 = off
mcp_extension = true           # also publish them by the MCP skills extension (SEP-2640)

[builtins]                     # the built-in tools (docs/builtins.md; host/providers/builtins.py)
root = "~/work"                # filesystem jail; default toolweave-workspace beside data_dir
sandbox = "on"                 # bubblewrap under the shell; "off" runs it bare (every call asks)
network = false                # true: sandboxed shell commands may use the network
sandbox_memory_bytes = 1073741824  # per process; also sandbox_max_processes (256),
                                   # sandbox_tmp_bytes (256 MiB), sandbox_file_bytes (1 GiB)

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
import socket
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from toolweave.errors import ConfigError
from toolweave.governance.rules import Rules
from toolweave.host._config_env import MCP_SERVERS, merge_env
from toolweave.host._toml_lines import key_lines
from toolweave.host.sections import (
    SECTIONS,
    ConfigSource,
    Section,
    SectionT,
    section_model,
    validate_section,
)
from toolweave.mcp.client.upstream import (
    DEFAULT_HELD_CALL_TTL,
    DEFAULT_MAX_HELD_CALLS,
    DEFAULT_MAX_HELD_CALLS_PER_CLIENT,
)
from toolweave.mcp.shared.constants import (
    DEFAULT_BODY_READ_TIMEOUT,
    DEFAULT_IDEMPOTENCY_TTL,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    LOOPBACK_HOSTS,
)
from toolweave.tools.search_mode import DEFAULT_TOOL_SEARCH_THRESHOLD

DEFAULT_CONFIG_FILE = "toolweave.toml"
DEFAULT_DRAIN_NOTICE = 2.0
"""Seconds a SIGTERMed replica keeps serving with GET /ready at 503, so the balancer's health
checks take it out before it stops accepting (docs/serve.md, several replicas)."""
DEFAULT_DRAIN_TIMEOUT = 30.0
"""Seconds a draining replica gives its running calls to finish before it cuts them."""
DEFAULT_MAX_PENDING_PER_CLIENT = 10
"""Requests one client (`ApprovalRequest.requester`, else its session) may have waiting at once
in the console (`ConsoleApprovals`); its next ones are denied immediately, and nobody else's
are: one client's flood never fills the queue for the others (`[serve].approvals_per_client`)."""
USER_CONFIG_FILE = "~/.toolweave/toolweave.toml"
"""The user's own config: what `toolweave serve` runs when no `--config` is given and the
current folder's `toolweave.toml` is absent or not trusted."""
TOKEN_ENV = "TOOLWEAVE_SERVE_TOKEN"
CONSOLE_TOKEN_ENV = "TOOLWEAVE_CONSOLE_TOKEN"
STATE_KEY_ENV = "TOOLWEAVE_STATE_KEY"
MIN_STATE_KEY_BYTES = 16
"""The shortest `[serve].state_key` (an HMAC-SHA256 key; 32 random bytes or more is better)."""
DEFAULT_PROVIDERS = ("builtins", "memory", "kb", "notes", "skills")
DEFAULT_TASK_TIMEOUT = 1800.0
"""`[serve].task_timeout`: half an hour for a served call that runs as an MCP task."""
"""What `toolweave serve` offers without `[serve].providers`: each loads on first use."""
DEMO_PROVIDER = "demo"


class PolicySection(Section):
    """`[serve.policy]`: the PermissionPolicy applied before any tool runs or forwards."""

    allowed: list[str] = Field(default_factory=list)
    denied: list[str] = Field(default_factory=list)
    allow_unspecified: bool = True


class ServeSection(Section):
    """`[serve]`: every key as written in the file (see the module docstring), validated once
    and frozen. Values the host reads in another shape are normalised here: an empty token,
    `console_token`, `state_key`, `commands` or `hooks` is None, and paths are expanded."""

    model_config = ConfigDict(frozen=True)

    name: str = "toolweave"
    transport: Literal["stdio", "http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)  # 0 picks a free port
    path: str = "/mcp"
    token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    providers: tuple[str, ...] = DEFAULT_PROVIDERS
    tool_timeout: float = Field(60.0, gt=0)
    task_after: float = Field(0.0, ge=0)
    task_timeout: float = Field(DEFAULT_TASK_TIMEOUT, gt=0)
    """Seconds a served call may run once it can become a task (`task_after` set and the client
    declared the tasks extension): `tool_timeout` bounds the others."""
    connect_deadline: float = Field(5.0, gt=0)
    max_held_calls: int = Field(DEFAULT_MAX_HELD_CALLS, ge=0)
    max_held_calls_per_client: int = Field(DEFAULT_MAX_HELD_CALLS_PER_CLIENT, ge=0)
    held_call_ttl: float = Field(DEFAULT_HELD_CALL_TTL, gt=0, allow_inf_nan=False)
    tool_search: bool = False
    tool_search_threshold: int = Field(DEFAULT_TOOL_SEARCH_THRESHOLD, ge=0)
    tool_search_pinned: tuple[str, ...] = ()
    data_dir: Path = Field(Path("~/.toolweave"), strict=False)
    max_body_bytes: int = Field(DEFAULT_MAX_BODY_BYTES, gt=0)
    max_sessions: int = Field(DEFAULT_MAX_SESSIONS, gt=0)
    session_idle_timeout: float = Field(DEFAULT_SESSION_IDLE_TIMEOUT, gt=0)
    idempotency_ttl: float = Field(DEFAULT_IDEMPOTENCY_TTL, gt=0)
    body_read_timeout: float = Field(DEFAULT_BODY_READ_TIMEOUT, gt=0)
    tokens: dict[str, str] = Field(default_factory=dict)
    """`[serve.tokens]`: client name -> its own bearer token (its principal `client:<name>`)."""
    approvals_per_client: int = Field(DEFAULT_MAX_PENDING_PER_CLIENT, gt=0)
    query_log: bool = True
    daily_calls_per_client: int = Field(0, ge=0)
    daily_calls: int = Field(0, ge=0)
    commands: Path | None = Field(None, strict=False)
    store_dsn: str = ""
    state_key: str | None = None
    instance: str = ""
    drain_notice: float = Field(DEFAULT_DRAIN_NOTICE, ge=0)
    drain_timeout: float = Field(DEFAULT_DRAIN_TIMEOUT, gt=0)
    console: bool = True
    console_approvals: bool = False
    console_token: str | None = None
    hooks: Path | None = Field(None, strict=False)
    policy: PolicySection = Field(default_factory=PolicySection)
    rules: dict[str, Any] = Field(default_factory=dict)
    """Checked by `toolweave.governance.rules.Rules.from_mapping` (docs/governance.md)."""

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with '/', e.g. '/mcp'")
        return value

    @field_validator("allowed_origins", "providers", "tool_search_pinned", mode="before")
    @classmethod
    def _list(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    @field_validator("token", "state_key", "console_token", "commands", "hooks", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("data_dir", "commands", "hooks")
    @classmethod
    def _expanded(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None


class HostConfig(ServeSection):
    """The parsed `toolweave.toml`: `[serve]` (inherited, every key declared once, in
    `ServeSection`) plus what the rest of the file holds. Frozen: a changed setting is a copy
    (`model_copy(update=...)`), and the port a server actually bound is `ToolHost.port`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    providers_chosen: bool = False
    """True when `[serve].providers` was written: a provider whose extra is missing is then an
    error, where a default one is left out with a note."""
    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    sections: dict[str, Section] = Field(default_factory=dict)
    """The validated tables registered in `SECTIONS`, by name (absent tables are not here)."""
    source: Path | None = None
    permission_rules: Rules | None = None
    """`[serve.rules]`, parsed once by `parse_config` (None when built without it)."""

    @property
    def root(self) -> str:
        """The folder rules and hooks resolve paths against: the config file's, else the
        current directory."""
        return str(self.source.parent.resolve()) if self.source is not None else os.getcwd()

    @property
    def workspace(self) -> Path:
        """`${workspaceFolder}` in `[mcpServers]`: the folder holding this toolweave.toml (the
        config's own folder, as VS Code's is the folder its `.vscode/mcp.json` belongs to);
        the current directory for a config with no file."""
        return self.source.resolve().parent if self.source is not None else Path.cwd()

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK_HOSTS

    @property
    def url(self) -> str:
        """The configured address (`ToolHost.url` is the bound one, when port 0 was asked)."""
        return self.url_at(self.port)

    def url_at(self, port: int) -> str:
        """The MCP endpoint on `port` (the one a server actually bound)."""
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"http://{host}:{port}{self.path}"

    def section(self, name: str, model: type[SectionT] | None = None) -> SectionT:
        """The `[name]` table as its registered model (its defaults when the file has none)."""
        found = self.sections.get(name)
        if found is None:
            found = section_model(name)()
        if model is not None and not isinstance(found, model):
            raise TypeError(f"[{name}] is a {type(found).__name__}, not a {model.__name__}")
        return found  # type: ignore[return-value]

    def rule_set(self) -> Rules:
        """`[serve.rules]` as governance rules: the parsed ones, or parsed now for a config
        built in code."""
        if self.permission_rules is not None:
            return self.permission_rules
        where = f"{self.source or DEFAULT_CONFIG_FILE} [serve.rules]"
        return Rules.from_mapping(self.rules, source=where, root=self.root)

    def check(self) -> None:
        """Cross-field rules: a token is mandatory once the server is reachable off-host."""
        empty = sorted(name for name, token in self.tokens.items() if not token.strip())
        if empty:
            raise ConfigError(f"[serve.tokens]: {', '.join(empty)} has an empty token; give "
                              "each client a long random one (or remove it)")  # fmt: skip
        if len(set(self.tokens.values())) < len(self.tokens) or self.token in self.tokens.values():
            raise ConfigError("[serve.tokens]: two clients share a token; each client needs its "
                              "own (and none may equal [serve].token)")  # fmt: skip
        if self.console_token is not None and self.console_token in self.tokens.values():
            raise ConfigError("[serve.tokens]: a client's token equals [serve].console_token; "
                              "the console needs its own credential")  # fmt: skip
        if self.transport == "http" and not self.loopback and not (self.token or self.tokens):
            raise ConfigError(
                f"[serve].host = {self.host!r} exposes the server beyond this machine: set "
                f"[serve].token (or pass --token, or set the {TOKEN_ENV} environment variable) so "
                "clients must send a bearer token, or bind to 127.0.0.1"
            )
        if self.state_key is not None and len(self.state_key.encode()) < MIN_STATE_KEY_BYTES:
            raise ConfigError(
                f"[serve].state_key is {len(self.state_key.encode())} bytes; it seals clients' "
                f"requestStates, so give it at least {MIN_STATE_KEY_BYTES} (e.g. the output of "
                "`python -c 'import secrets; print(secrets.token_hex(32))'`, the same on every "
                "replica)"
            )
        if self.console_token is not None and self.console_token == self.token:
            raise ConfigError(
                "[serve].console_token equals [serve].token: the console approves calls, so "
                "an MCP client's token must never open it; choose a different console_token"
            )


def parse_config(
    raw: dict[str, Any],
    *,
    source: Path | None = None,
    text: str | None = None,
    env: Mapping[str, str] | None = None,
) -> HostConfig:
    """Validate a decoded TOML document into a `HostConfig`.

    `text` (the file's content) lets errors name lines; `env` (e.g. `os.environ`) applies
    `TOOLWEAVE_<TABLE>__<KEY>` overrides on top of `raw`.
    """
    origin = ConfigSource(str(source or DEFAULT_CONFIG_FILE), key_lines(text or ""))
    data = merge_env(raw, env or {}, origin)
    known = ["serve", MCP_SERVERS, *sorted(SECTIONS)]
    problems = [
        f"{origin.where((name,))}: [{name}] is not a known table; toolweave.toml has "
        f"{', '.join(f'[{k}]' for k in known)} (a provider's table appears once the "
        "provider is installed)"
        for name in sorted(set(data) - set(known))
    ]
    servers = data.get(MCP_SERVERS, {})
    if not isinstance(servers, dict):
        problems.append(f"{origin.where((MCP_SERVERS,))}: [mcpServers] must be a table")
    # Every table is checked, so one run names every problem in the file.
    checked: dict[str, Section] = {}
    for name, model in [("serve", ServeSection), *((n, None) for n in SECTIONS if n in data)]:
        try:
            table = data.get(name, {})
            checked[name] = validate_section(model or section_model(name), (name,), table, origin)
        except ConfigError as exc:
            problems.append(str(exc))
    if problems:
        raise ConfigError("\n".join(problems))
    serve = checked.pop("serve")
    assert isinstance(serve, ServeSection)
    root = str(source.parent.resolve()) if source is not None else os.getcwd()
    try:
        rules = Rules.from_mapping(serve.rules, source=f"{origin.label} [serve.rules]", root=root)
    except ValueError as exc:
        raise ConfigError(f"{origin.where(('serve', 'rules'))}: {exc}") from None
    hooks = serve.hooks
    if hooks is not None and not hooks.is_absolute() and source is not None:
        hooks = source.parent / hooks
    return HostConfig.model_validate(
        {
            **dict(serve),
            "token": serve.token or os.environ.get(TOKEN_ENV) or None,
            "console_token": serve.console_token or os.environ.get(CONSOLE_TOKEN_ENV) or None,
            "state_key": serve.state_key or os.environ.get(STATE_KEY_ENV) or None,
            "instance": serve.instance or f"{socket.gethostname()}:{serve.port}",
            "hooks": hooks,
            "providers_chosen": "providers" in serve.model_fields_set,
            "mcp_servers": servers,
            "sections": checked,
            "source": source,
            "permission_rules": rules,
        }
    )


def load_host_config(
    path: str | Path | None = None, *, env: Mapping[str, str] | None = None
) -> HostConfig:
    """Read `path`, or `./toolweave.toml` when it exists, or the defaults; then apply the
    environment's overrides (`env`, default `os.environ`)."""
    environ = os.environ if env is None else env
    if path is None:
        candidate = Path(DEFAULT_CONFIG_FILE)
        if not candidate.is_file():
            return parse_config({}, env=environ)
        path = candidate
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"config file {file} does not exist; create it or drop --config"
        ) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file} is not valid TOML: {exc}") from None
    return parse_config(raw, source=file, text=text, env=environ)


def load_served_config(
    path: str | Path | None = None, *, env: Mapping[str, str] | None = None
) -> tuple[HostConfig, str | None]:
    """The config `toolweave serve` runs, and a note for the person when it passed one over.

    A config starts programs (`[mcpServers]`, hooks), so a `toolweave.toml` that merely sits in
    the current folder (a cloned repository's) runs only once a person trusted it (`toolweave
    trust`: its path and content hash, `toolweave.storage.trust`), or when named with
    `--config` (`path`). Otherwise the user's own `~/.toolweave/toolweave.toml` (or the
    defaults) is used, and the note says why the local one was not."""
    from toolweave.storage.trust import is_trusted

    if path is not None:
        return load_host_config(path, env=env), None
    local = Path(DEFAULT_CONFIG_FILE)
    if local.is_file() and is_trusted(local):
        return load_host_config(local, env=env), None
    note = None
    if local.is_file():
        note = (
            f"{local.resolve()} is not trusted, so it was not used (it can start programs: "
            "[mcpServers], hooks); review it, then run `toolweave trust toolweave.toml`, or "
            "pass --config toolweave.toml"
        )
    user = Path(USER_CONFIG_FILE).expanduser()
    if user.is_file():
        return load_host_config(user, env=env), note
    return parse_config({}, env=os.environ if env is None else env), note
