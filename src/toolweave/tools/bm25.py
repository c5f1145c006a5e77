"""BM25 over short texts (tool and skill descriptions), English and Chinese alike, with no
dependency: a catalog holds hundreds or thousands of texts, not millions.

Callers tokenize (`cjk_grams` turns a Chinese run into its characters and overlapping bigrams,
so a Chinese query matches a Chinese text without a segmenter) and count each document's terms
once. `bm25_scores` ranks a list of those counts (skill selection: a few dozen texts, read
once); `Postings` keeps them as an inverted index, added and removed one document at a time, so
a query reads only the documents holding its terms (the registry's keyword tool index, thousands
of tools searched again and again). Both rank alike: the collection statistics (document count,
average length, document frequencies) are those of the documents a query is asked about.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

K1 = 1.2
B = 0.75
CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
"""A run of CJK ideographs (the basic block, extension A and the compatibility block)."""


def cjk_grams(run: str) -> list[str]:
    """A CJK run as its single characters, then its overlapping bigrams."""
    return [*run, *(run[i : i + 2] for i in range(len(run) - 1))]


def _idf(total: int, df: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _weight(idf: float, tf: int, length: int, average: float) -> float:
    return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))


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
            if tf:
                score += _weight(_idf(total, frequency[term]), tf, length, average)
        scores.append(score)
    return scores


class Postings:
    """An inverted index of documents' term counts, by document key: each term's documents
    and counts, each document's length."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, int]] = {}
        self._lengths: dict[str, int] = {}
        self._terms: dict[str, list[str]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._lengths

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, key: str, counts: Counter[str]) -> None:
        """Index document `key` (replacing what it held)."""
        self.remove(key)
        held = [term for term, tf in counts.items() if tf > 0]
        for term in held:
            self._postings.setdefault(term, {})[key] = counts[term]
        self._terms[key] = held
        self._lengths[key] = sum(counts.values())

    def remove(self, key: str) -> None:
        """Forget document `key` (nothing if it is not indexed)."""
        if self._lengths.pop(key, None) is None:
            return
        for term in self._terms.pop(key):
            docs = self._postings[term]
            del docs[key]
            if not docs:
                del self._postings[term]

    def scores(self, terms: Iterable[str], keys: Collection[str]) -> dict[str, float]:
        """BM25 scores, over the documents `keys` only (each one indexed), of those that hold a
        term of `terms`; the same figures `bm25_scores` gives for the same documents."""
        total = len(keys)
        if not total:
            return {}
        average = (sum(map(self._lengths.__getitem__, keys)) / total) or 1.0
        within = keys if isinstance(keys, (set, frozenset, dict)) else set(keys)
        scores: dict[str, float] = {}
        for term in terms:
            docs = self._postings.get(term)
            if not docs:
                continue
            found = [(key, tf) for key, tf in docs.items() if key in within]
            if not found:
                continue
            idf = _idf(total, len(found))
            for key, tf in found:
                weight = _weight(idf, tf, self._lengths[key], average)
                scores[key] = scores.get(key, 0.0) + weight
        return scores
