"""Long-term memory for agents: four memory types on embedded SQLite (or Postgres + Qdrant).

`MemoryManager` is the Python API, `MemoryTool` the one `memory` tool an agent or an MCP host
calls, `MemoryProvider` its `toolweave serve` provider. See docs/memory.md.
"""

from __future__ import annotations

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
    "MemoryTool",
    "MemoryType",
    "Relation",
    "WorkingMemory",
    "extract_relations",
]
