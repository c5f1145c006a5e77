"""Forgetting and consolidation: the maintenance a memory needs to stay useful as it grows.

Both are one transaction each: forgetting deletes from every index at once; consolidation
writes the longer-lived copies and deletes the originals together, so a failure loses nothing.
`MemoryManager.forget` and `MemoryManager.consolidate` are these functions.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from toolweave.memory import _codec
from toolweave.memory.errors import MemoryArgumentError
from toolweave.memory.graph import extract_relations
from toolweave.memory.types import (
    FORGET_STRATEGIES,
    PERSISTENT_TYPES,
    MemoryItem,
    check_importance,
    check_memory_type,
    utc_now,
)

if TYPE_CHECKING:
    from toolweave.memory.manager import MemoryManager

CONSOLIDATION_BOOST = 1.1
"""Importance of a consolidated memory: the original's times this, capped at 1."""


async def forget_memories(
    m: MemoryManager,
    strategy: str = "importance_based",
    threshold: float = 0.1,
    max_age_days: float = 30,
) -> int:
    """Delete memories by importance (< threshold), age (> max_age_days) or capacity
    (beyond `max_memories`, least important first); returns how many, one transaction."""
    if strategy not in FORGET_STRATEGIES:
        raise MemoryArgumentError(
            f"strategy must be one of {list(FORGET_STRATEGIES)}, got {strategy!r}"
        )
    check_importance(threshold, field="threshold")
    if (
        isinstance(max_age_days, bool)
        or not isinstance(max_age_days, int | float)
        or max_age_days < 0
    ):
        raise MemoryArgumentError(f"max_age_days must be a number >= 0, got {max_age_days!r}")
    working = m.working.items()
    if strategy == "importance_based":
        doomed = await m.index.find(m.user_id, {"importance": {"lt": threshold}})
        gone = [i for i in working if i.importance < threshold]
    elif strategy == "time_based":
        cutoff = utc_now() - timedelta(days=max_age_days)
        doomed = await m.index.find(m.user_id, {"timestamp": {"lt": cutoff.timestamp()}})
        gone = [i for i in working if i.timestamp < cutoff]
    else:
        excess = await m.index.count(m.user_id) - m.max_memories
        doomed = (
            await m.index.find(m.user_id, limit=excess, order_by="importance") if excess > 0 else []
        )
        gone = []
    if doomed:
        await m.index.write(delete=[(m.user_id, r.id) for r in doomed])
    for item in gone:
        m.working.remove(item.id)
    m.update_graph(removed=[record.id for record in doomed])
    return len(doomed) + len(gone)


async def consolidate_memories(
    m: MemoryManager,
    from_type: str = "working",
    to_type: str = "episodic",
    importance_threshold: float = 0.7,
) -> int:
    """Move memories of importance >= threshold from one type to a longer-lived one.

    The copies are written and the originals deleted in one transaction (a persisted memory
    keeps its id and changes type in place); importance grows by `CONSOLIDATION_BOOST`,
    capped at 1. Returns how many memories moved.
    """
    source = check_memory_type(from_type, field="from_type")
    target = check_memory_type(to_type, field="to_type")
    if target == "working" or source == target:
        raise MemoryArgumentError(
            f"consolidate moves memories into a different persistent type"
            f" ({list(PERSISTENT_TYPES)}); got from_type={source!r}, to_type={target!r}"
        )
    check_importance(importance_threshold, field="importance_threshold")
    if source == "working":
        chosen = [i for i in m.working.items() if i.importance >= importance_threshold]
    else:
        where = {
            "memory_type": source,
            "importance": {"gte": importance_threshold},
            **_codec.validity(None),
        }
        chosen = [_codec.to_item(r) for r in await m.index.find(m.user_id, where)]
    if not chosen:
        return 0
    existing = await m.existing_by_hash({_codec.content_hash(i.content) for i in chosen})
    moved: list[MemoryItem] = []
    duplicates: list[MemoryItem] = []
    for item in chosen:
        if (target, _codec.content_hash(item.content)) in existing:
            duplicates.append(item)
            continue
        item.memory_type = target
        item.importance = min(1.0, item.importance * CONSOLIDATION_BOOST)
        if target == "semantic":
            item.relations = item.relations or extract_relations(item.content)
        elif source == "semantic":
            item.relations = []
        moved.append(item)
    deletes = [] if source == "working" else [(m.user_id, i.id) for i in duplicates]
    await m.index.write([_codec.to_record(i) for i in moved], delete=deletes)
    if source == "working":
        for item in [*moved, *duplicates]:
            m.working.remove(item.id)
    m.update_graph(
        removed=[item.id for item in [*moved, *duplicates]],
        added=[item for item in moved if item.memory_type == "semantic"],
    )
    return len(moved) + len(duplicates)
