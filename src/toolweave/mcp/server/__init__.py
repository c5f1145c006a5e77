"""The MCP server toolkit: `McpServer`, its decorators, result helpers and the call context.

Importing this package is cheap (no pydantic, starlette or uvicorn): a stdio server's cold start
is the time to `initialize`, and heavy pieces load only when a client needs them.
"""

from __future__ import annotations

from ._sse import EventStore, InMemoryEventStore
from .app import McpServer
from .context import Context, is_probe
from .results import error_result, image_result, probe_result, text_result
from .watch import ConfigWatcher, watch_config

__all__ = [
    "ConfigWatcher",
    "Context",
    "EventStore",
    "InMemoryEventStore",
    "McpServer",
    "error_result",
    "image_result",
    "is_probe",
    "probe_result",
    "text_result",
    "watch_config",
]
