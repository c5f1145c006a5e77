"""The servers a manager holds, as the toolset sees them: `ServerState`, `ManagedServers` and
the `<server>__<tool>` separator.

`MCPManager` (`client/manager.py`) owns connecting, reconnecting and bridging; the agent-facing
toolset (`toolset/lazy.py`, `toolset/self_tools.py`) and the gateway's republishing
(`host/providers/proxy.py`) read and change the servers through `ManagedServers` only, so none
of them imports the manager and the manager can hand itself to them (`model_tools`) without an
import cycle.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from toolweave.mcp.client.client import MCPClient
    from toolweave.mcp.client.config import ServerConfig
    from toolweave.mcp.toolset.bridge import MCPTool

TOOL_SEPARATOR = "__"
"""Between a server's prefix and its tool's name: `fs__read_file`."""


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


class ManagedServers(Protocol):
    """What the toolset reads and changes of a set of managed servers (`MCPManager` is one)."""

    @property
    def servers(self) -> dict[str, ServerState]: ...

    @property
    def config_path(self) -> Path | None: ...

    def find(self, name: str) -> MCPTool | None: ...

    async def add(self, config: ServerConfig) -> ServerState: ...

    async def remove(self, name: str) -> ServerConfig: ...

    async def reconnect(self, name: str, config: ServerConfig | None = None) -> ServerState: ...
