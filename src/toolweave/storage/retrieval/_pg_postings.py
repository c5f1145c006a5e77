"""Word postings of `PostgresQdrantIndex` kept in memory, as `_sqlite_bm25` keeps the SQLite
index's: a keyword search scores every record of a collection that holds a query word with a few
numpy operations (`bm25_scores`), instead of a query that reads every matching tsvector.

A collection's postings are read once, in one snapshot (`REPEATABLE READ`): every record's id
and length and, per lexeme, the records holding it with its frequency, aggregated by the server.
A statement-level trigger counts every write to the table (this process's, another process's,
another machine's) in the `<table>_meta` row `WRITES_KEY`; each search reads that counter in
the same round trip as its query's lexemes, and a collection read at another count is read again
before it is searched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolweave.storage.retrieval._live_vectors import WRITES_KEY
from toolweave.storage.retrieval._pg_bm25 import (
    LENGTH_SQL,
    TEXT_CONFIG,
    bm25_scores,
    tsvector_words,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IDs = npt.NDArray[np.int64]
    Floats = npt.NDArray[np.float64]

    Rows = Callable[[str, Sequence[Any]], Awaitable[list[tuple[Any, ...]]]]

FILTERED_CHUNK = 1_000
"""Best-scored records a filtered keyword search reads at a time until `limit` pass the filter."""


def count_writes_sql(t: str) -> list[str]:
    """The trigger that counts each statement writing table `t` in `<t>_meta`."""
    return [
        f"""CREATE OR REPLACE FUNCTION {t}_count_writes() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO {t}_meta (key, value) VALUES ('{WRITES_KEY}', '1')
            ON CONFLICT (key) DO UPDATE SET value = ({t}_meta.value::bigint + 1)::text;
            RETURN NULL;
        END $$""",
        f"""CREATE OR REPLACE TRIGGER {t}_count_writes AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
        ON {t} FOR EACH STATEMENT EXECUTE FUNCTION {t}_count_writes()""",
    ]


@dataclass
class _Collection:
    writes: str | None
    ids: list[str]
    length: Any
    tokens: float
    terms: dict[str, tuple[Any, Any]]


class PgPostings:
    """The postings of table `name`'s collections, kept between searches (the index's own; used
    under its connection lock)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._kept: dict[str, _Collection] = {}

    async def scores(
        self, conn: Any, collection: str, words: str, max_terms: int
    ) -> tuple[list[str], IDs, Floats]:
        """(the collection's record ids, indexes into them, bm25) of every record of
        `collection` holding a lexeme of the segmented query `words` (the `max_terms` rarest in
        the collection if there are more)."""
        import numpy as np

        cursor = await conn.execute(
            f"""SELECT (SELECT value FROM {self.name}_meta WHERE key = %s),
            ARRAY(SELECT DISTINCT lexeme FROM unnest(to_tsvector('{TEXT_CONFIG}', %s)))""",
            [WRITES_KEY, *tsvector_words([words])],
        )
        writes, lexemes = await cursor.fetchone()
        kept = self._kept.get(collection)
        if kept is None or kept.writes != writes:
            kept = self._kept[collection] = await self._load(conn, collection)
        held = [kept.terms[lexeme] for lexeme in lexemes if lexeme in kept.terms]
        if not kept.ids or not held:
            return kept.ids, np.empty(0, np.int64), np.empty(0, np.float64)
        count = len(kept.ids)
        found, scored = bm25_scores(
            held, count=count, average=kept.tokens / count, length=kept.length, max_terms=max_terms
        )
        return kept.ids, found, scored

    async def _load(self, conn: Any, collection: str) -> _Collection:
        import numpy as np

        t = self.name
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = await conn.execute(f"SELECT value FROM {t}_meta WHERE key = %s", [WRITES_KEY])
            row = await cursor.fetchone()
            cursor = await conn.execute(
                f"SELECT id, {LENGTH_SQL.format('words')} FROM {t} WHERE collection = %s"
                " ORDER BY id",
                [collection],
            )
            records = await cursor.fetchall()
            cursor = await conn.execute(
                f"""WITH d AS (SELECT words, row_number() OVER (ORDER BY id) - 1 AS n
                    FROM {t} WHERE collection = %s)
                SELECT u.lexeme, array_agg(d.n),
                    array_agg(coalesce(array_length(u.positions, 1), 1))
                FROM d, unnest(d.words) u GROUP BY u.lexeme""",
                [collection],
            )
            postings = await cursor.fetchall()
        length = np.array([r[1] or 0 for r in records], np.float64)
        terms = {
            lexeme: (np.array(ids, np.int64), np.array(tf, np.float64))
            for lexeme, ids, tf in postings
        }
        return _Collection(
            row[0] if row else None, [r[0] for r in records], length, float(length.sum()), terms
        )


async def best_rows(
    rows: Rows,
    t: str,
    collection: str,
    scored: tuple[list[str], IDs, Floats],
    clause: str,
    params: Sequence[Any],
    limit: int,
) -> list[tuple[Any, ...]]:
    """(id, text, payload, bm25) of the best `limit` records of `scored` (from `scores`) that
    pass the filter `clause`, best first (ties by id)."""
    import numpy as np

    ids, found, score = scored
    order = np.lexsort((found, -score))
    chunk = max(limit, FILTERED_CHUNK) if clause else limit
    best: list[tuple[Any, ...]] = []
    for start in range(0, len(order), chunk):
        wanted = {ids[found[i]]: float(score[i]) for i in order[start : start + chunk]}
        read = await rows(
            f"SELECT id, text, payload FROM {t} WHERE collection = %s AND id = ANY(%s){clause}",
            [collection, list(wanted), *params],
        )
        by_id = {r[0]: r for r in read}
        best += [(*by_id[key], value) for key, value in wanted.items() if key in by_id]
        if len(best) >= limit:
            break
    return best[:limit]
