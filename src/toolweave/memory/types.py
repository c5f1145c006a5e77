"""The public data of memory: items, hits with their explanation, relations, and errors."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from toolweave.memory.errors import MemoryArgumentError

MemoryType = Literal["working", "episodic", "semantic", "perceptual"]
MEMORY_TYPES: tuple[MemoryType, ...] = get_args(MemoryType)
PERSISTENT_TYPES: tuple[MemoryType, ...] = ("episodic", "semantic", "perceptual")
Modality = Literal["text", "image", "audio", "video"]
MODALITIES: tuple[Modality, ...] = get_args(Modality)
ForgetStrategy = Literal["importance_based", "time_based", "capacity_based"]
FORGET_STRATEGIES: tuple[ForgetStrategy, ...] = get_args(ForgetStrategy)


MAX_CONTENT_CHARS = 100_000
"""Longest memory content accepted, in characters, by `add`, `add_many` and `update` alike."""


def check_text(value: Any, field: str, limit: int, setting: str, fix: str) -> str:
    """`value` if it is a non-empty string of at most `limit` characters and no NUL (which no
    store keeps), else the error."""
    if not isinstance(value, str) or not value.strip():
        raise MemoryArgumentError(f"{field} must be a non-empty string")
    if "\x00" in value:
        raise MemoryArgumentError(f"{field} holds a NUL character (\\x00); remove it")
    if len(value) > limit:
        raise MemoryArgumentError(
            f"{field} has {len(value)} characters; the limit is {limit} ({setting}): {fix}"
        )
    return value


def check_content(content: Any) -> str:
    """`content` if it is a non-empty string within `MAX_CONTENT_CHARS`, else the error."""
    return check_text(
        content, "content", MAX_CONTENT_CHARS, "MAX_CONTENT_CHARS", "split it into several memories"
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Relation:
    """One edge of the knowledge graph, kept with the semantic memory it came from."""

    subject: str
    predicate: str
    object: str
    memory_id: str | None = None

    def as_list(self) -> list[str]:
        return [self.subject, self.predicate, self.object]


@dataclasses.dataclass(slots=True)
class MemoryItem:
    """One memory. `valid_to`/`superseded_by` are set once a newer fact replaced this one."""

    id: str
    content: str
    memory_type: MemoryType
    importance: float
    timestamp: datetime
    metadata: dict[str, Any]
    user_id: str
    relations: list[Relation] = dataclasses.field(default_factory=list)
    valid_to: datetime | None = None
    superseded_by: str | None = None

    @property
    def current(self) -> bool:
        return self.valid_to is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "memory_type": self.memory_type,
            "importance": round(self.importance, 4),
            "timestamp": self.timestamp.isoformat(),
            "metadata": self.metadata,
            "user_id": self.user_id,
            "relations": [r.as_list() for r in self.relations],
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "superseded_by": self.superseded_by,
        }


@dataclasses.dataclass(slots=True)
class MemoryHit:
    """A search result: the item, its final score and, with `explain=True`, why."""

    item: MemoryItem
    score: float
    explanation: dict[str, Any] | None = None


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_datetime(
    value: datetime | float | int | str | None, *, field: str = "timestamp"
) -> datetime:
    """A timezone-aware UTC datetime from a datetime, epoch seconds or an ISO 8601 string."""
    if value is None:
        return utc_now()
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str):
        try:
            return to_datetime(datetime.fromisoformat(value))
        except ValueError:
            pass
    raise MemoryArgumentError(
        f"{field} must be a datetime, epoch seconds or an ISO 8601 string"
        f" like '2024-03-15T10:00:00+00:00', got {value!r}"
    )


def check_memory_type(value: str, *, field: str = "memory_type") -> MemoryType:
    if value not in MEMORY_TYPES:
        raise MemoryArgumentError(f"{field} must be one of {list(MEMORY_TYPES)}, got {value!r}")
    return value


def check_importance(value: float, *, field: str = "importance") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise MemoryArgumentError(f"{field} must be a number from 0 to 1, got {value!r}")
    return float(value)
