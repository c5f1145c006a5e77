"""`MCPManager`: many MCP servers from one Claude-Desktop-style `mcpServers` config.

Servers connect concurrently and independently: one that fails (bad command, refused port,
slow start) is recorded with its error and never blocks or breaks the others. Bridged tools are
named `<server>__<tool>` so two servers cannot collide, and every registry the manager was
attached to is kept in step when servers are added, removed, reconnected or change their tool
lists.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from toolweave.errors import ConfigError
from toolweave.mcp.client import MCPClient
from toolweave.mcp.client.client import DEFAULT_TIMEOUT
from toolweave.mcp.shared.errors import MCPError
from toolweave.tools.base import Tool
from toolweave.tools.registry import ToolRegistry
from toolweave.tools.shaping import DEFAULT_MAX_CHARS

from .bridge import MCPTool, ToolFilter, safe_tool_name, select

logger = logging.getLogger("toolweave.mcp.manager")

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,48}$")
TOOL_SEPARATOR = "__"
RECONNECT_DELAY = 0.5
"""Seconds before the first reconnect of a server that dropped; doubles after each failure."""
RECONNECT_MAX_DELAY = 30.0
"""Longest wait between reconnect attempts."""
_HTTP_URL = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)
# Valid `type` values (VS Code's format) for a stdio entry (False) and an HTTP one (True).
CONFIG_KEYS = ("mcpServers", "servers")  # Claude Desktop, VS Code
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
        return cls(
            name=name,
            command=command or None,
            args=list(args),
            env=dict(env),
            cwd=cwd or None,
            url=url or None,
            headers=dict(headers),
            timeout=float(timeout) if timeout is not None else None,
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


@dataclass(slots=True)
class ServerState:
    """A configured server at run time: its client once connected, or why it is not."""

    config: ServerConfig
    client: MCPClient | None = None
    tools: list[MCPTool] = field(default_factory=list)
    error: str | None = None
    connecting: bool = False
    # Connect and list_changed refreshes bridge one at a time, so unchanged tools keep identity.
    bridging: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)

    @property
    def connected(self) -> bool:
        return self.client is not None and self.client.connected


class MCPManager:
    """Connects, bridges and manages a set of MCP servers."""

    def __init__(
        self,
        servers: dict[str, ServerConfig] | None = None,
        *,
        config_path: str | Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        include: ToolFilter | None = None,
        exclude: ToolFilter | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
        client_options: dict[str, Any] | None = None,
        reconnect: bool = True,
        reconnect_delay: float = RECONNECT_DELAY,
        reconnect_max_delay: float = RECONNECT_MAX_DELAY,
    ) -> None:
        self.reconnect_enabled = reconnect
        self.reconnect_delay = reconnect_delay
        self.reconnect_max_delay = reconnect_max_delay
        self.config_path = Path(config_path) if config_path is not None else None
        self.timeout = timeout
        self.include = include
        self.exclude = exclude
        self.max_chars = max_chars
        self.client_options = dict(client_options or {})
        self.servers: dict[str, ServerState] = {
            name: ServerState(config) for name, config in (servers or {}).items()
        }
        self._registries: list[tuple[ToolRegistry, set[str]]] = []
        self._lock = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False

    @classmethod
    def from_config(cls, source: str | Path | dict[str, Any], **options: Any) -> MCPManager:
        """A manager for every server in a config file (path) or dict; call `start()` next."""
        if not isinstance(source, dict):
            options.setdefault("config_path", source)
        return cls(load_config(source), **options)

    async def __aenter__(self) -> MCPManager:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self, deadline: float | None = None) -> dict[str, str]:
        """Connect every server not yet connected, concurrently (so calling it again retries
        the ones that failed); returns `{name: error}` for those that are down.

        With a `deadline` (seconds), waits no longer than that: servers still connecting go on
        in the background and their tools reach attached registries when they arrive (a gateway
        lists what is ready instead of waiting for its slowest downstream).
        """
        pending = [
            state for state in self.servers.values() if not state.connected and not state.connecting
        ]
        tasks = [self._spawn(self._connect_and_sync(state)) for state in pending]
        if tasks:
            await asyncio.wait(tasks, timeout=deadline)
        self._sync()
        errors = self.errors
        for state in pending:
            if state.connecting:
                errors[state.config.name] = f"still connecting after {deadline:g} s"
        return dict(sorted(errors.items()))

    @property
    def errors(self) -> dict[str, str]:
        return {n: s.error for n, s in sorted(self.servers.items()) if s.error is not None}

    def _spawn(self, work: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _connect_and_sync(self, state: ServerState) -> None:
        await self._connect(state)
        self._sync()

    async def _connect(self, state: ServerState, *, quiet: bool = False) -> None:
        """Connect one server and bridge its tools; a failure is recorded on its state and
        logged once (`quiet` for the retries of an outage already reported)."""
        name = state.config.name
        client = state.client or state.config.make_client(
            self.timeout,
            on_notification=self._listener(name),
            on_disconnect=lambda exc: self._on_disconnect(name, exc),
            **self.client_options,
        )
        state.client = client
        state.connecting = True
        try:
            await client.connect()
            async with state.bridging:
                state.tools = await self._bridge(state, client)
            state.error = None
        except Exception as exc:  # any failure stays with this server; the others go on
            state.error = f"{type(exc).__name__}: {exc}"
            state.tools = []
            if not quiet:
                logger.warning("MCP server %r failed to connect: %s", name, state.error)
        finally:
            state.connecting = False

    def _on_disconnect(self, name: str, exc: MCPError) -> None:
        """A connected server went away: drop its tools now, reconnect with backoff."""
        state = self.servers.get(name)
        if state is None or self._closed:
            return
        state.tools = []
        state.error = f"disconnected: {exc}"
        self._sync()
        if not self.reconnect_enabled:
            logger.warning("MCP server %r disconnected: %s", name, exc)
            return
        logger.warning("MCP server %r disconnected (%s); reconnecting in the background", name, exc)
        self._spawn(self._reconnect_with_backoff(state))

    async def _reconnect_with_backoff(self, state: ServerState) -> None:
        delay = self.reconnect_delay
        name = state.config.name
        while not self._closed and self.servers.get(name) is state and not state.connected:
            await asyncio.sleep(delay)
            if self._closed or self.servers.get(name) is not state:
                return
            await self._connect(state, quiet=True)
            if state.connected:
                logger.warning("MCP server %r is back with %d tool(s)", name, len(state.tools))
                self._sync()
                return
            delay = min(delay * 2, self.reconnect_max_delay)

    async def _bridge(self, state: ServerState, client: MCPClient) -> list[MCPTool]:
        """The server's tools as `MCPTool`s; an unchanged tool keeps its object, so a
        `list_changed` does not churn registries or invalidate tools a session loaded."""
        name = state.config.name
        previous = {t.remote_name: t for t in state.tools if t.client is client}
        bridged: list[MCPTool] = []
        taken: dict[str, str] = {}
        for info in select(await client.list_tools(), self.include, self.exclude):
            safe = safe_tool_name(f"{name}{TOOL_SEPARATOR}{info.name}")
            if safe in taken:  # e.g. `a.b` and `a_b`, or names cut at 64 characters
                logger.warning(
                    "MCP server %r: tool %r and %r both become %r; keeping the first (exclude "
                    "one with the manager's `exclude` filter)",
                    name,
                    taken[safe],
                    info.name,
                    safe,
                )
                continue
            taken[safe] = info.name
            same = previous.get(info.name)
            if same is not None and same.info == info:
                bridged.append(same)
                continue
            bridged.append(MCPTool(client, info, name=safe, max_chars=self.max_chars, server=name))
        return bridged

    def _listener(self, name: str) -> Any:
        async def on_notification(method: str, params: dict[str, Any]) -> None:
            if method != "notifications/tools/list_changed":
                return
            state = self.servers.get(name)
            if state is None or state.client is None:
                return
            try:
                async with state.bridging:
                    state.tools = await self._bridge(state, state.client)
            except MCPError as exc:
                logger.warning("could not refresh the tools of %r: %s", name, exc)
                return
            self._sync()

        return on_notification

    # -- tools ----------------------------------------------------------------------------------

    def tools(self) -> list[MCPTool]:
        """Every bridged tool of every connected server, sorted by name."""
        found = [t for s in self.servers.values() if s.connected for t in s.tools]
        return sorted(found, key=lambda t: t.name)

    def find(self, name: str) -> MCPTool | None:
        for state in self.servers.values():
            for bridged in state.tools:
                if bridged.name == name:
                    return bridged
        return None

    def model_tools(
        self,
        *,
        lazy: bool = True,
        registry: ToolRegistry | None = None,
        self_management: bool = False,
    ) -> list[Tool]:
        """What to give the model: `mcp_discover` + `mcp_load` (lazy, the default) or every
        bridged tool (eager), plus the self-management tools when `self_management` is on.
        `registry` is the session overlay lazy loading puts tools into."""
        from .lazy import lazy_tools
        from .self_tools import self_management_tools

        tools: list[Tool] = lazy_tools(self, registry=registry) if lazy else list(self.tools())
        if self_management:
            tools.extend(self_management_tools(self))
        return tools

    def attach(self, registry: ToolRegistry) -> None:
        """Register every tool eagerly in `registry` and keep it in step from now on."""
        if all(r is not registry for r, _ in self._registries):
            self._registries.append((registry, set()))
        self._sync()

    def detach(self, registry: ToolRegistry) -> None:
        """Stop managing `registry`, unregistering the tools this manager put there."""
        for entry in list(self._registries):
            if entry[0] is registry:
                self._registries.remove(entry)
                for name in entry[1]:
                    if name in registry:
                        registry.unregister(name)

    def _sync(self) -> None:
        wanted: dict[str, Tool] = {t.name: t for t in self.tools()}
        for registry, mine in self._registries:
            for name in list(mine):
                if wanted.get(name) is not registry.get(name):
                    if name in registry:
                        registry.unregister(name)
                    mine.discard(name)
            for name, bridged in wanted.items():
                if name not in registry:
                    registry.register(bridged)
                    mine.add(name)

    # -- run-time management --------------------------------------------------------------------

    async def add(self, config: ServerConfig) -> ServerState:
        """Connect a new server; it is recorded (with its error) even if connecting fails."""
        async with self._lock:
            if config.name in self.servers:
                raise ValueError(
                    f"an MCP server named {config.name!r} already exists; remove it first"
                )
            state = self.servers[config.name] = ServerState(config)
        await self._connect(state)
        self._sync()
        return state

    async def remove(self, name: str) -> ServerConfig:
        """Disconnect and forget a server; returns its config (for a rollback)."""
        async with self._lock:
            state = self.servers.pop(name, None)
        if state is None:
            raise KeyError(f"no MCP server named {name!r}; known: {sorted(self.servers)}")
        if state.client is not None:
            await state.client.close()
        state.tools = []
        self._sync()
        return state.config

    async def reconnect(self, name: str, config: ServerConfig | None = None) -> ServerState:
        """Reconnect a server (with a new definition when given), whether or not it ever
        connected before."""
        state = self.servers.get(name)
        if state is None:
            if config is None:
                raise KeyError(f"no MCP server named {name!r}; known: {sorted(self.servers)}")
            return await self.add(config)
        if state.client is not None:
            await state.client.close()
        if config is not None and config != state.config:
            state.config = config
            state.client = None
        await self._connect(state)
        self._sync()
        return state

    async def close(self) -> None:
        self._closed = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await asyncio.gather(
            *(s.client.close() for s in self.servers.values() if s.client is not None),
            return_exceptions=True,
        )
