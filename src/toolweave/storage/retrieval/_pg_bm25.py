"""bm25 shared by both indexes, and the words Postgres indexes: Postgres' own `ts_rank_cd` has no
inverse document frequency, so a Chinese function word (的, 是) weighed as much as the rare word
that names a passage.

The score is FTS5's bm25 (k1 1.2, b 0.75, idf = ln((N - df + 0.5) / (df + 0.5)), at least
1e-6), summed in memory by `bm25_scores` over postings each index keeps (`_sqlite_bm25`,
`_pg_postings`). N, df and the average document length are the collection's (one user, one
knowledge-base namespace), not the table's, so users sharing a store do not skew each other's
ranking.

The words are those the embedded index ranks by, so both backends rank alike: the text as
FTS5's unicode61 splits it (jieba's words for CJK), each token stemmed by Snowball's `porter`
(the algorithm of FTS5's `porter` tokenizer) with no stop words dropped (`TEXT_CONFIG`, made
once per database); a document's length is its number of tokens (its lexemes' positions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolweave.storage.text import TOKEN, fts_texts

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IDs = npt.NDArray[np.int64]
    Floats = npt.NDArray[np.float64]

BM25_K1 = 1.2
BM25_B = 0.75
MIN_IDF = 1e-6

EVERYWHERE = 1_000
"""Records a word more than half a collection holds may match before a query that has other
words leaves it out: its idf is the floor `MIN_IDF`, so it adds nothing to a score, only every
record as a candidate (all 100k of a store; about 10 ms a query). A small collection keeps it,
so its records matching only common words are still found."""
DENSE_SHARE = 8
"""Scores are summed in an array over every record once a query's postings number at least
1/`DENSE_SHARE` of the records (a linear pass), else by sorting the postings' records: a word
every record holds made the sort cost 10-20 ms a query at 100k records."""

TEXT_CONFIG = "toolweave_porter"
"""The full-text configuration: Snowball `porter` stems, every word kept (no stop words)."""
TEXT_CONFIG_SQL = f"""DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '{TEXT_CONFIG}') THEN
        CREATE TEXT SEARCH DICTIONARY {TEXT_CONFIG} (TEMPLATE = snowball, Language = porter);
        CREATE TEXT SEARCH CONFIGURATION {TEXT_CONFIG} (COPY = simple);
        ALTER TEXT SEARCH CONFIGURATION {TEXT_CONFIG} ALTER MAPPING FOR asciiword, word, numword,
            asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart
            WITH {TEXT_CONFIG};
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$"""
"""Creates `TEXT_CONFIG` if the database lacks it (two processes at once: one wins)."""
LENGTH_SQL = "(SELECT sum(coalesce(array_length(positions, 1), 1)) FROM unnest({}))"
"""A tsvector's tokens (FTS5 counts a document's length so)."""


def tsvector_words(texts: Sequence[str]) -> list[str]:
    """The texts records' tsvectors are made from: their unicode61 tokens, CJK runs segmented by
    jieba, joined by spaces (so Postgres' parser sees the words FTS5 sees, nothing it would
    read as a file name, a URL or a hyphenated compound)."""
    return [" ".join(TOKEN.findall(text)) for text in fts_texts(texts)]


def bm25_scores(
    held: list[tuple[IDs, Floats]],
    *,
    count: int,
    average: float,
    length: Floats,
    max_terms: int,
) -> tuple[IDs, Floats]:
    """(records, bm25) of every record in the postings `held` ((records, frequencies) of each
    query term present in a collection of `count` records, `average` tokens long, records being
    indexes into `length`), over the `max_terms` rarest terms (a word more than half of a large
    collection holds only when no other word matched: `EVERYWHERE`)."""
    import numpy as np

    k1 = BM25_K1
    held = sorted(held, key=lambda posting: len(posting[0]))
    weighed = [
        (ids, tf, max(math.log((count - len(ids) + 0.5) / (len(ids) + 0.5)), MIN_IDF))
        for ids, tf in held[:max_terms]
    ]
    if any(idf > MIN_IDF for *_, idf in weighed):
        weighed = [p for p in weighed if p[2] > MIN_IDF or len(p[0]) <= EVERYWHERE]
    ids_parts, score_parts = [], []
    for ids, tf, idf in weighed:
        norm = k1 * (1 - BM25_B + BM25_B * length[ids] / max(average, 1.0))
        ids_parts.append(ids)
        score_parts.append(idf * tf * (k1 + 1) / (tf + norm))
    if not ids_parts:
        return np.empty(0, np.int64), np.empty(0, np.float64)
    if len(ids_parts) == 1:
        return ids_parts[0], score_parts[0]
    if DENSE_SHARE * sum(map(len, ids_parts)) >= len(length):
        dense = np.zeros(len(length))
        for ids, part in zip(ids_parts, score_parts, strict=True):
            dense[ids] += part  # a word's records are distinct
        hit = np.flatnonzero(dense)  # every posting scores above 0 (idf >= MIN_IDF)
        return hit.astype(np.int64), dense[hit]
    found, at = np.unique(np.concatenate(ids_parts), return_inverse=True)
    summed = np.bincount(at, weights=np.concatenate(score_parts)).astype(np.float64)
    return found.astype(np.int64), summed
