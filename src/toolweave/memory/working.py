"""Working memory: a small in-process buffer with a capacity and a time to live.

What an agent is thinking about right now: it never touches disk (so it is as fast as a dict and
gone on restart, which is what short-term means), expires after `ttl_minutes`, and when full evicts
the item with the lowest priority (importance, then age). Search is hybrid, as no embedder is
needed: TF-IDF cosine over jieba-segmented words plus the share of query terms found, weighted by
time decay and importance. Important items outlive it through `MemoryManager.consolidate`.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta

from toolweave.memory.errors import MemoryArgumentError
from toolweave.memory.scoring import time_decay, working_score
from toolweave.memory.types import MemoryItem, utc_now
from toolweave.storage.text import query_terms, segment

DEFAULT_WORKING_CAPACITY = 50
DEFAULT_WORKING_TTL_MINUTES = 60.0


class WorkingMemory:
    """At most `capacity` items, each kept for `ttl_minutes` after its timestamp."""

    def __init__(
        self,
        capacity: int = DEFAULT_WORKING_CAPACITY,
        ttl_minutes: float = DEFAULT_WORKING_TTL_MINUTES,
    ) -> None:
        if capacity < 1:
            raise MemoryArgumentError(f"working_capacity must be >= 1, got {capacity}")
        if ttl_minutes <= 0:
            raise MemoryArgumentError(f"working_ttl_minutes must be > 0, got {ttl_minutes}")
        self.capacity = capacity
        self.ttl_minutes = ttl_minutes
        self._items: dict[str, MemoryItem] = {}
        self._terms: dict[str, Counter[str]] = {}

    def __len__(self) -> int:
        self.expire()
        return len(self._items)

    def items(self) -> list[MemoryItem]:
        self.expire()
        return list(self._items.values())

    def get(self, id_: str) -> MemoryItem | None:
        self.expire()
        return self._items.get(id_)

    def find_content(self, content: str) -> MemoryItem | None:
        self.expire()
        return next((i for i in self._items.values() if i.content == content), None)

    def put(self, item: MemoryItem) -> list[MemoryItem]:
        """Store `item` (replacing one with its id); returns the items evicted to make room."""
        self.expire()
        evicted: list[MemoryItem] = []
        if item.id not in self._items:
            while len(self._items) >= self.capacity:
                lowest = min(self._items.values(), key=lambda i: (i.importance, i.timestamp))
                evicted.append(self._items.pop(lowest.id))
                self._terms.pop(lowest.id, None)
        self._items[item.id] = item
        self._terms[item.id] = Counter(segment(item.content))
        return evicted

    def remove(self, id_: str) -> MemoryItem | None:
        self._terms.pop(id_, None)
        return self._items.pop(id_, None)

    def clear(self) -> int:
        count = len(self._items)
        self._items.clear()
        self._terms.clear()
        return count

    def expire(self, now: datetime | None = None) -> int:
        cutoff = (now or utc_now()) - timedelta(minutes=self.ttl_minutes)
        stale = [i.id for i in self._items.values() if i.timestamp < cutoff]
        for id_ in stale:
            self.remove(id_)
        return len(stale)

    def search(
        self, query: str, *, min_importance: float = 0.0, now: datetime | None = None
    ) -> list[tuple[MemoryItem, dict[str, float]]]:
        """Items with a positive score, best first, each with the formula's factors."""
        self.expire(now)
        now = now or utc_now()
        terms = query_terms(query)
        if not terms or not self._items:
            return []
        documents = len(self._terms)
        frequency = Counter(t for counts in self._terms.values() for t in set(counts))
        idf = {t: math.log((1 + documents) / (1 + frequency[t])) + 1 for t in frequency}
        query_vector = {t: idf.get(t, 0.0) for t in terms}
        query_norm = math.sqrt(sum(v * v for v in query_vector.values()))
        scored: list[tuple[MemoryItem, dict[str, float]]] = []
        for id_, item in self._items.items():
            if item.importance < min_importance:
                continue
            counts = self._terms[id_]
            vector = {t: c * idf[t] for t, c in counts.items()}
            norm = math.sqrt(sum(v * v for v in vector.values()))
            dot = sum(w * vector.get(t, 0.0) for t, w in query_vector.items())
            vec = dot / (norm * query_norm) if norm and query_norm else 0.0
            keyword = sum(1 for t in terms if t in counts or t in item.content.lower()) / len(terms)
            decay = time_decay(item.timestamp, now, self.ttl_minutes)
            score = working_score(vec, keyword, decay, item.importance)
            if score > 0:
                factors = {"vector": vec, "keyword": keyword, "time_decay": decay, "score": score}
                scored.append((item, factors))
        scored.sort(key=lambda pair: -pair[1]["score"])
        return scored
