"""MCP for toolweave: our own JSON-RPC core, the client, the manager and the server toolkit.

The official SDK is a test oracle only; nothing here imports it. Names load on first use
(PEP 562) and must stay that way: an MCP stdio server built on `toolweave.mcp.server` imports
this package, and its cold start (spawn to `initialize` answer) must not pay for the client,
httpx or pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "McpTool": "bridge",
    "PermissionPatterns": "bridge",
    "as_tools": "bridge",
    "McpClient": "client",
    "McpConnectionClosed": "errors",
    "McpError": "errors",
    "McpTimeout": "errors",
    "lazy_tools": "lazy",
    "McpManager": "manager",
    "ClientCredentialsProvider": "_oauth",
    "OAuthClientProvider": "_oauth",
    "OAuthError": "_oauth",
    "headless_redirect": "_oauth",
    "ServerConfig": "manager",
    "ServerState": "manager",
    "load_config": "manager",
    "McpPrompt": "models",
    "McpPromptMessage": "models",
    "McpPromptResult": "models",
    "McpResource": "models",
    "McpResourceTemplate": "models",
    "McpToolInfo": "models",
    "ServerInfo": "protocol",
    "self_management_tools": "self_tools",
    "Context": "server",
    "McpServer": "server",
    "error_result": "server",
    "image_result": "server",
    "is_probe": "server",
    "probe_result": "server",
    "text_result": "server",
    "watch_config": "server",
    "ConfigWatcher": "server",
    "EventStore": "server",
    "InMemoryEventStore": "server",
}

if TYPE_CHECKING:
    from ._oauth import (
        ClientCredentialsProvider,
        OAuthClientProvider,
        OAuthError,
        headless_redirect,
    )
    from .bridge import McpTool, PermissionPatterns, as_tools
    from .client import McpClient
    from .errors import McpConnectionClosed, McpError, McpTimeout
    from .lazy import lazy_tools
    from .manager import McpManager, ServerConfig, ServerState, load_config
    from .models import (
        McpPrompt,
        McpPromptMessage,
        McpPromptResult,
        McpResource,
        McpResourceTemplate,
        McpToolInfo,
    )
    from .protocol import ServerInfo
    from .self_tools import self_management_tools
    from .server import (
        ConfigWatcher,
        Context,
        EventStore,
        InMemoryEventStore,
        McpServer,
        error_result,
        image_result,
        is_probe,
        probe_result,
        text_result,
        watch_config,
    )

__all__ = [
    "ClientCredentialsProvider",
    "ConfigWatcher",
    "Context",
    "EventStore",
    "InMemoryEventStore",
    "McpClient",
    "McpConnectionClosed",
    "McpError",
    "McpManager",
    "McpPrompt",
    "McpPromptMessage",
    "McpPromptResult",
    "McpResource",
    "McpResourceTemplate",
    "McpServer",
    "McpTimeout",
    "McpTool",
    "McpToolInfo",
    "OAuthClientProvider",
    "OAuthError",
    "PermissionPatterns",
    "ServerConfig",
    "ServerInfo",
    "ServerState",
    "as_tools",
    "error_result",
    "headless_redirect",
    "image_result",
    "is_probe",
    "lazy_tools",
    "load_config",
    "probe_result",
    "self_management_tools",
    "text_result",
    "watch_config",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolweave.mcp' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
