"""The MCP server toolkit: `MCPServer`, its decorators, result helpers and the call context.

Importing this package is cheap (no pydantic, starlette or uvicorn): a stdio server's cold start
is the time to `initialize`, and heavy pieces load only when a client needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "EventStore": "toolweave.mcp.server.event_store",
    "InMemoryEventStore": "toolweave.mcp.server.event_store",
    "MCPServer": "toolweave.mcp.server.app",
    "ResourceCatalog": "toolweave.mcp.server._catalog",
    "ServedSkill": "toolweave.mcp.server.skills",
    "SkillFile": "toolweave.mcp.server.skills",
    "PostgresChangeRelay": "toolweave.mcp.server.postgres_events",
    "PostgresEventStore": "toolweave.mcp.server.postgres_events",
    "PostgresMCPSessionStore": "toolweave.mcp.server.postgres_sessions",
    "PostgresSpentStates": "toolweave.mcp.server.postgres_states",
    "Context": "toolweave.mcp.server.context",
    "is_probe": "toolweave.mcp.server.context",
    "error_result": "toolweave.mcp.server.results",
    "image_result": "toolweave.mcp.server.results",
    "probe_result": "toolweave.mcp.server.results",
    "text_result": "toolweave.mcp.server.results",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.mcp.server._catalog import ResourceCatalog
    from toolweave.mcp.server.app import MCPServer
    from toolweave.mcp.server.context import Context, is_probe
    from toolweave.mcp.server.event_store import EventStore, InMemoryEventStore
    from toolweave.mcp.server.postgres_events import PostgresChangeRelay, PostgresEventStore
    from toolweave.mcp.server.postgres_sessions import PostgresMCPSessionStore
    from toolweave.mcp.server.postgres_states import PostgresSpentStates
    from toolweave.mcp.server.results import error_result, image_result, probe_result, text_result
    from toolweave.mcp.server.skills import ServedSkill, SkillFile

__all__ = [
    "Context",
    "EventStore",
    "InMemoryEventStore",
    "MCPServer",
    "PostgresChangeRelay",
    "PostgresEventStore",
    "PostgresMCPSessionStore",
    "PostgresSpentStates",
    "ResourceCatalog",
    "ServedSkill",
    "SkillFile",
    "error_result",
    "image_result",
    "is_probe",
    "probe_result",
    "text_result",
]
