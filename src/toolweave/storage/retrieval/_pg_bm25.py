"""bm25 for `PostgresQdrantIndex`: Postgres' own `ts_rank_cd` has no inverse document frequency,
so a Chinese function word (的, 是) weighed as much as the rare word that names a passage.

The score is FTS5's bm25 (k1 1.2, b 0.75, idf = ln((N - df + 0.5) / (df + 0.5)), at least
1e-6), computed in one query over the rows that match any query lexeme. N, df and the average
document length are the collection's (one user, one knowledge-base namespace), not the table's,
so users sharing a store do not skew each other's ranking.

The words are those the embedded index ranks by, so both backends rank alike: the text as
FTS5's unicode61 splits it (jieba's words for CJK), each token stemmed by Snowball's `porter`
(the algorithm of FTS5's `porter` tokenizer) with no stop words dropped (`TEXT_CONFIG`, made
once per database); a document's length is its number of tokens (its lexemes' positions).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from toolweave.storage.text import TOKEN, fts_texts

BM25_K1 = 1.2
BM25_B = 0.75
MIN_IDF = 1e-6

Rows = Callable[[str, Sequence[Any]], Awaitable[list[tuple[Any, ...]]]]

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


STATS_DRIFT = 0.1
"""Share of a collection's records written since its statistics were read that re-reads them."""


class CollectionStats:
    """Each collection's (records, average length), read on its first keyword search (a scan
    of the collection) and again once this index has written more than `STATS_DRIFT` of it;
    another machine's writes shift them slightly until then, which moves scores, not matches."""

    def __init__(self) -> None:
        self._stats: dict[str, tuple[int, float]] = {}
        self._written: dict[str, int] = {}

    async def get(self, rows: Rows, table: str, collection: str) -> tuple[int, float]:
        stats = self._stats.get(collection)
        if stats is None:
            found = await rows(
                f"SELECT count(*), coalesce(avg({LENGTH_SQL.format('words')}), 0) FROM {table}"
                " WHERE collection = %s",
                [collection],
            )
            stats = self._stats[collection] = (int(found[0][0]), float(found[0][1]))
            self._written[collection] = 0
        return stats

    def wrote(self, collection: str, records: int) -> None:
        if collection in self._stats:
            self._written[collection] += records
            if self._written[collection] > max(1.0, STATS_DRIFT * self._stats[collection][0]):
                del self._stats[collection]


async def bm25_rows(
    rows: Rows,
    table: str,
    *,
    config: str,
    words: str,
    collection: str,
    stats: tuple[int, float],
    clause: str,
    params: Sequence[Any],
    limit: int,
    max_terms: int,
) -> list[tuple[Any, ...]]:
    """(id, text, payload, bm25) of the best `limit` rows for the segmented query `words`, over
    its `max_terms` rarest lexemes in the collection if it has more."""
    lexemes = [
        r[0]
        for r in await rows(
            f"SELECT DISTINCT lexeme FROM unnest(to_tsvector('{config}', %s)) ORDER BY 1",
            tsvector_words([words]),
        )
    ]
    if not lexemes:
        return []
    count, average = stats
    frequencies = await rows(
        f"""SELECT l, (SELECT count(*) FROM {table} WHERE collection = %s
        AND words @@ quote_literal(l)::tsquery) FROM unnest(%s::text[]) l""",
        [collection, lexemes],
    )
    rarest = sorted((df, lexeme) for lexeme, df in frequencies if df)[:max_terms]
    if not rarest:
        return []
    lexemes = [lexeme for _, lexeme in rarest]
    idf = {lexeme: max(math.log((count - df + 0.5) / (df + 0.5)), MIN_IDF) for df, lexeme in rarest}
    k1, b = BM25_K1, BM25_B
    return await rows(
        f"""WITH terms AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf)),
        m AS (SELECT id, text, payload, words FROM {table} WHERE collection = %s
              AND words @@ (SELECT string_agg(quote_literal(l), ' | ') FROM unnest(%s::text[]) l)
                  ::tsquery{clause})
        SELECT m.id, m.text, m.payload, s.score FROM m CROSS JOIN LATERAL (
            SELECT sum(terms.idf * tf * {k1 + 1} / (tf + {k1} * (1 - {b} + {b}
                * {LENGTH_SQL.format("m.words")} / %s))) AS score
            FROM (SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf
                  FROM unnest(m.words)) u JOIN terms USING (lexeme)) s
        ORDER BY s.score DESC, m.id LIMIT %s""",
        [list(idf), list(idf.values()), collection, lexemes, *params, max(average, 1.0), limit],
    )
