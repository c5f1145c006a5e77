"""The MCP client: `MCPClient`, its stdio and Streamable HTTP transports, OAuth and models.

Laid out as the official SDK's `mcp.client`. It builds on `toolweave.mcp.shared` and never on
the server toolkit; the agent-facing layer (`toolweave.mcp.toolset.bridge`, `manager`, `lazy`,
`self_tools`) builds on it. httpx loads only when an HTTP transport or OAuth is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "MCPClient": "toolweave.mcp.client.client",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.mcp.client.client import MCPClient

__all__ = ["MCPClient"]
