"""How a `MemoryItem` is laid out as an index `Record`, and back.

The payload keeps what filters need at the top level (type, importance, timestamps, validity,
modality, the session that made it, content hash), the user's metadata under `metadata`, and the
semantic memory's relations under `relations`. A current fact has `valid_to == FOREVER`, so
"current only" is one indexed equality and `as_of=` a pair of range filters, on every backend.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
import random
import time
from datetime import datetime
from pathlib import PurePath
from typing import Any

from toolweave.memory.errors import MemoryArgumentError
from toolweave.memory.types import MODALITIES, MemoryItem, Modality, Relation, to_datetime
from toolweave.storage.retrieval.index import Record, holds_nul

FOREVER = 253402300799.0
"""`valid_to` of a current fact: 9999-12-31T23:59:59Z as epoch seconds."""
INDEXED_FIELDS = ("content_hash", "memory_type")


def content_hash(content: str) -> str:
    """Identical content, up to surrounding and repeated whitespace, hashes the same."""
    return hashlib.sha256(" ".join(content.split()).encode()).hexdigest()


_ID_BITS = random.Random(os.urandom(16))
"""The random bits of memory ids: a generator of their own, seeded from the OS (a caller's
`random.seed()` never makes two ids alike) and seeded again in a forked child."""
os.register_at_fork(after_in_child=lambda: _ID_BITS.seed(os.urandom(16)))


def new_id() -> str:
    """A UUIDv7 in hex: time-ordered, so new rows append to the id index instead of landing
    at random places in it (which costs a page write per row in a large store).

    Its 74 random bits need to be unique, not secret (a memory is reached through its user's
    collection, never by knowing its id), so they come from `_ID_BITS` without the system call
    `os.urandom` makes per id, which lets go of the GIL and, beside a busy thread, waits up to
    5 ms to take it back."""
    value = (time.time_ns() // 1_000_000) << 80 | _ID_BITS.getrandbits(80)
    value = value & ~(0xF << 76) | 0x7 << 76  # version 7
    value = value & ~(0x3 << 62) | 0x2 << 62  # RFC 9562 variant
    return f"{value:032x}"


def infer_modality(file_path: str) -> Modality:
    kind = (mimetypes.guess_type(PurePath(file_path).name)[0] or "").split("/")[0]
    return kind if kind in MODALITIES else "text"


def check_modality(value: str) -> Modality:
    if value not in MODALITIES:
        raise MemoryArgumentError(f"modality must be one of {list(MODALITIES)}, got {value!r}")
    return value


def check_metadata(metadata: Any) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise MemoryArgumentError(f"metadata must be an object with string keys, got {metadata!r}")
    try:
        encoded = json.dumps(metadata)
    except (TypeError, ValueError) as exc:
        raise MemoryArgumentError(f"metadata must be JSON-serialisable: {exc}") from None
    if holds_nul(encoded):
        raise MemoryArgumentError("metadata holds a NUL character (\\x00); remove it")
    return dict(metadata)


def check_session_id(value: Any) -> str | None:
    """A session id to filter by: None, or a non-empty string without NUL."""
    if value is None:
        return None
    if not isinstance(value, str) or not value or holds_nul(value):
        raise MemoryArgumentError(f"session_id must be a non-empty string, got {value!r}")
    return value


def to_record(item: MemoryItem, hashed: str | None = None) -> Record:
    """The item as an index record; `hashed` is its `content_hash` if already computed."""
    valid_to = item.valid_to.timestamp() if item.valid_to else FOREVER
    payload: dict[str, Any] = {
        "memory_type": item.memory_type,
        "importance": item.importance,
        "timestamp": item.timestamp.timestamp(),
        "valid_from": item.timestamp.timestamp(),
        "valid_to": valid_to,
        "superseded_by": item.superseded_by,
        "content_hash": hashed or content_hash(item.content),
        "metadata": item.metadata,
        "relations": [r.as_list() for r in item.relations],
        "modality": item.metadata.get("modality"),
        # Top level so `search(session_id=...)` is one indexed filter on every backend.
        "session_id": item.metadata.get("session_id"),
    }
    return Record(item.id, item.content, payload, item.user_id)


def to_item(record: Record) -> MemoryItem:
    p = record.payload
    valid_to = None if p.get("valid_to", FOREVER) >= FOREVER else to_datetime(p["valid_to"])
    return MemoryItem(
        id=record.id,
        content=record.text,
        memory_type=p["memory_type"],
        importance=float(p["importance"]),
        timestamp=to_datetime(p["timestamp"]),
        metadata=dict(p.get("metadata") or {}),
        user_id=record.collection,
        relations=[Relation(s, r, o, record.id) for s, r, o in p.get("relations") or []],
        valid_to=valid_to,
        superseded_by=p.get("superseded_by"),
    )


def validity(as_of: datetime | None) -> dict[str, Any]:
    """The filter for facts valid now (`as_of=None`) or at `as_of`."""
    if as_of is None:
        return {"valid_to": FOREVER}
    moment = as_of.timestamp()
    return {"valid_from": {"lte": moment}, "valid_to": {"gt": moment}}
