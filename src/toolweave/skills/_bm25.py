"""BM25 over short texts (skill descriptions), for English and Chinese alike.

Latin words are lowercased; CJK runs become single characters plus overlapping bigrams, so a
Chinese query matches a Chinese description without a segmenter. Small and dependency-free:
a catalog holds hundreds of descriptions, not millions.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]+")
K1 = 1.2
B = 0.75


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for run in _TOKEN.findall(text.casefold()):
        if run[0].isascii():
            tokens.append(run)
        else:
            tokens.extend(run)
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """One BM25 score per document (0.0 where nothing matches)."""
    terms = set(tokenize(query))
    if not terms or not documents:
        return [0.0] * len(documents)
    counted = [Counter(tokenize(doc)) for doc in documents]
    lengths = [sum(c.values()) for c in counted]
    average = (sum(lengths) / len(lengths)) or 1.0
    total = len(documents)
    scores = []
    for counts, length in zip(counted, lengths, strict=True):
        score = 0.0
        for term in terms:
            frequency = counts.get(term, 0)
            if not frequency:
                continue
            df = sum(1 for c in counted if term in c)
            idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
            score += idf * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))
        scores.append(score)
    return scores
