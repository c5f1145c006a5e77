"""MCP for toolweave: one shared core, the client, the agent-facing toolset and the server toolkit.

Laid out in layers, each importing only the ones before it: `shared` (JSON-RPC, errors, protocol
versions, `_meta` and probe keys, URI templates), `client` (client, transports, OAuth, models,
and the multi-server `MCPManager` with its `mcpServers` config), `toolset` (the agent-facing
tools: `bridge` turns a server's tools into `Tool`s, `lazy` loads them on demand, `self_tools`
lets the model manage servers) and `server` (the toolkit and its in-memory test client). The
gateway's republishing of downstream servers lives in the host (`host/providers/proxy.py`).

The official SDK is a test oracle only; nothing here imports it. Names load on first use
(PEP 562) and must stay that way: an MCP stdio server built on `toolweave.mcp.server` imports
this package, and its cold start (spawn to `initialize` answer) must not pay for the client,
httpx or pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "MCPTool": "toolset.bridge",
    "PermissionPatterns": "toolset.bridge",
    "as_tools": "toolset.bridge",
    "MCPClient": "client",
    "JSONRPCError": "shared.errors",
    "MCPConnectionClosed": "shared.errors",
    "MCPError": "shared.errors",
    "MCPTimeout": "shared.errors",
    "lazy_tools": "toolset.lazy",
    "MCPManager": "client.manager",
    "ClientCredentialsProvider": "client.auth",
    "CrossAppAccessProvider": "client.auth",
    "JWTBearerProvider": "client.auth",
    "PrivateKeyJWTProvider": "client.auth",
    "OAuthClientProvider": "client.auth",
    "OAuthError": "shared.errors",
    "headless_redirect": "client.auth",
    "ServerConfig": "client.config",
    "ServerState": "client.servers",
    "load_config": "client.config",
    "MCPPrompt": "client.models",
    "MCPPromptMessage": "client.models",
    "MCPPromptResult": "client.models",
    "MCPResource": "client.models",
    "MCPResourceTemplate": "client.models",
    "MCPToolInfo": "client.models",
    "elicitation_defaults": "client._callbacks",
    "ServerInfo": "client.protocol",
    "self_management_tools": "toolset.self_tools",
    "Context": "server",
    "MCPServer": "server",
    "error_result": "server",
    "image_result": "server",
    "is_probe": "server",
    "probe_result": "server",
    "text_result": "server",
    "EventStore": "server",
    "InMemoryEventStore": "server",
}

if TYPE_CHECKING:
    from toolweave.mcp.client import MCPClient
    from toolweave.mcp.client._callbacks import elicitation_defaults
    from toolweave.mcp.client.auth import (
        ClientCredentialsProvider,
        CrossAppAccessProvider,
        JWTBearerProvider,
        OAuthClientProvider,
        PrivateKeyJWTProvider,
        headless_redirect,
    )
    from toolweave.mcp.client.config import ServerConfig, load_config
    from toolweave.mcp.client.manager import MCPManager
    from toolweave.mcp.client.models import (
        MCPPrompt,
        MCPPromptMessage,
        MCPPromptResult,
        MCPResource,
        MCPResourceTemplate,
        MCPToolInfo,
    )
    from toolweave.mcp.client.protocol import ServerInfo
    from toolweave.mcp.client.servers import ServerState
    from toolweave.mcp.server import (
        Context,
        EventStore,
        InMemoryEventStore,
        MCPServer,
        error_result,
        image_result,
        is_probe,
        probe_result,
        text_result,
    )
    from toolweave.mcp.shared.errors import (
        JSONRPCError,
        MCPConnectionClosed,
        MCPError,
        MCPTimeout,
        OAuthError,
    )
    from toolweave.mcp.toolset.bridge import MCPTool, PermissionPatterns, as_tools
    from toolweave.mcp.toolset.lazy import lazy_tools
    from toolweave.mcp.toolset.self_tools import self_management_tools

__all__ = [
    "ClientCredentialsProvider",
    "Context",
    "CrossAppAccessProvider",
    "EventStore",
    "InMemoryEventStore",
    "JSONRPCError",
    "JWTBearerProvider",
    "MCPClient",
    "MCPConnectionClosed",
    "MCPError",
    "MCPManager",
    "MCPPrompt",
    "MCPPromptMessage",
    "MCPPromptResult",
    "MCPResource",
    "MCPResourceTemplate",
    "MCPServer",
    "MCPTimeout",
    "MCPTool",
    "MCPToolInfo",
    "OAuthClientProvider",
    "OAuthError",
    "PermissionPatterns",
    "PrivateKeyJWTProvider",
    "ServerConfig",
    "ServerInfo",
    "ServerState",
    "as_tools",
    "elicitation_defaults",
    "error_result",
    "headless_redirect",
    "image_result",
    "is_probe",
    "lazy_tools",
    "load_config",
    "probe_result",
    "self_management_tools",
    "text_result",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
