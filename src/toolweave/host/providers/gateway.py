"""The gateway provider: downstream MCP servers from `[mcpServers]`, proxied under prefixed names.

Discovery is lazy: nothing is spawned or dialled until a client first lists or calls tools, and
then every server connects concurrently; the first listing waits at most
`[serve].connect_deadline` seconds, so one silent server never blocks the others or the local
tools: a late server's tools are added when it connects. A server that crashes has its tools
withdrawn and is reconnected with backoff, then republished. Tools are published as
`<server>__<tool>` (the `MCPManager` naming) and carry the custom permission `mcp:<server>`, so
`[serve.policy]` can allow or deny a whole server before any call is forwarded. Its resources,
resource templates, prompts and completions are proxied too (`catalog`), under the same names
and the same policy. Later changes downstream (a `tools/list_changed`, a reconnect) reach the
host through `watch`, which mirrors the manager's registry updates. Elicitations a downstream
server asks during a call are put to the upstream client of that call
(`toolweave.mcp.client.upstream`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from toolweave.host.config import HostConfig
from toolweave.tools.base import Tool
from toolweave.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from toolweave.host.providers.proxy import ProxyCatalog

logger = logging.getLogger("toolweave.host.providers.gateway")


class GatewayProvider:
    """Proxies every server of `[mcpServers]` through one `MCPManager`."""

    name = "mcp"

    def __init__(self, config: HostConfig) -> None:
        from toolweave.mcp.client.manager import MCPManager

        self.config = config
        # Validated now (a config mistake stops `toolweave serve` at once), connected later.
        # A downstream server's elicitations go to the client whose call caused them; a call
        # waiting for a 2026 caller's next round is held (`max_held_calls`,
        # `max_held_calls_per_client`, `held_call_ttl`).
        self.manager: MCPManager = MCPManager.from_config(
            {"mcpServers": config.mcp_servers},
            workspace=config.workspace,
            client_options={
                "forward_questions": True,
                "max_held_calls": config.max_held_calls,
                "held_call_ttl": config.held_call_ttl,
                "max_held_calls_per_client": config.max_held_calls_per_client,
            },
        )

    def describe(self) -> str:
        names = ", ".join(sorted(self.config.mcp_servers))
        return f"downstream MCP servers as <server>__<tool>: {names}"

    async def tools(self) -> list[Tool]:
        """What is ready within `[serve].connect_deadline`; later servers arrive through
        `watch` (a `tools/list_changed` to clients). The manager logs each failure once."""
        if not self.manager.servers:
            return []
        await self.manager.start(deadline=self.config.connect_deadline)
        late = sorted(n for n, s in self.manager.servers.items() if s.connecting)
        if late:
            logger.warning(
                "downstream MCP server(s) %s not ready after %g s; their tools are added "
                "when they connect",
                ", ".join(late),
                self.config.connect_deadline,
            )
        return list(self.manager.tools())

    def catalog(
        self,
        allowed: Callable[[str], bool],
        *,
        ready: Callable[[], Awaitable[None]],
        on_change: Callable[[str], None],
    ) -> ProxyCatalog:
        """Downstream resources, templates, prompts and completions, behind the host policy
        (`allowed(server)`), for the host's server to answer beside its own; `ready` connects
        the servers first (the same lazy start a first tools/list makes); `on_change("resources"
        | "prompts")` is called when a downstream list may have changed."""
        from toolweave.host.providers.proxy import ProxyCatalog

        self.manager.catalog_listeners.append(on_change)
        return ProxyCatalog(self.manager, allowed, ready=ready)

    def watch(self, on_add: Callable[[Tool], None], on_remove: Callable[[str], None]) -> None:
        """Mirror later changes (a downstream `tools/list_changed`, a reconnect) to the host."""
        self.manager.attach(_Mirror(on_add, on_remove))

    async def close(self) -> None:
        await self.manager.close()


class _Mirror(ToolRegistry):
    """A registry the manager keeps in step; every change is forwarded to the host's server."""

    def __init__(self, on_add: Callable[[Tool], None], on_remove: Callable[[str], None]) -> None:
        super().__init__()
        self._on_add = on_add
        self._on_remove = on_remove

    def register(
        self,
        tool: Tool,
        *,
        tags: Iterable[str] | None = None,
        category: str | None = None,
        timeout: float | None = None,
    ) -> Tool:
        registered = super().register(tool, tags=tags, category=category, timeout=timeout)
        self._on_add(tool)
        return registered

    def unregister(self, name: str) -> Tool:
        tool = super().unregister(name)
        self._on_remove(name)
        return tool
