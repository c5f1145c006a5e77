"""The MCP server toolkit: `MCPServer`, its decorators, result helpers and the call context.

Importing this package is cheap (no pydantic, starlette or uvicorn): a stdio server's cold start
is the time to `initialize`, and heavy pieces load only when a client needs them.
"""

from __future__ import annotations

from toolweave.mcp.server.app import MCPServer
from toolweave.mcp.server.context import Context, is_probe
from toolweave.mcp.server.event_store import EventStore, InMemoryEventStore
from toolweave.mcp.server.results import error_result, image_result, probe_result, text_result

__all__ = [
    "Context",
    "EventStore",
    "InMemoryEventStore",
    "MCPServer",
    "error_result",
    "image_result",
    "is_probe",
    "probe_result",
    "text_result",
]
