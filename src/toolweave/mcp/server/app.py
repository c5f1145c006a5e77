"""`MCPServer`: write an MCP server with decorators, serve it over stdio or Streamable HTTP.

Tools are toolweave tools: `@server.tool` builds a `FunctionTool` (the same schema `@tool`
makes) and `server.add_tool` takes any existing `Tool`. Everything heavy (pydantic schemas,
starlette, uvicorn) loads only when needed, so a stdio server starts in a few tens of ms.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from toolweave.mcp.server._catalog import CatalogSource, PromptEntry, ResourceEntry
from toolweave.mcp.server._handlers import bind_handlers
from toolweave.mcp.server._input import DEFAULT_REQUEST_STATE_TTL, RequestStates, SpentStates
from toolweave.mcp.server._listen import ChangeFeed
from toolweave.mcp.server._listing import check_icons
from toolweave.mcp.server._session import Handler, ServerSession
from toolweave.mcp.server._tasks import (
    DEFAULT_TASK_POLL_INTERVAL_MS,
    DEFAULT_TASK_TTL_MS,
    TaskManager,
)
from toolweave.mcp.server._tools import PatternSource, ToolEntry, check_name, function_entry
from toolweave.mcp.server._transports import Transports
from toolweave.mcp.server.skills import EntrySource, ServedSkill, SkillServing, SkillSource
from toolweave.mcp.shared.constants import (
    PROMPTS_CHANGED,
    RESOURCE_UPDATED,
    RESOURCES_CHANGED,
    SKILLS_EXTENSION,
    TASK_STATUS,
    TASKS_EXTENSION,
    TOOLS_CHANGED,
)
from toolweave.tools.base import Tool
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.permissions import Permission

if TYPE_CHECKING:
    from toolweave.mcp.server.tasks import TaskStore

logger = logging.getLogger("toolweave.mcp.server")
F = TypeVar("F", bound=Callable[..., Any])
ToolSource = Callable[[], Awaitable[Iterable[Tool]]]


class MCPServer(Transports):
    """An MCP server: tools, resources, prompts and completions, on any transport.

    `deps` is handed to every tool as `ctx.deps` (a database handle, an HTTP client).
    `cache_ttl_ms` / `cache_scope` are the caching hints 2026-07-28 clients receive on lists.
    `state_key` (at least 16 bytes; random per process by default) signs the `requestState` of
    input-required results, valid for `request_state_ttl` seconds and accepted once (once in a
    fleet when its replicas share `spent_states`, e.g. `PostgresSpentStates(dsn)`, and the
    `state_key`). Tools declared with `task=` run as tasks kept in `task_store` for
    `task_ttl_ms`; clients are told to poll every
    `task_poll_interval_ms`. `page_size` cuts lists into pages with cursors; `icons`
    (SEP-973: `{"src": "https://...", "mimeType": ..., "sizes": [...], "theme": ...}`) are the
    server's, published in its `serverInfo`.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        instructions: str | None = None,
        *,
        deps: Any = None,
        cache_ttl_ms: int = 0,
        cache_scope: str = "private",
        state_key: bytes | None = None,
        request_state_ttl: float = DEFAULT_REQUEST_STATE_TTL,
        spent_states: SpentStates | None = None,
        task_store: TaskStore | None = None,
        task_ttl_ms: int = DEFAULT_TASK_TTL_MS,
        task_poll_interval_ms: int = DEFAULT_TASK_POLL_INTERVAL_MS,
        page_size: int | None = None,
        icons: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        if cache_ttl_ms < 0 or cache_scope not in ("public", "private"):
            raise ValueError("cache_ttl_ms must be >= 0 and cache_scope 'public' or 'private'")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.deps = deps
        # Caching hints on 2026-07-28 list/read results; 0 = re-fetch freely (tools may change).
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.info: dict[str, Any] = {"name": name, "version": version}
        server_icons = check_icons(f"server {name!r}", icons)
        if server_icons:
            self.info["icons"] = server_icons
        if page_size is not None and page_size < 1:
            raise ValueError(f"page_size must be a positive number of entries, not {page_size}")
        #: Entries per page of tools/list, prompts/list, resources/list (None: one page).
        self.page_size = page_size
        # Seals 2026-07-28 `requestState`s; give every replica the same `state_key` (random per
        # process by default, so a restart voids the states in flight).
        self.request_states = RequestStates(state_key, ttl=request_state_ttl, spent=spent_states)
        # SEP-2663 tasks, in `task_store` (an in-memory SQLite store, opened on first use, when
        # None; pass `SQLiteTaskStore(path)` to keep them across restarts).
        self.tasks = TaskManager(
            task_store,
            ttl_ms=task_ttl_ms,
            poll_interval_ms=task_poll_interval_ms,
            on_change=lambda task_id: self.changes.publish(TASK_STATUS, task_id),
        )
        self._tools: dict[str, ToolEntry] = {}
        self._tool_list: list[dict[str, Any]] | None = None
        #: Which tools a client's tools/list shows, `(session, name) -> bool` (None: all); the
        #: tool host's search mode lists a few per client. tools/call is not filtered.
        self.tool_filter: Callable[[ServerSession, str], bool] | None = None
        self.resources: list[ResourceEntry] = []
        self.prompts: dict[str, PromptEntry] = {}
        self.completions: dict[str, Callable[..., Any]] = {}
        self.catalog_sources: list[CatalogSource] = []
        """Where resources, prompts and completions beyond this server's own come from (see
        `CatalogSource`); the tool host's gateway adds its downstream servers here."""
        #: The skills served by the skills extension (SEP-2640); see `add_skills`.
        self.skills = SkillServing()
        self.sessions: set[ServerSession] = set()
        self.changes = ChangeFeed()  # 2026-07-28 `subscriptions/listen` streams
        #: What its sessions dispatch each method to (the handlers, bound to this server).
        self.handlers: dict[str, Handler] = bind_handlers(self)
        self._sources: list[ToolSource] = []
        self._loading: asyncio.Task[None] | None = None

    # -- tools ----------------------------------------------------------------------------------

    @overload
    def tool(self, func: F, /) -> F: ...

    @overload
    def tool(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool = False,
        permissions: Iterable[str | Permission] | None = None,
        primary_arg: str | None = None,
        tags: Iterable[str] | None = None,
        category: str | None = None,
        timeout: float | None = None,
        structured_output: bool = True,
        permission_patterns: PatternSource | bool | None = None,
        always_patterns: Sequence[str] = (),
        meta: dict[str, Any] | None = None,
        header_params: Mapping[str, str] | None = None,
        task: str | None = None,
        task_after: float = 0.0,
        icons: Sequence[dict[str, Any]] | None = None,
    ) -> Callable[[F], F]: ...

    def tool(  # type: ignore[misc]  # the overload spells the options out
        self, func: Callable[..., Any] | None = None, /, **options: Any
    ) -> Callable[..., Any]:
        """Register a function as a tool; bare (`@server.tool`) or with options.

        The schema comes from type hints and the docstring exactly as with `@tool`; a parameter
        annotated `Context` is injected. `structured_output` derives an `outputSchema` from the
        return type. `permission_patterns=lambda args: [...]` (with `always_patterns`) makes the
        tool answer forge permission probes without running; `permission_patterns=True` means
        the tool answers probes itself (check `is_probe(ctx)`, return `probe_result(...)`).
        `header_params={"region": "Region"}` mirrors arguments into `Mcp-Param-*` headers
        (SEP-2243). `task="optional"` lets a 2026 client that supports tasks (SEP-2663) get a
        task for a call still running `task_after` seconds after it started (0: at its first
        pause); `task="required"` refuses clients without tasks (-32021).
        The function is returned unchanged.
        """
        if func is not None:
            self._register_function(func, {})
            return func

        def decorate(f: F) -> F:
            self._register_function(f, options)
            return f

        return decorate

    def _register_function(self, func: Callable[..., Any], options: dict[str, Any]) -> None:
        self._add_entry(function_entry(func, options))

    def add_tool(
        self,
        tool: Tool,
        *,
        name: str | None = None,
        title: str | None = None,
        permission_patterns: PatternSource | bool | None = None,
        always_patterns: Sequence[str] = (),
        meta: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | bool | None = True,
        timeout: float | None = None,
        header_params: Mapping[str, str] | None = None,
        task: str | None = None,
        task_after: float = 0.0,
        icons: Sequence[dict[str, Any]] | None = None,
        func: Callable[..., Any] | None = None,
    ) -> None:
        """Publish an existing toolweave `Tool` (a `FunctionTool`, a proxied MCP tool, ...);
        the options mean what they mean on `tool()`. `func` is the function whose return type
        gives the derived outputSchema (default: a `FunctionTool`'s own; a wrapper passes the
        function of the tool it wraps)."""
        tool_name = check_name("tool", name or tool.name)
        if func is None and isinstance(tool, FunctionTool):
            func = tool.func
        self._add_entry(
            ToolEntry(
                tool_name,
                lambda: tool,
                func=func,
                title=title,
                probe=permission_patterns,
                always=always_patterns,
                meta=meta,
                output_schema=output_schema,
                timeout=timeout,
                header_params=header_params,
                task=task,
                task_after=task_after,
                icons=icons,
            )
        )

    def _add_entry(self, entry: ToolEntry) -> None:
        if entry.name in self._tools:
            raise ValueError(
                f"a tool named {entry.name!r} is already registered; pass name=... to register "
                "this one under another name, or remove_tool() the old one first"
            )
        self._tools[entry.name] = entry
        self._tool_list = None

    def remove_tool(self, name: str) -> None:
        if self._tools.pop(name, None) is None:
            raise KeyError(f"no tool named {name!r}; registered: {', '.join(self.tool_names())}")
        self._tool_list = None

    def tool_entry(self, name: str) -> ToolEntry | None:
        return self._tools.get(name)

    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools/list payload, sorted by name and cached until the tool set changes."""
        if self._tool_list is None:
            self._tool_list = [self._tools[n].definition() for n in sorted(self._tools)]
        return self._tool_list

    def tool_definitions_for(self, session: ServerSession) -> list[dict[str, Any]]:
        """The tools/list payload `session` is shown (`tool_filter`)."""
        definitions = self.tool_definitions()
        if self.tool_filter is None:
            return definitions
        return [d for d in definitions if self.tool_filter(session, d["name"])]

    def add_tool_source(self, source: ToolSource) -> None:
        """Register tools discovered on demand (a gateway's downstream servers, say).

        `source` is awaited once, on the first tools/list or tools/call, and returns the
        `Tool`s to publish with default options (or publishes them itself through `add_tool`
        and returns `[]`); a server therefore starts without waiting for them. A source that
        raises is logged and skipped.
        """
        self._sources.append(source)

    async def load_tool_sources(self) -> None:
        """Run pending tool sources (once each); handlers call this before listing tools.

        Discovery runs in one shared task that callers await shielded: a client that cancels
        its tools/list (or hangs up) while a slow downstream server is connecting does not
        abort the discovery, and the next caller picks up the same run.
        """
        loading = self._loading
        if loading is None or loading.done():
            if not self._sources:
                return
            loading = self._loading = asyncio.get_running_loop().create_task(self._run_sources())
        await asyncio.shield(loading)

    async def _run_sources(self) -> None:
        while self._sources:
            source = self._sources.pop(0)
            try:
                tools = list(await source())
                for tool in tools:
                    self.add_tool(tool)
            except Exception:  # one broken source must not hide every other tool
                logger.exception("tool source %r failed; its tools are not published", source)

    def prepare(self) -> None:
        """Build every tool schema and prompt definition now (raises on the first bad one)."""
        self.tool_definitions()
        for prompt in self.prompts.values():
            prompt.definition()

    # -- resources, prompts, completions ---------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: Sequence[dict[str, Any]] | None = None,
    ) -> Callable[[F], F]:
        """Register a resource (`"docs://readme"`) or a template (`"users://{id}/profile"`).

        The function returns `str` (text), `bytes` (blob), any JSON value, or ready MCP
        contents; template variables arrive as keyword arguments.
        """

        def decorate(func: F) -> F:
            self.resources.append(
                ResourceEntry(
                    uri,
                    func,
                    name=name,
                    title=title,
                    description=description,
                    mime_type=mime_type,
                    icons=check_icons(f"resource {uri!r}", icons),
                )
            )
            return func

        return decorate

    @overload
    def prompt(self, func: F, /) -> F: ...

    @overload
    def prompt(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[dict[str, Any]] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(  # type: ignore[misc]  # options are spelled out in the overload
        self, func: Callable[..., Any] | None = None, /, **options: Any
    ) -> Callable[..., Any]:
        """Register a prompt; its string parameters are the prompt's arguments.

        Return a string (one user message), a list of strings / message dicts, or a full
        `{"messages": [...]}` result.
        """

        def decorate(f: F) -> F:
            name = check_name("prompt", options.get("name") or f.__name__)
            if name in self.prompts:
                raise ValueError(f"a prompt named {name!r} is already registered")
            self.prompts[name] = PromptEntry(
                f,
                name=name,
                title=options.get("title"),
                description=options.get("description"),
                icons=check_icons(f"prompt {name!r}", options.get("icons")),
            )
            return f

        return decorate(func) if func is not None else decorate

    def completion(self, ref: str) -> Callable[[F], F]:
        """Register argument completion for a prompt name or a resource template URI.

        The function receives `argument` (name), `value` (typed so far) and `context` (other
        arguments already chosen) and returns candidate strings.
        """

        def decorate(func: F) -> F:
            self.completions[ref] = func
            return func

        return decorate

    def add_skills(
        self, skills: SkillSource | Iterable[ServedSkill], *, serve_files: bool = True
    ) -> None:
        """Serve Agent Skills by the skills extension (SEP-2640): `ServedSkill`s (e.g.
        `ServedSkill.from_folder(path)`), or a coroutine function returning the current ones.
        The server declares the extension and answers `skills/list` and `skills/get`; with
        `serve_files` it also serves the files as `skill://` resources (pass False when another
        catalog source already serves those URIs with the same bytes)."""
        first = not self.skills.sources
        self.skills.add(skills)
        if serve_files and first:
            self.catalog_sources.append(self.skills)

    def add_skill_entries(self, source: EntrySource) -> None:
        """Serve ready `skills/list` entries as well (a coroutine function returning them, asked
        on every request): another server's skills republished, digests and sizes as that
        server computed them; a catalog source must serve their files with the same bytes."""
        self.skills.entry_sources.append(source)

    # -- protocol ---------------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {
            "tools": {"listChanged": True},
            "logging": {},
            "completions": {},
        }
        if self.resources or self.catalog_sources:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts or self.catalog_sources:
            caps["prompts"] = {"listChanged": True}
        extensions: dict[str, Any] = {}
        if any(entry.task_support for entry in self._tools.values()):
            extensions[TASKS_EXTENSION] = {}
        if self.skills.offered:  # the files are resources: the extension requires `resources`
            extensions[SKILLS_EXTENSION] = {}
            caps.setdefault("resources", {"listChanged": True})
        if extensions:
            caps["extensions"] = extensions
        return caps

    def new_session(
        self, *, session_id: str | None = None, stateless: bool = False
    ) -> ServerSession:
        return ServerSession(self, session_id=session_id, stateless=stateless)

    async def notify_tools_changed(self) -> None:
        """Tell every client that tools/list changed: 2025-era sessions and 2026-07-28
        `subscriptions/listen` streams that asked for `toolsListChanged`."""
        await self._notify_list(TOOLS_CHANGED)

    async def notify_prompts_changed(self) -> None:
        """Tell every client that prompts/list changed (as `notify_tools_changed`)."""
        await self._notify_list(PROMPTS_CHANGED)

    async def notify_resources_changed(self) -> None:
        """Tell every client that resources/list changed (as `notify_tools_changed`)."""
        await self._notify_list(RESOURCES_CHANGED)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to `uri` that it changed."""
        self.changes.publish(RESOURCE_UPDATED, uri)
        await self._broadcast(RESOURCE_UPDATED, uri)

    async def deliver_change(self, method: str, uri: str | None) -> None:
        """A change another replica published (`PostgresChangeRelay`): tell this process's
        listen streams and 2025-era sessions, without relaying it again."""
        self.changes.deliver(method, uri)
        await self._broadcast(method, uri)

    async def _notify_list(self, method: str) -> None:
        self.changes.publish(method)
        await self._broadcast(method, None)

    async def _broadcast(self, method: str, uri: str | None) -> None:
        """The 2025-era sessions' notification of a change (task status changes have none)."""
        if method == RESOURCE_UPDATED and uri is not None:
            subscribed = [s for s in self.sessions if uri in s.subscriptions]
            await self.changes.broadcast(subscribed, RESOURCE_UPDATED, {"uri": uri})
        elif method in (TOOLS_CHANGED, PROMPTS_CHANGED, RESOURCES_CHANGED):
            await self.changes.broadcast(self.sessions, method, None)

    def __repr__(self) -> str:
        return f"MCPServer(name={self.name!r}, tools={len(self._tools)})"
