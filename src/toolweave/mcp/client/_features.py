"""The request/response half of `MCPClient`: tools (listing, calls, probes, output-schema
checks), paginated listings, resources, prompts, completion, logging level and ping.

These methods are "send one request, convert the answer" code, so they live apart from the
connection and era logic in `client.py`; `MCPClient` inherits them. They rely only on
`request()`, `_require()` and the tool cache, declared below for the type checker.
"""

from __future__ import annotations

import logging
import time
import uuid
from functools import partial
from typing import TYPE_CHECKING, Any

from toolweave.mcp.client._callbacks import LOG_LEVELS
from toolweave.mcp.client._schema_check import schema_errors
from toolweave.mcp.client._tasks import MCPTask, TaskFeatures, is_task_answer
from toolweave.mcp.client.models import (
    MCPPrompt,
    MCPPromptMessage,
    MCPPromptResult,
    MCPResource,
    MCPResourceTemplate,
    MCPToolInfo,
    content_from_wire,
    resource_from_wire,
    tool_result_from_wire,
)
from toolweave.mcp.shared.constants import META_IDEMPOTENCY_KEY, PROBE_SUPPORTED
from toolweave.mcp.shared.errors import MCPError
from toolweave.mcp.shared.probe import probe_requested
from toolweave.tools.result import ResourceContent, ToolResult

logger = logging.getLogger("toolweave.mcp.client")

if TYPE_CHECKING:
    from toolweave.mcp.shared.jsonrpc import ProgressHandler


DEFAULT_MAX_LIST_PAGES = 1000
"""Most pages one paginated listing reads (`client.max_list_pages`): a server handing out a new
cursor forever is refused there instead of being listed until memory runs out."""


class ServerFeatures(TaskFeatures):
    """Tools, listings and the other server features, on top of `request()`."""

    max_list_pages: int = DEFAULT_MAX_LIST_PAGES

    tools_version: int
    _log_level: str | None
    _tools: list[MCPToolInfo] | None
    _tools_by_name: dict[str, MCPToolInfo]
    _last_listed: dict[str, MCPToolInfo]
    """The latest listing even when a change notice made it stale: how to call a tool."""
    _list_expiry: dict[str, float]
    """Per list method, when the server's `ttlMs` hint lets the last listing go (monotonic)."""
    _lists: dict[str, list[dict[str, Any]]]
    """Resources, templates and prompts listed with a `ttlMs` hint, reused until it expires."""

    def _stale(self, method: str) -> bool:
        """Whether the server's `ttlMs` on the last `method` listing has run out (a 2025 server
        sends none: its tools stay cached until `list_changed`)."""
        expiry = self._list_expiry.get(method)
        return expiry is not None and time.monotonic() >= expiry

    async def list_tools(self, *, refresh: bool = False) -> list[MCPToolInfo]:
        """Every tool, across all pages; reused until `notifications/tools/list_changed` or
        until the `ttlMs` a 2026-07-28 server put on the listing runs out (0: never reused)."""
        if self._tools is None or refresh or self._stale("tools/list"):
            version = self.tools_version
            tools = self._valid_tools(await self.paginate("tools/list", "tools"))
            self._last_listed = {tool.name: tool for tool in tools}
            if version == self.tools_version:
                self._tools = tools
                self._tools_by_name = {tool.name: tool for tool in tools}
            return tools
        return list(self._tools)

    def _valid_tools(self, listed: list[dict[str, Any]]) -> list[MCPToolInfo]:
        """The usable definitions; a malformed one is skipped with a warning, never hiding the
        rest (a duplicate name keeps the first)."""
        tools: list[MCPToolInfo] = []
        names: set[str] = set()
        for raw in listed:
            try:
                info = MCPToolInfo.from_wire(raw)
            except ValueError as exc:
                logger.warning("MCP server %r: skipping a tool: %s", self.name, exc)
                continue
            if info.name in names:
                logger.warning("MCP server %r: skipping a second tool %r", self.name, info.name)
                continue
            names.add(info.name)
            tools.append(info)
        return tools

    async def call_tool(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        *,
        meta: dict[str, Any] | None = None,
    ) -> ToolResult:
        """Call a tool. A tool's own failure comes back as `is_error=True`, not an exception.

        A permission probe (`meta={"forge.permission_patterns": True}`) is refused with
        `MCPError`, sending nothing, unless the tool advertises
        `forge.supports_permission_patterns`: an unaware server would run the tool for real.
        A probe key that is not exactly `true` raises `JSONRPCError` (invalid params), sending
        nothing (`toolweave.mcp.shared.probe`). Every call carries a fresh idempotency key
        (`_meta[META_IDEMPOTENCY_KEY]`, unless `meta` names one), so a server that records keys
        answers a resend of it without running the tool twice."""
        params: dict[str, Any] = {"name": name, "arguments": args or {}}
        probe = probe_requested(meta)  # a malformed probe key is refused, sending nothing
        if probe:
            await self._require_probe_support(name)
        # Named once, kept by every resend of `params`: a server that records it runs the call
        # at most once however often it is retried (`toolweave.mcp.server.idempotency`).
        params["_meta"] = {META_IDEMPOTENCY_KEY: uuid.uuid4().hex, **(meta or {})}
        modern = self._require().modern
        info = self._tools_by_name.get(name) or self._last_listed.get(name)
        if info is None and self._tools is None:  # x-mcp-header, taskSupport decide the call
            info = next((t for t in await self.list_tools() if t.name == name), None)
        if not modern and info is not None and info.execution.get("taskSupport") == "required":
            params["task"] = {}  # 2025: such a tool runs only as a task the client asks for
        try:
            routes = self.callbacks.routes  # a gateway's: questions go to the call's caller
            send = partial(
                self.request, "tools/call", params, timeout=timeout, on_progress=on_progress
            )
            raw = await (send() if routes is None else routes.run(send))
            if is_task_answer(raw):  # a call that finishes later: followed to its end
                result = await self.run_task(MCPTask.from_wire(raw), on_progress)
            else:
                result = tool_result_from_wire(raw)
        except MCPError as exc:
            exc.tool = exc.tool or name
            raise
        if not probe and not result.is_error:  # a probe runs nothing, so there is nothing to check
            await self._check_structured(name, result)
        return result

    async def _require_probe_support(self, name: str) -> None:
        info = self._tools_by_name.get(name)
        if info is None:
            await self.list_tools(refresh=self._tools is not None)
            info = self._tools_by_name.get(name)
        if info is None or info.meta.get(PROBE_SUPPORTED) is not True:
            raise MCPError(
                f"tool {name!r} on MCP server {self.name!r} does not advertise "
                f"{PROBE_SUPPORTED}; a permission probe would run it for real, so none was sent",
                tool=name,
            )

    async def _check_structured(self, name: str, result: ToolResult) -> None:
        """A tool with an output schema must return structured content that matches it."""
        info = self._tools_by_name.get(name)
        if info is None and self._tools is None and result.structured is not None:
            await self.list_tools()  # learn the schema once; the listing is cached
            info = self._tools_by_name.get(name)
        if info is None or info.output_schema is None:
            return
        where = f"tool {name!r} on MCP server {self.name!r}"
        if result.structured is None:
            raise MCPError(
                f"{where} declares an output schema but returned no structuredContent", tool=name
            )
        errors = schema_errors(result.structured, info.output_schema)
        if errors:
            raise MCPError(
                f"{where} returned structured content that does not match its output schema: "
                f"{'; '.join(errors[:5])}",
                tool=name,
            )

    async def paginate(self, method: str, key: str) -> list[dict[str, Any]]:
        """Every item of a paginated list (`resources/list` under `resources`, ...), as sent.

        The first page's caching hint is kept: `ttlMs` (milliseconds the listing may be reused;
        `cacheScope` "private" or "public" needs nothing more, as a cache never outlives this
        client and its credentials)."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        self._list_expiry.pop(method, None)
        while True:
            result = await self.request(method, {"cursor": cursor} if cursor else None)
            ttl_ms = result.get("ttlMs")
            if not cursor and type(ttl_ms) is int and ttl_ms >= 0:
                self._list_expiry[method] = time.monotonic() + ttl_ms / 1000
            page = result.get(key)
            if isinstance(page, list):
                items.extend(item for item in page if isinstance(item, dict))
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor or next_cursor in seen:
                return items
            seen.add(next_cursor)
            if len(seen) >= self.max_list_pages:
                raise MCPError(
                    f"{method} on {self.name!r}: the server gave a next page after "
                    f"{len(seen)} pages (max_list_pages = {self.max_list_pages}); not listed "
                    "further (set client.max_list_pages to allow more)"
                )
            cursor = next_cursor

    async def _listing(self, method: str, key: str, refresh: bool) -> list[dict[str, Any]]:
        """A list reused while its `ttlMs` lasts (and its `list_changed` was not heard); without
        the hint (2025 servers) it is asked for every time."""
        cached = self._lists.get(method)
        if cached is not None and not refresh and not self._stale(method):
            return cached
        items = await self.paginate(method, key)
        if method in self._list_expiry:
            self._lists[method] = items
        else:
            self._lists.pop(method, None)
        return items

    async def list_resources(self, *, refresh: bool = False) -> list[MCPResource]:
        raw = await self._listing("resources/list", "resources", refresh)
        return [MCPResource.from_wire(r) for r in raw]

    async def list_resource_templates(self, *, refresh: bool = False) -> list[MCPResourceTemplate]:
        raw = await self._listing("resources/templates/list", "resourceTemplates", refresh)
        return [MCPResourceTemplate.from_wire(r) for r in raw]

    async def read_resource(self, uri: str) -> list[ResourceContent]:
        result = await self.request("resources/read", {"uri": uri})
        contents = result.get("contents")
        return (
            [resource_from_wire(c) for c in contents if isinstance(c, dict)]
            if isinstance(contents, list)
            else []
        )

    async def subscribe_resource(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self, *, refresh: bool = False) -> list[MCPPrompt]:
        raw = await self._listing("prompts/list", "prompts", refresh)
        return [MCPPrompt.from_wire(p) for p in raw]

    async def get_prompt(self, name: str, args: dict[str, str] | None = None) -> MCPPromptResult:
        params: dict[str, Any] = {"name": name}
        if args:
            params["arguments"] = {k: str(v) for k, v in args.items()}
        result = await self.request("prompts/get", params)
        messages = [
            MCPPromptMessage(
                role=str(m.get("role", "user")), content=content_from_wire(m.get("content"))
            )
            for m in result.get("messages") or []
            if isinstance(m, dict)
        ]
        description = result.get("description")
        return MCPPromptResult(messages, description if isinstance(description, str) else None)

    async def complete(
        self,
        ref: dict[str, Any],
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
    ) -> list[str]:
        """Completion values for one argument of a prompt (`{"type": "ref/prompt", "name"}`) or
        resource template (`{"type": "ref/resource", "uri"}`)."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        result = await self.request("completion/complete", params)
        completion = result.get("completion")
        values = completion.get("values") if isinstance(completion, dict) else None
        return [str(v) for v in values] if isinstance(values, list) else []

    async def set_logging_level(self, level: str) -> None:
        """Ask for server log messages at `level` and above (they go to Python logging)."""
        if level not in LOG_LEVELS:
            raise ValueError(f"logging level must be one of {sorted(LOG_LEVELS)}, not {level!r}")
        self._log_level = level
        if not self._require().modern:
            await self.request("logging/setLevel", {"level": level})

    async def ping(self) -> None:
        await self.request("ping")
