"""The scoring formulas, one function each, so search and `explain=True` share them.

- working:    (0.7 vec + 0.3 keyword) * time_decay * (0.8 + 0.4 importance)
- episodic:   (0.8 vec + 0.2 recency) * (0.8 + 0.4 importance)
- semantic:   (0.7 vec + 0.3 graph)   * (0.8 + 0.4 importance)
- perceptual: (0.8 vec + 0.2 recency) * (0.8 + 0.4 importance)

For the persisted types `vec` is the relevance of the fused keyword + vector ranking
(reciprocal rank fusion, scaled so first in both lists is 1.0), so an exact keyword hit is never
lost to a vector-only ranking. Recency is exp(-0.1 * age_hours / 24), floored at 0.1
(a month-old memory still counts).
Working memory's time decay halves every `ttl` (an item at the end of its TTL counts half).
"""

from __future__ import annotations

import math
from datetime import datetime

from toolweave.storage.retrieval.index import DEFAULT_RRF_K

RECENCY_DECAY = 0.1
RECENCY_FLOOR = 0.1
_MAX_FUSED = 2.0 / (DEFAULT_RRF_K + 1)


def importance_weight(importance: float) -> float:
    return 0.8 + 0.4 * importance


def recency(timestamp: datetime, now: datetime) -> float:
    age_hours = max((now - timestamp).total_seconds(), 0.0) / 3600
    return max(RECENCY_FLOOR, math.exp(-RECENCY_DECAY * age_hours / 24))


def time_decay(timestamp: datetime, now: datetime, ttl_minutes: float) -> float:
    age_minutes = max((now - timestamp).total_seconds(), 0.0) / 60
    return float(0.5 ** (age_minutes / ttl_minutes))


def fused_relevance(fused: float) -> float:
    """A reciprocal-rank-fusion score scaled to 0..1 (1.0: ranked first by keywords and vectors)."""
    return min(fused / _MAX_FUSED, 1.0)


def working_score(vec: float, keyword: float, decay: float, importance: float) -> float:
    base = vec * 0.7 + keyword * 0.3 if vec > 0 else keyword
    return base * decay * importance_weight(importance)


def episodic_score(vec: float, recency_score: float, importance: float) -> float:
    return (vec * 0.8 + recency_score * 0.2) * importance_weight(importance)


def semantic_score(vec: float, graph: float, importance: float) -> float:
    return (vec * 0.7 + graph * 0.3) * importance_weight(importance)


perceptual_score = episodic_score
