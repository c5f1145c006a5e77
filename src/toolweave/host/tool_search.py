"""`[serve] tool_search = true`: serve `tool_search` and `tool_call` instead of every tool.

A client connected to a host with hundreds of proxied tools otherwise gets every definition in
every request of its model. In search mode the host lists the pinned tools
(`[serve].tool_search_pinned`), `tool_search(query, k)` (ranks the published tools,
`ToolRegistry.search`, and returns each found tool's name, description and input schema) and
`tool_call(name, arguments)` (calls a published tool by name). The list never changes as tools
are found, so it works for clients that never refresh it, 2025 and 2026 alike.

Nothing is bypassed: only published tools are found or called (what the host policy refuses
or a rule denies outright is never published), and `tool_call` runs the tool's `GovernedTool`,
so accounting, rules, hooks and approvals (asked of this client) apply as to a listed call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolweave.tools.base import Tool
from toolweave.tools.context import ToolContext
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.registry import ToolRegistry
from toolweave.tools.result import TextContent, ToolResult
from toolweave.tools.search_mode import TOOL_SEARCH, ToolSearch

TOOL_CALL = "tool_call"
"""The entry point that calls a found tool by name."""


def search_tools(
    settings: ToolSearch, registry: ToolRegistry, published: Callable[[str], Tool | None]
) -> list[Tool]:
    """`tool_search` over `registry` (the published tools) and `tool_call` through
    `published` (a name's governed tool, or None)."""

    async def tool_search(query: str, k: int | None = None) -> ToolResult:
        """Find tools for a task; call a found tool with tool_call(name, arguments).

        Describe what you want to do in words ("send an email", "list open issues"). Each
        found tool comes with its description and the JSON Schema of its arguments.

        Args:
            query: What the tool should do.
            k: How many tools to return (default: a few).
        """
        matches = await registry.search(query, settings.size(k))
        found: list[dict[str, Any]] = []
        for match in matches:
            tool = registry.get(match.name)
            if tool is not None:
                schema = tool.parameters
                found.append(
                    {"name": tool.name, "description": tool.description, "inputSchema": schema}
                )
        if not found:
            text = f"No tool matches {query!r}; search again with other words."
        else:
            lines = [f"Found {len(found)} tool(s); call one with tool_call(name, arguments):"]
            lines.extend(f"- {t['name']}: {' '.join(t['description'].split())}" for t in found)
            text = "\n".join(lines)
        return ToolResult([TextContent(text)], structured={"tools": found})

    async def tool_call(name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call a tool tool_search found, by its name, with its arguments.

        Args:
            name: The tool's name, as tool_search returned it.
            arguments: The tool's arguments, as its inputSchema describes them.
        """
        tool = published(name)
        if tool is None or name in (TOOL_SEARCH, TOOL_CALL):
            return ToolResult.error(
                f"no tool named {name!r} is served; call tool_search to find the right name"
            )
        return await tool.execute(arguments, ctx)

    return [
        FunctionTool(tool_search, read_only=True, idempotent=True, tags=["search"]),
        FunctionTool(tool_call, open_world=True, tags=["search"]),
    ]
