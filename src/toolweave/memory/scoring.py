"""How memories are ranked: relevance first, then a bounded tie-break, one function per type,
so search and `explain=True` share them.

`relevance` is the index's fused keyword + vector score (0..1: normalised bm25 and cosine,
`toolweave.storage.retrieval.fusion`). Importance and recency (or, for semantic facts, links in
the knowledge graph) add at most `TIE_BAND` to it, so they reorder only memories whose relevance
is within `TIE_BAND` of each other; an exact match is never beaten by a weak match that happens
to be important or new:

- episodic, perceptual: relevance + TIE_BAND * (0.5 importance + 0.5 recency)
- semantic:             max(relevance, GRAPH_RELEVANCE * graph) + TIE_BAND * importance
- working:              (0.7 vec + 0.3 keyword) * time_decay * (0.8 + 0.4 importance)

Recency is exp(-0.1 * age_hours / 24), floored at 0.1. Working memory (the last few turns, never
indexed) keeps its own formula; its time decay halves every `ttl`.
"""

from __future__ import annotations

import math
from datetime import datetime

RECENCY_DECAY = 0.1
RECENCY_FLOOR = 0.1
TIE_BAND = 0.05
"""Most importance and recency can add to a memory's relevance."""
GRAPH_RELEVANCE = 0.5
"""Relevance of a semantic fact linked (strength 1.0) to an entity the query names."""
EPISODIC_FORMULA = "relevance + 0.05 * (0.5 importance + 0.5 recency)"
SEMANTIC_FORMULA = "max(relevance, 0.5 graph) + 0.05 * importance"
WORKING_FORMULA = "(0.7 vec + 0.3 keyword) * time_decay * (0.8 + 0.4 imp)"


def importance_weight(importance: float) -> float:
    """Working memory's importance factor."""
    return 0.8 + 0.4 * importance


def recency(timestamp: datetime, now: datetime) -> float:
    age_hours = max((now - timestamp).total_seconds(), 0.0) / 3600
    return max(RECENCY_FLOOR, math.exp(-RECENCY_DECAY * age_hours / 24))


def time_decay(timestamp: datetime, now: datetime, ttl_minutes: float) -> float:
    age_minutes = max((now - timestamp).total_seconds(), 0.0) / 60
    return float(0.5 ** (age_minutes / ttl_minutes))


def working_score(vec: float, keyword: float, decay: float, importance: float) -> float:
    base = vec * 0.7 + keyword * 0.3 if vec > 0 else keyword
    return base * decay * importance_weight(importance)


def episodic_score(relevance: float, recency_score: float, importance: float) -> float:
    return relevance + TIE_BAND * (0.5 * importance + 0.5 * recency_score)


def semantic_score(relevance: float, graph: float, importance: float) -> float:
    return max(relevance, GRAPH_RELEVANCE * graph) + TIE_BAND * importance


perceptual_score = episodic_score
