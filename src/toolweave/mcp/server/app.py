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
from toolweave.mcp.server._listen import ChangeFeed
from toolweave.mcp.server._session import ServerSession
from toolweave.mcp.server._tools import PatternSource, ToolEntry, check_name, function_entry
from toolweave.mcp.shared.constants import (
    DEFAULT_BODY_READ_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    PROMPTS_CHANGED,
    RESOURCE_UPDATED,
    RESOURCES_CHANGED,
    TOOLS_CHANGED,
)
from toolweave.tools.base import Tool
from toolweave.tools.permissions import Permission

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from toolweave.mcp.server.event_store import EventStore

logger = logging.getLogger("toolweave.mcp.server")
F = TypeVar("F", bound=Callable[..., Any])
ToolSource = Callable[[], Awaitable[Iterable[Tool]]]


class MCPServer:
    """An MCP server: tools, resources, prompts and completions, on any transport.

    `deps` is handed to every tool as `ctx.deps` (a database handle, an HTTP client).
    `cache_ttl_ms` / `cache_scope` are the caching hints 2026-07-28 clients receive on lists.
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
        self._tools: dict[str, ToolEntry] = {}
        self._tool_list: list[dict[str, Any]] | None = None
        self.resources: list[ResourceEntry] = []
        self.prompts: dict[str, PromptEntry] = {}
        self.completions: dict[str, Callable[..., Any]] = {}
        self.catalog_sources: list[CatalogSource] = []
        """Where resources, prompts and completions beyond this server's own come from (see
        `CatalogSource`); the tool host's gateway adds its downstream servers here."""
        self.sessions: set[ServerSession] = set()
        self.changes = ChangeFeed()  # 2026-07-28 `subscriptions/listen` streams
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
    ) -> None:
        """Publish an existing toolweave `Tool` (a `FunctionTool`, a proxied MCP tool, ...)."""
        tool_name = check_name("tool", name or tool.name)
        self._add_entry(
            ToolEntry(
                tool_name,
                lambda: tool,
                title=title,
                probe=permission_patterns,
                always=always_patterns,
                meta=meta,
                output_schema=output_schema,
                timeout=timeout,
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
                )
            )
            return func

        return decorate

    @overload
    def prompt(self, func: F, /) -> F: ...

    @overload
    def prompt(
        self, *, name: str | None = None, title: str | None = None, description: str | None = None
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
                f, name=name, title=options.get("title"), description=options.get("description")
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
        subscribed = [s for s in self.sessions if uri in s.subscriptions]
        await self.changes.broadcast(subscribed, RESOURCE_UPDATED, {"uri": uri})

    async def _notify_list(self, method: str) -> None:
        self.changes.publish(method)
        await self.changes.broadcast(self.sessions, method, None)

    # -- transports -------------------------------------------------------------------------------

    async def run_stdio(self, *, max_line_bytes: int | None = None) -> None:
        """Serve one client over stdin/stdout until stdin closes; a message (line) over
        `max_line_bytes` (default `MAX_LINE_BYTES`, 64 MiB) gets an error and is dropped."""
        from toolweave.mcp.server._stdio import MAX_LINE_BYTES, serve_stdio

        await serve_stdio(self, max_line_bytes=max_line_bytes or MAX_LINE_BYTES)

    def asgi_app(
        self,
        path: str = "/mcp",
        *,
        allowed_origins: Sequence[str] = (),
        allowed_hosts: Sequence[str] | None = None,
        auth_token: str | None = None,
        event_store: EventStore | None = None,
        sse_retry_ms: int = 1000,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
        body_read_timeout: float = DEFAULT_BODY_READ_TIMEOUT,
        tokens: Mapping[str, str] | None = None,
    ) -> Starlette:
        """A Starlette app serving Streamable HTTP at `path` (mount it in FastAPI if you like).

        A browser `Origin` other than loopback is refused unless listed in `allowed_origins`
        (DNS-rebinding protection). `allowed_hosts` lists the `Host` header values to accept
        (`run()` passes the loopback names when bound to loopback); None skips the Host check,
        for apps behind a proxy that picks the host. With `auth_token`, every request needs
        `Authorization: Bearer <token>` (compared in constant time); `tokens` (client name ->
        token) gives each client its own token and its own principal (`client:<name>`).

        Limits (every one a client could otherwise push): a POST without `Content-Type:
        application/json` gets 415; a request body over `max_body_bytes` gets 413 (checked
        while reading, chunked bodies too), one not received within `body_read_timeout`
        seconds 408; at most `max_sessions` sessions live, and past that a new one gets 429
        (nobody's session is closed for it); a session unused for `session_idle_timeout`
        seconds is closed.
        """
        try:
            from toolweave.mcp.server._asgi import build_app
        except ImportError as exc:
            raise ImportError(
                f"Streamable HTTP needs starlette and uvicorn ({exc.name} is missing): "
                "pip install 'toolweave[server]'"
            ) from exc

        return build_app(
            self,
            path,
            allowed_origins=allowed_origins,
            allowed_hosts=allowed_hosts,
            auth_token=auth_token,
            event_store=event_store,
            sse_retry_ms=sse_retry_ms,
            max_body_bytes=max_body_bytes,
            max_sessions=max_sessions,
            session_idle_timeout=session_idle_timeout,
            body_read_timeout=body_read_timeout,
            tokens=tokens,
        )

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        auth_token: str | None = None,
        log_level: str = "info",
    ) -> None:
        """Serve until interrupted: `"stdio"` (logs go to stderr only) or `"http"`.

        Over HTTP, uvicorn logs its startup line (`Uvicorn running on ...`) to stderr at the
        default `log_level`; per-request access logs are off. Binding beyond loopback without
        `auth_token` logs a warning: anyone who can reach the port can call every tool.
        """
        if transport == "stdio":
            asyncio.run(self.run_stdio())
            return
        if transport != "http":
            raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")
        from toolweave._extras import require

        require("server", 'MCPServer.run("http")')
        from toolweave.mcp.server._asgi import serve_http

        serve_http(
            self, host=host, port=port, path=path, auth_token=auth_token, log_level=log_level
        )

    def __repr__(self) -> str:
        return f"MCPServer(name={self.name!r}, tools={len(self._tools)})"
