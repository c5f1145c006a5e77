"""The tool host behind `toolweave serve`: configured capability providers as one MCP server.

Providers (memory, the knowledge base, notes, skills, the built-ins and the demo tools)
contribute tools; downstream MCP servers from `[mcpServers]` are proxied as a gateway; the host
policy governs every call. See docs/serve.md.
"""

from __future__ import annotations

from toolweave.host.app import GovernedTool, ToolHost
from toolweave.host.config import (
    HostConfig,
    PolicySection,
    ServeSection,
    load_host_config,
    parse_config,
)
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
