"""`stats()` and `summary()`: what a memory holds, as numbers and as a short text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolweave.memory import _codec
from toolweave.memory.types import MEMORY_TYPES, PERSISTENT_TYPES
from toolweave.storage.retrieval.index import embedding_health

if TYPE_CHECKING:
    from toolweave.memory.manager import MemoryManager


async def memory_stats(m: MemoryManager) -> dict[str, Any]:
    """Counts per type (current and superseded), the store and the embedder: `embedder` and
    `dim` are the ones the store's vectors were made with, `opened_with` the one given now;
    `embedding_warning` and `missing_vectors` while the embedder fails (`embedding_health`)."""
    types: dict[str, Any] = {
        "working": {
            "count": len(m.working),
            "capacity": m.working.capacity,
            "ttl_minutes": m.working.ttl_minutes,
        }
    }
    for kind in PERSISTENT_TYPES:
        total = await m.index.count(m.user_id, {"memory_type": kind})
        current = await m.index.count(m.user_id, {"memory_type": kind, **_codec.validity(None)})
        types[kind] = {"count": total, "current": current, "superseded": total - current}
    recorded = await m.index.recorded_embedder()
    embedder, dim = recorded or (m.embedder.name, m.index.guard.dim(None))
    return {
        "user_id": m.user_id,
        "total": sum(t["count"] for t in types.values()),
        "types": types,
        "store": type(m.index).__name__,
        "embedder": embedder,
        "dim": dim,
        "opened_with": m.embedder.name,
        **await embedding_health(m.index, m.user_id),
        "entities": len(await m.graph()),
    }


async def memory_summary(m: MemoryManager, per_type: int = 3) -> str:
    """A short text overview: counts, then the most important current memories per type."""
    stats = await memory_stats(m)
    lines = [f"Memory of user {m.user_id!r}: {stats['total']} memories"]
    for kind in MEMORY_TYPES:
        lines.append(f"- {kind}: {stats['types'][kind]['count']}")
        if kind == "working":
            top = sorted(m.working.items(), key=lambda i: -i.importance)[:per_type]
        else:
            where = {"memory_type": kind, **_codec.validity(None)}
            top = [
                _codec.to_item(r)
                for r in await m.index.find(
                    m.user_id, where, limit=per_type, order_by="importance", descending=True
                )
            ]
        lines.extend(f"    [{i.importance:.2f}] {i.content[:80]}" for i in top)
    return "\n".join(lines)
