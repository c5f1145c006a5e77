"""BM25 over short texts (tool and skill descriptions), English and Chinese alike, with no
dependency: a catalog holds hundreds of texts, not millions.

Callers tokenize (`cjk_grams` turns a Chinese run into its characters and overlapping bigrams,
so a Chinese query matches a Chinese text without a segmenter) and count each document's terms
once; `bm25_scores` ranks against those counts. Skill selection and the registry's keyword tool
index both score here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence

K1 = 1.2
B = 0.75
CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
"""A run of CJK ideographs (the basic block, extension A and the compatibility block)."""


def cjk_grams(run: str) -> list[str]:
    """A CJK run as its single characters, then its overlapping bigrams."""
    return [*run, *(run[i : i + 2] for i in range(len(run) - 1))]


def bm25_scores(terms: Collection[str], documents: Sequence[Counter[str]]) -> list[float]:
    """One BM25 score per document's term counts for the query's `terms` (0.0 where nothing
    matches)."""
    if not terms or not documents:
        return [0.0] * len(documents)
    lengths = [sum(counts.values()) for counts in documents]
    average = (sum(lengths) / len(lengths)) or 1.0
    total = len(documents)
    frequency = {term: sum(1 for counts in documents if term in counts) for term in terms}
    scores = []
    for counts, length in zip(documents, lengths, strict=True):
        score = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if not tf:
                continue
            df = frequency[term]
            idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
        scores.append(score)
    return scores
