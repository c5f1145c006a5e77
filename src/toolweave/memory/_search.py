"""Search across memory types: candidates from each store, then each type's formula (`scoring`).

Persisted memories come from one keyword, vector or fused search of the index (oversampled, so
each type's tie-break re-ranks enough candidates), plus, for semantic memory, the memories the
knowledge graph links to entities the query names. Keyword and graph matches always stay. A
candidate only the vectors found must reach the manager's `min_similarity` cosine (the nearest
neighbours of an unrelated query are still unrelated) unless hybrid search's fused ranking puts
it at or above a keyword match (`_hybrid_keeps`; a vector-mode search asks for that ranking
only when the floor would drop one of its hits): the floor never drops what hybrid search
keeps. (On MADial-Bench's long dialogue queries a fixed 0.25 floor cut WordLlama's vector-mode
recall@100 from 0.980 to 0.573, issue 38.) Working memory scores itself. Hits of all types are
merged on their final score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from toolweave.memory import _codec
from toolweave.memory.graph import KnowledgeGraph
from toolweave.memory.scoring import (
    EPISODIC_FORMULA,
    SEMANTIC_FORMULA,
    TIE_BAND,
    WORKING_FORMULA,
    episodic_score,
    importance_weight,
    perceptual_score,
    recency,
    semantic_score,
)
from toolweave.memory.types import MemoryHit, MemoryItem, MemoryType, to_datetime, utc_now
from toolweave.storage.retrieval.embed_guard import Hits
from toolweave.storage.retrieval.index import IndexHit, SearchMode

if TYPE_CHECKING:
    from toolweave.memory.manager import MemoryManager

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
SEARCH_OVERSAMPLE = 4
"""Candidates fetched from the index per wanted hit, before the type formulas re-rank them."""


def period_end(value: datetime | float | str) -> datetime:
    """`until` as an instant: a bare date (`2026-03-15`) means the end of that day (UTC), so the
    day itself is included, as both ends of a period are."""
    if isinstance(value, str) and _DATE_ONLY.match(value.strip()):
        return to_datetime(value.strip(), field="until") + timedelta(days=1, microseconds=-1)
    return to_datetime(value, field="until")


@dataclass(frozen=True, slots=True)
class MemoryPeriod:
    """Episodic bounds of a search: the conversation a memory was made in and when it happened."""

    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def where(self) -> dict[str, Any]:
        """The index filter (payload fields `session_id` and `timestamp`)."""
        where: dict[str, Any] = {}
        if self.session_id is not None:
            where["session_id"] = self.session_id
        bounds = {}
        if self.since is not None:
            bounds["gte"] = self.since.timestamp()
        if self.until is not None:
            bounds["lte"] = self.until.timestamp()
        if bounds:
            where["timestamp"] = bounds
        return where

    def admits(self, item: MemoryItem) -> bool:
        """The same test for a memory held outside the index (working memory)."""
        if self.session_id is not None and item.metadata.get("session_id") != self.session_id:
            return False
        if self.since is not None and item.timestamp < self.since:
            return False
        return self.until is None or item.timestamp <= self.until


async def search_memories(
    manager: MemoryManager,
    query: str,
    *,
    limit: int,
    types: list[MemoryType],
    min_importance: float,
    explain: bool,
    as_of: datetime | None,
    modality: str | None,
    graph: KnowledgeGraph | None,
    mode: SearchMode = "hybrid",
    period: MemoryPeriod | None = None,
) -> Hits[MemoryHit]:
    now = utc_now()
    period = period or MemoryPeriod()
    hits: list[MemoryHit] = []
    warning = None
    if "working" in types and as_of is None and modality is None:
        for item, factors in manager.working.search(query, min_importance=min_importance):
            if not period.admits(item):
                continue
            explanation: dict[str, Any] = {"formula": WORKING_FORMULA}
            explanation.update(factors, importance_weight=importance_weight(item.importance))
            hits.append(MemoryHit(item, factors["score"], explanation if explain else None))
    persisted = [t for t in types if t != "working"]
    if modality is not None:
        persisted = [t for t in persisted if t == "perceptual"]
    if persisted:
        where: dict[str, Any] = {
            "memory_type": persisted,
            "importance": {"gte": min_importance},
            **_codec.validity(as_of),
            **period.where(),
        }
        if modality is not None:
            where["modality"] = modality
        found = await manager.index.search(
            query,
            limit=limit * SEARCH_OVERSAMPLE,
            collection=manager.user_id,
            where=where,
            mode=mode,
        )
        warning = found.warning
        cap = limit * SEARCH_OVERSAMPLE
        graph_scores = graph.memory_scores(graph.entities_in(query), cap) if graph else {}
        if graph_scores and as_of is None:
            seen = {h.record.id for h in found}
            linked = sorted(graph_scores, key=lambda i: (-graph_scores[i], i))
            extra = [i for i in linked if i not in seen][:cap]
            for record in await manager.index.get(extra, manager.user_id):
                p = record.payload
                if (
                    p["memory_type"] in persisted
                    and p["importance"] >= min_importance
                    and period.admits(_codec.to_item(record))
                ):
                    found.append(IndexHit(record, 0.0))
        kept = await _hybrid_keeps(manager, query, found, mode, cap, where)
        for hit in found:
            stays = (
                hit.keyword_rank is not None
                or hit.record.id in graph_scores
                or hit.record.id in kept
            )
            if stays or (hit.vector_score or 0.0) >= manager.min_similarity:
                hits.append(_score(hit, now, graph_scores, explain))
    hits.sort(key=lambda h: (-h.score, h.item.id))
    return Hits(hits[:limit], warning)


async def _hybrid_keeps(
    manager: MemoryManager,
    query: str,
    found: list[IndexHit],
    mode: SearchMode,
    limit: int,
    where: dict[str, Any],
) -> set[str]:
    """Ids of the candidates hybrid search keeps: those its fused ranking puts at or above its
    last keyword match. A vector-mode search asks for the hybrid ranking only when the
    `min_similarity` floor would drop one of its hits."""
    if mode == "keyword":
        return set()
    if mode == "vector":
        if all((hit.vector_score or 0.0) >= manager.min_similarity for hit in found):
            return set()
        found = await manager.index.search(
            query, limit=limit, collection=manager.user_id, where=where, mode="hybrid"
        )
    last = max((i for i, hit in enumerate(found) if hit.keyword_rank is not None), default=-1)
    return {hit.record.id for hit in found[: last + 1]}


def _score(
    hit: IndexHit, now: datetime, graph_scores: dict[str, float], explain: bool
) -> MemoryHit:
    item = _codec.to_item(hit.record)
    factors: dict[str, Any] = {
        "keyword_rank": hit.keyword_rank,
        "keyword_score": hit.keyword_score,
        "vector_score": hit.vector_score,
        "fused": hit.score,
        "relevance": hit.score,
        "importance": item.importance,
        "tie_band": TIE_BAND,
    }
    if item.memory_type == "semantic":
        graph = graph_scores.get(item.id, 0.0)
        score = semantic_score(hit.score, graph, item.importance)
        factors.update(formula=SEMANTIC_FORMULA, graph=graph)
    else:
        fresh = recency(item.timestamp, now)
        formula = episodic_score if item.memory_type == "episodic" else perceptual_score
        score = formula(hit.score, fresh, item.importance)
        factors.update(formula=EPISODIC_FORMULA, recency=fresh)
    factors["score"] = score
    return MemoryHit(item, score, factors if explain else None)
