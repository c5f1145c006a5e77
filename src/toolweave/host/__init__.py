"""The tool host behind `toolweave serve`: configured capability providers as one MCP server.

Providers (the demo tools now; memory, knowledge base, notes, skills and built-ins as they land)
contribute tools; downstream MCP servers from `[mcpServers]` are proxied as a gateway; the host
policy governs every call. See docs/serve.md.
"""

from __future__ import annotations

from .app import GovernedTool, ToolHost
from .config import HostConfig, PolicyConfig, ServeSection, load_host_config, parse_config
from .providers import PROVIDERS, CapabilityProvider, DemoProvider, load_provider
from .sections import SECTIONS, Section

__all__ = [
    "PROVIDERS",
    "SECTIONS",
    "CapabilityProvider",
    "DemoProvider",
    "GovernedTool",
    "HostConfig",
    "PolicyConfig",
    "Section",
    "ServeSection",
    "ToolHost",
    "load_host_config",
    "load_provider",
    "parse_config",
]
