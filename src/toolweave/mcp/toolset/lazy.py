"""Lazy two-phase loading: the model discovers MCP tools first and loads only what it needs.

Every tool definition is sent with every model request, and a few MCP servers easily bring
dozens of tools and tens of kilobytes of schemas. In lazy mode the model sees two small tools:
`mcp_discover` (read-only: servers and one-line tool descriptions) and `mcp_load` (puts chosen
tools into the session's registry overlay, where they stay for the rest of the session). The
shared registry and other sessions never change.

The session registry is the one bound with `lazy_tools(manager, registry=...)`, or else the
`ToolRegistry` the agent shares as `ctx.registry` (the session overlay) for each call.
"""

from __future__ import annotations

import contextlib
from typing import Any

from toolweave.mcp.client.servers import TOOL_SEPARATOR, ManagedServers
from toolweave.tools.base import Tool
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ExecutionFailed, ToolNotFound
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.registry import ToolRegistry
from toolweave.tools.result import ToolResult

_LINE = 100


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _LINE else line[: _LINE - 3] + "..."


def _session_registry(bound: ToolRegistry | None, ctx: ToolContext) -> ToolRegistry:
    registry = bound if bound is not None else ctx.registry
    if not isinstance(registry, ToolRegistry):
        raise ExecutionFailed(
            "mcp_load has no session registry to load into: bind one with "
            "lazy_tools(manager, registry=...) or run it inside an Agent, which shares the "
            "session registry as ctx.registry",
            tool="mcp_load",
            recoverable=False,
        )
    return registry


def lazy_tools(manager: ManagedServers, *, registry: ToolRegistry | None = None) -> list[Tool]:
    """`mcp_discover` and `mcp_load` for `manager`'s servers."""

    async def mcp_discover(server: str | None = None, query: str | None = None) -> str:
        """List the connected MCP servers and their tools with one-line descriptions.

        Call this before mcp_load. It has no side effects.

        Args:
            server: Only this server's tools (default: every server).
            query: Only tools whose name or description contains this word.
        """
        lines: list[str] = []
        for name, state in sorted(manager.servers.items()):
            if server is not None and name != server:
                continue
            if not state.connected:
                lines.append(f"{name}: unavailable ({state.error or 'not connected'})")
                continue
            tools = state.tools
            if query:
                word = query.lower()
                tools = [
                    t for t in tools if word in t.name.lower() or word in t.description.lower()
                ]
            lines.append(f"{name}: {len(tools)} tool(s)")
            lines.extend(f"- {t.name}: {_one_line(t.description)}" for t in tools)
        if not lines:
            known = ", ".join(sorted(manager.servers)) or "none"
            return f"No MCP server matches; configured servers: {known}."
        lines.append("Load the tools you need with mcp_load(tools=[...]).")
        return "\n".join(lines)

    async def mcp_load(tools: list[str], ctx: ToolContext) -> ToolResult:
        """Load MCP tools into this session so you can call them from the next step on.

        Args:
            tools: Tool names from mcp_discover (`server__tool`), or `server__*` for all
                tools of a server.
        """
        session = _session_registry(registry, ctx)
        loaded: list[str] = []
        already: list[str] = []
        unknown: list[str] = []
        for wanted in tools:
            if wanted.endswith("*"):
                prefix = wanted[:-1]
                server = prefix.removesuffix(TOOL_SEPARATOR)
                state = manager.servers.get(server)
                matches = [t for t in state.tools if t.name.startswith(prefix)] if state else []
            else:
                found = manager.find(wanted)
                matches = [found] if found is not None else []
            if not matches:
                unknown.append(wanted)
            for bridged in matches:
                if session.get(bridged.name) is bridged:
                    already.append(bridged.name)
                    continue
                with contextlib.suppress(ToolNotFound):  # a stale handle from before a reconnect
                    session.unregister(bridged.name)
                session.register(bridged)
                loaded.append(bridged.name)
        parts: list[str] = []
        if loaded:
            parts.append(f"Loaded: {', '.join(sorted(loaded))}.")
        if already:
            parts.append(f"Already loaded: {', '.join(sorted(already))}.")
        if unknown:
            parts.append(f"Unknown: {', '.join(unknown)}; call mcp_discover for the exact names.")
        return ToolResult.text_result(" ".join(parts), is_error=bool(unknown) and not loaded)

    discover: Any = FunctionTool(mcp_discover, read_only=True, idempotent=True, tags=["mcp"])
    load: Any = FunctionTool(mcp_load, read_only=False, destructive=False, tags=["mcp"])
    return [discover, load]
