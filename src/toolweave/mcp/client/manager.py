"""`MCPManager`: many MCP servers from one Claude-Desktop-style `mcpServers` config.

Servers connect concurrently and independently: one that fails (bad command, refused port,
slow start) is recorded with its error and never blocks or breaks the others. Bridged tools are
named `<server>__<tool>` so two servers cannot collide, and every registry the manager was
attached to is kept in step when servers are added, removed, reconnected or change their tool
lists.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from toolweave.mcp.client import MCPClient
from toolweave.mcp.client.client import DEFAULT_TIMEOUT
from toolweave.mcp.client.config import ServerConfig, load_config
from toolweave.mcp.client.config_values import InputAsker
from toolweave.mcp.client.servers import TOOL_SEPARATOR, ServerState
from toolweave.mcp.client.skills import (
    DEFAULT_SKILLS_TIMEOUT,
    MAX_SKILL_FILE_BYTES,
    MCPSkill,
    list_skills,
    read_skill_file,
)
from toolweave.mcp.shared.constants import PROMPTS_CHANGED, RESOURCES_CHANGED, TOOLS_CHANGED
from toolweave.mcp.shared.errors import MCPError
from toolweave.mcp.toolset.bridge import MCPTool, ToolFilter, safe_tool_name, select
from toolweave.tools.base import Tool
from toolweave.tools.registry import ToolRegistry
from toolweave.tools.shaping import DEFAULT_MAX_CHARS

logger = logging.getLogger("toolweave.mcp.client.manager")

_CATALOG_NOTIFICATIONS = {
    RESOURCES_CHANGED: "resources",
    PROMPTS_CHANGED: "prompts",
}
RECONNECT_DELAY = 0.5
"""Seconds before the first reconnect of a server that dropped; doubles after each failure."""
RECONNECT_MAX_DELAY = 30.0
"""Longest wait between reconnect attempts."""


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
        max_skill_file_bytes: int = MAX_SKILL_FILE_BYTES,
        skills_timeout: float = DEFAULT_SKILLS_TIMEOUT,
    ) -> None:
        if max_skill_file_bytes < 1:
            raise ValueError(
                f"max_skill_file_bytes must be a positive number of bytes, not "
                f"{max_skill_file_bytes}"
            )
        if not 0 < skills_timeout < math.inf:
            raise ValueError(
                f"skills_timeout must be a positive finite number of seconds, not "
                f"{skills_timeout!r}"
            )
        self.max_skill_file_bytes = max_skill_file_bytes
        self.skills_timeout = skills_timeout
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
        self.catalog_listeners: list[Callable[[str], None]] = []
        """Called with `"resources"` or `"prompts"` when a server's list of them may have
        changed (its own list_changed notification, or the server connecting, dropping, being
        added, removed or reconnected); a `SkillLibrary` that joined the servers' skills lists
        them again at its next use."""

    @classmethod
    def from_config(
        cls,
        source: str | Path | dict[str, Any],
        *,
        ask: InputAsker | None = None,
        workspace: str | Path | None = None,
        **options: Any,
    ) -> MCPManager:
        """A manager for every server in a config file (path) or dict; call `start()` next.
        `ask` answers VS Code `${input:id}` variables (None: a config using one is refused);
        `workspace` is `${workspaceFolder}` (default: the folder the file belongs to, see
        `load_config`; for a dict, the current directory)."""
        if not isinstance(source, dict):
            options.setdefault("config_path", source)
        return cls(load_config(source, ask=ask, workspace=workspace), **options)

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

    async def start(self, deadline: float | None = None, *, quiet: bool = False) -> dict[str, str]:
        """Connect every server not yet connected, concurrently (so calling it again retries
        the ones that failed); returns `{name: error}` for those that are down. Each failure
        is also logged, unless `quiet` (for a caller that reports the returned errors itself).

        With a `deadline` (seconds), waits no longer than that: servers still connecting go on
        in the background and their tools reach attached registries when they arrive (a gateway
        lists what is ready instead of waiting for its slowest downstream).
        """
        pending = [
            state for state in self.servers.values() if not state.connected and not state.connecting
        ]
        tasks = [self._spawn(self._connect_and_sync(state, quiet=quiet)) for state in pending]
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

    async def _connect_and_sync(self, state: ServerState, *, quiet: bool = False) -> None:
        await self._connect(state, quiet=quiet)
        self._sync()
        if state.connected:
            self._catalog_changed("resources", "prompts")

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
        self._catalog_changed("resources", "prompts")
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
                self._catalog_changed("resources", "prompts")
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

    def _catalog_changed(self, *kinds: str) -> None:
        for kind in kinds:
            for listener in list(self.catalog_listeners):
                listener(kind)

    def _listener(self, name: str) -> Any:
        async def on_notification(method: str, params: dict[str, Any]) -> None:
            kind = _CATALOG_NOTIFICATIONS.get(method)
            if kind is not None:
                self._catalog_changed(kind)
                return
            if method != TOOLS_CHANGED:
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

    async def skills(self) -> list[MCPSkill]:
        """The skill catalogs (SEP-2640) of every connected server that offers them: level 1
        only, nothing fetched; `load_skill` reads and verifies one when it is needed. The
        servers are asked at once, each within its `skills_timeout`: one that fails or does not
        answer in time is left out with a warning (and, when too slow, reported as changed, so
        the next listing asks it again)."""
        names = sorted(n for n, state in self.servers.items() if state.connected)
        lists = await asyncio.gather(*(self._server_skills(name) for name in names))
        return [skill for listed in lists for skill in listed]

    async def _server_skills(self, name: str) -> list[MCPSkill]:
        state = self.servers[name]
        assert state.client is not None
        timeout = state.config.skills_timeout or self.skills_timeout
        try:
            async with asyncio.timeout(timeout):
                return await list_skills(state.client)
        except TimeoutError:
            logger.warning(
                "MCP server %r: skills/list did not answer within skills_timeout (%g s); going "
                "on without its skills, asked again at the next listing",
                name,
                timeout,
            )
            self._catalog_changed("resources")
        except MCPError as exc:
            logger.warning("MCP server %r: skills/list failed: %s", name, exc)
        return []

    async def load_skill(self, skill: MCPSkill) -> str:
        """The verified `SKILL.md` of a listed skill (`SkillVerificationError` when its bytes,
        digest or frontmatter differ from the listing)."""
        return await self.read_skill_file(skill, skill.uri)

    async def read_skill_file(self, skill: MCPSkill, uri: str) -> str:
        """One verified file of a listed skill, at most `max_skill_file_bytes` long (a remote
        skill's level 2 and 3, read only when asked: `toolweave.skills.RemoteSkill`)."""
        state = self.servers.get(skill.server)
        if state is None or state.client is None or not state.connected:
            raise MCPError(f"MCP server {skill.server!r} is not connected")
        return await read_skill_file(state.client, skill, uri, max_bytes=self.max_skill_file_bytes)

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
        from toolweave.mcp.toolset.lazy import lazy_tools  # the toolset sits above the client
        from toolweave.mcp.toolset.self_tools import self_management_tools

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
        self._catalog_changed("resources", "prompts")
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
        self._catalog_changed("resources", "prompts")
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
        self._catalog_changed("resources", "prompts")
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
