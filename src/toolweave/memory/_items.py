"""Building one memory from a caller's arguments, checked field by field before it is stored.

Kept apart from `MemoryManager` so the checks every write path shares (`add`, `add_many`, the
tool) read as one function.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from toolweave.memory import _codec
from toolweave.memory.errors import MemoryArgumentError
from toolweave.memory.graph import extract_relations, parse_relations
from toolweave.memory.types import (
    MemoryItem,
    check_content,
    check_importance,
    check_memory_type,
    to_datetime,
)


def new_item(
    user_id: str,
    content: str,
    memory_type: str = "working",
    importance: float = 0.5,
    metadata: Mapping[str, Any] | None = None,
    timestamp: datetime | float | str | None = None,
    relations: Iterable[Any] | None = None,
    file_path: str | None = None,
    modality: str | None = None,
) -> MemoryItem:
    """A validated, not yet stored memory of `user_id`: content, type, importance, metadata,
    relations (semantic only; extracted from the content when none are given) and, for
    perceptual memories, the file and modality."""
    check_content(content)
    kind = check_memory_type(memory_type)
    meta = _codec.check_metadata(dict(metadata) if metadata is not None else None)
    if file_path is not None or modality is not None:
        if kind != "perceptual":
            raise MemoryArgumentError(
                f"file_path and modality belong to perceptual memories, not {kind!r}"
            )
        meta["modality"] = _codec.check_modality(modality or _codec.infer_modality(file_path or ""))
        if file_path is not None:
            meta["file_path"] = str(file_path)
    elif kind == "perceptual":
        meta.setdefault("modality", "text")
    parsed = parse_relations(relations or [])
    if parsed and kind != "semantic":
        raise MemoryArgumentError(f"relations belong to semantic memories, not {kind!r}")
    if kind == "semantic" and not parsed:
        parsed = extract_relations(content)
    return MemoryItem(
        id=_codec.new_id(),
        content=content,
        memory_type=kind,
        importance=check_importance(importance),
        timestamp=to_datetime(timestamp),
        metadata=meta,
        user_id=user_id,
        relations=parsed,
    )
