"""The MCP client: `MCPClient`, its stdio and Streamable HTTP transports, OAuth and models.

Laid out as the official SDK's `mcp.client`. It builds on `toolweave.mcp.shared` and never on
the server toolkit; the agent-facing layer (`toolweave.mcp.bridge`, `manager`, `lazy`,
`self_tools`) builds on it. httpx loads only when an HTTP transport or OAuth is used.
"""

from __future__ import annotations

from toolweave.mcp.client.client import MCPClient

__all__ = ["MCPClient"]
