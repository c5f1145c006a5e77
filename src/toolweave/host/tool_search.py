"""`[serve] tool_search = true`: past a threshold, list a few tools and let clients search.

A client connected to a host with hundreds of proxied tools otherwise gets every definition in
every request of its model. In search mode, when more than `[serve].tool_search_threshold` tools
are published (30 by default, as an agent's `ToolSearch`), a client's tools/list shows the
pinned tools (`[serve].tool_search_pinned`), `tool_search(query, k)` (ranks the published tools,
`ToolRegistry.search`, and returns each found tool's name, description and input schema),
`tool_call(name, arguments)` (calls a published tool by name), and the tools its own searches
found. A search that finds new tools adds them to that client's list and announces it with
`notifications/tools/list_changed` (2025-era sessions, and 2026-07-28 `subscriptions/listen`
streams), so a client that refreshes calls a found tool directly; one that never refreshes calls
it through `tool_call`. A 2025-era client's list is its session's; a stateless 2026-07-28
client's is its principal's (the token it authenticated with; every unauthenticated client
shares one). At most `[serve].max_sessions` such lists are kept, the least recently used
dropped first. At or under the threshold every tool is listed and the two search tools are not.

Nothing is bypassed: only published tools are found or called (what the host policy refuses
or a rule denies outright is never published), and a found tool, called directly or through
`tool_call`, runs its `GovernedTool`, so accounting, rules, hooks and approvals (asked of this
client) apply as to any listed call. A list is only what a client is shown: a published tool is
callable by name whether or not its list shows it, exactly as it is without search mode.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from toolweave.mcp.server import Context
from toolweave.tools.base import Tool
from toolweave.tools.context import ToolContext
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.registry import ToolRegistry
from toolweave.tools.result import TextContent, ToolResult
from toolweave.tools.search_mode import TOOL_SEARCH, ToolSearch

TOOL_CALL = "tool_call"
"""The entry point that calls a found tool by name."""


SEARCH_TOOLS = frozenset([TOOL_SEARCH, TOOL_CALL])


class Client(Protocol):
    """What tells clients apart (an MCP server's `ServerSession` has it)."""

    @property
    def session_id(self) -> str | None: ...

    @property
    def principal(self) -> str | None: ...


def client_key(session_id: str | None, principal: str | None) -> str:
    """Whose found tools a list shows: a 2025-era session's own, else its principal's."""
    return session_id if session_id else f"principal:{principal or ''}"


class ServedSearch:
    """Which tools each client's tools/list shows in search mode (see the module docstring).
    `published` counts the published tools; `changed` announces a list change."""

    def __init__(
        self,
        settings: ToolSearch,
        published: Callable[[], int],
        changed: Callable[[], None],
        *,
        max_clients: int,
    ) -> None:
        self.settings = settings
        self._published = published
        self._changed = changed
        self._max_clients = max_clients
        self._pinned = frozenset(settings.always_load)
        self._found: OrderedDict[str, set[str]] = OrderedDict()

    def active(self) -> bool:
        return self.settings.active(self._published())

    def listed(self, session: Client, name: str) -> bool:
        """`MCPServer.tool_filter`: whether `session`'s tools/list shows `name`."""
        if not self.active():
            return name not in SEARCH_TOOLS
        if name in self._pinned or name in SEARCH_TOOLS:
            return True
        found = self._found.get(client_key(session.session_id, session.principal))
        return found is not None and name in found

    def found(self, ctx: ToolContext, names: Sequence[str]) -> None:
        """Add what a search found to the caller's list; announce it when that list grew."""
        principal = ctx.principal if isinstance(ctx, Context) else None
        key = client_key(ctx.session_id, principal)
        known = self._found.pop(key, set())
        self._found[key] = known  # the most recently used last
        new = set(names) - known - self._pinned - SEARCH_TOOLS
        while len(self._found) > self._max_clients:
            self._found.popitem(last=False)
        if new and self.active():
            known.update(new)
            self._changed()


def search_tools(
    served: ServedSearch, registry: ToolRegistry, published: Callable[[str], Tool | None]
) -> list[Tool]:
    """`tool_search` over `registry` (the published tools; what it finds joins the caller's
    list, `served`) and `tool_call` through `published` (a name's governed tool, or None)."""
    settings = served.settings

    async def tool_search(query: str, ctx: ToolContext, k: int | None = None) -> ToolResult:
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
        served.found(ctx, [t["name"] for t in found])
        if not found:
            text = f"No tool matches {query!r}; search again with other words."
        else:
            lines = [
                f"Found {len(found)} tool(s); call one by its name, or with "
                "tool_call(name, arguments) if your tool list does not show it:"
            ]
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
