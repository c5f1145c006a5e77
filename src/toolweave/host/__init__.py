"""The tool host behind `toolweave serve`: configured capability providers as one MCP server.

Providers (memory, the knowledge base, notes, skills, the built-ins and the demo tools)
contribute tools; downstream MCP servers from `[mcpServers]` are proxied as a gateway; the host
policy governs every call. See docs/serve.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "GovernedTool": "toolweave.host.governed",
    "ToolHost": "toolweave.host.app",
    "HostConfig": "toolweave.host.config",
    "PolicySection": "toolweave.host.config",
    "ServeSection": "toolweave.host.config",
    "load_host_config": "toolweave.host.config",
    "parse_config": "toolweave.host.config",
    "PROVIDERS": "toolweave.host.providers.base",
    "CapabilityProvider": "toolweave.host.providers.base",
    "load_provider": "toolweave.host.providers.base",
    "DemoProvider": "toolweave.host.providers.demo",
    "SECTIONS": "toolweave.host.sections",
    "Section": "toolweave.host.sections",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.host.app import ToolHost
    from toolweave.host.config import (
        HostConfig,
        PolicySection,
        ServeSection,
        load_host_config,
        parse_config,
    )
    from toolweave.host.governed import GovernedTool
    from toolweave.host.providers.base import PROVIDERS, CapabilityProvider, load_provider
    from toolweave.host.providers.demo import DemoProvider
    from toolweave.host.sections import SECTIONS, Section

__all__ = [
    "PROVIDERS",
    "SECTIONS",
    "CapabilityProvider",
    "DemoProvider",
    "GovernedTool",
    "HostConfig",
    "PolicySection",
    "Section",
    "ServeSection",
    "ToolHost",
    "load_host_config",
    "load_provider",
    "parse_config",
]
