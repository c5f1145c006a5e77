"""Long-term memory for agents: four memory types on embedded SQLite (or Postgres + Qdrant).

`MemoryManager` is the Python API, `MemoryTool` the one `memory` tool an agent or an MCP host
calls, `MemoryProvider` its `toolweave serve` provider. See docs/memory.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "MemoryArgumentError": "toolweave.memory.errors",
    "EXCLUSIVE_PREDICATES": "toolweave.memory.graph",
    "KnowledgeGraph": "toolweave.memory.graph",
    "extract_relations": "toolweave.memory.graph",
    "CONSOLIDATION_BOOST": "toolweave.memory.maintenance",
    "DEFAULT_MAX_MEMORIES": "toolweave.memory.manager",
    "MemoryManager": "toolweave.memory.manager",
    "MemoryTool": "toolweave.memory.tool",
    "MemorySettings": "toolweave.memory.context",
    "MEMORY_TYPES": "toolweave.memory.types",
    "MemoryHit": "toolweave.memory.types",
    "MemoryItem": "toolweave.memory.types",
    "MemoryType": "toolweave.memory.types",
    "Relation": "toolweave.memory.types",
    "WorkingMemory": "toolweave.memory.working",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.memory.context import MemorySettings
    from toolweave.memory.errors import MemoryArgumentError
    from toolweave.memory.graph import EXCLUSIVE_PREDICATES, KnowledgeGraph, extract_relations
    from toolweave.memory.maintenance import CONSOLIDATION_BOOST
    from toolweave.memory.manager import DEFAULT_MAX_MEMORIES, MemoryManager
    from toolweave.memory.tool import MemoryTool
    from toolweave.memory.types import MEMORY_TYPES, MemoryHit, MemoryItem, MemoryType, Relation
    from toolweave.memory.working import WorkingMemory

__all__ = [
    "CONSOLIDATION_BOOST",
    "DEFAULT_MAX_MEMORIES",
    "EXCLUSIVE_PREDICATES",
    "MEMORY_TYPES",
    "KnowledgeGraph",
    "MemoryArgumentError",
    "MemoryHit",
    "MemoryItem",
    "MemoryManager",
    "MemorySettings",
    "MemoryTool",
    "MemoryType",
    "Relation",
    "WorkingMemory",
    "extract_relations",
]
