"""BM25 over skill names and descriptions (`toolweave.tools.bm25`), with the catalog's own
tokens: Latin words casefolded, CJK runs as characters and bigrams, nothing dropped."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from toolweave.tools.bm25 import CJK_RUN, cjk_grams
from toolweave.tools.bm25 import bm25_scores as score_counts

_TOKEN = re.compile(r"[a-z0-9]+|" + CJK_RUN.pattern)


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for run in _TOKEN.findall(text.casefold()):
        tokens.extend([run] if run[0].isascii() else cjk_grams(run))
    return tokens


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """One BM25 score per document (0.0 where nothing matches)."""
    return score_counts(set(tokenize(query)), [Counter(tokenize(doc)) for doc in documents])
