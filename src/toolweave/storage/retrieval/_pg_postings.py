"""Word postings of `PostgresQdrantIndex` kept in memory, as `_sqlite_bm25` keeps the SQLite
index's: a keyword search scores every record of a collection that holds a query word with a few
numpy operations (`bm25_scores`), instead of a query that reads every matching tsvector.

A collection's postings are read in one snapshot (`REPEATABLE READ`, `read_collections`): every
record's id and version and, per lexeme, the records holding it with its frequency, aggregated
by the server. `_pg_warm` reads every collection ahead in the background, up to the index's
`postings_kept`; a collection not held is read by the first search that asks for it.

A statement-level trigger counts every write to the table's words (this process's, another
process's, another replica's) in the `<table>_meta` row `WRITES_KEY`, and each collection held
remembers the count it is current at. This index's own write locks that row first
(`lock_writes`), so the counter before and after it tells whether anyone else wrote meanwhile;
the rows it wrote are read back in its transaction (`written`) and counted in
(`PgPostings.committed`). Each search reads the counter in the same round trip as its query's
lexemes; when it moved past the collection's count (another writer wrote), the search reads
the collection's record versions and only the records that changed (`PgPostings.catch_up`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolweave.storage.retrieval._live_vectors import WRITES_KEY
from toolweave.storage.retrieval._pg_bm25 import TEXT_CONFIG, bm25_scores, tsvector_words
from toolweave.storage.retrieval._pg_collection import (
    HeldCollection,
    Rows,
    empty_collection,
    read_changes,
    read_collections,
    read_horizon,
    read_ids,
    read_rows,
)
from toolweave.storage.retrieval._sqlite_bm25 import RECOUNT_ROWS
from toolweave.storage.retrieval.index import DEFAULT_POSTINGS_KEPT

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IDs = npt.NDArray[np.int64]
    Floats = npt.NDArray[np.float64]

    RowReader = Callable[[str, Sequence[Any]], Awaitable[list[tuple[Any, ...]]]]

FILTERED_CHUNK = 1_000
"""Best-scored records a filtered keyword search reads at a time until `limit` pass the filter."""


def count_writes_sql(t: str) -> list[str]:
    """The trigger that counts each statement writing table `t`'s records in `<t>_meta` (not a
    statement that only marks rows `vectored`)."""
    return [
        f"""CREATE OR REPLACE FUNCTION {t}_count_writes() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO {t}_meta (key, value) VALUES ('{WRITES_KEY}', '1')
            ON CONFLICT (key) DO UPDATE SET value = ({t}_meta.value::bigint + 1)::text;
            RETURN NULL;
        END $$""",
        f"""CREATE OR REPLACE TRIGGER {t}_count_writes AFTER INSERT OR DELETE OR TRUNCATE
        OR UPDATE OF collection, id, text, words
        ON {t} FOR EACH STATEMENT EXECUTE FUNCTION {t}_count_writes()""",
    ]


async def lock_writes(conn: Any, t: str) -> int:
    """Lock table `t`'s write counter until the transaction ends (other writers wait) and
    return it: the first statement of each of this index's writes."""
    cursor = await conn.execute(
        f"""INSERT INTO {t}_meta (key, value) VALUES (%s, '0') ON CONFLICT (key)
        DO UPDATE SET value = {t}_meta.value RETURNING value""",
        [WRITES_KEY],
    )
    return int((await cursor.fetchone())[0])


async def written(conn: Any, t: str, keys: Sequence[tuple[str, str]]) -> tuple[int, Rows]:
    """The write counter after this transaction's writes, and the rows `keys` as stored (none
    past `RECOUNT_ROWS` rows: reading them back costs more than reading the collection again)."""
    after = await snapshot_writes(conn, t)
    return after, await read_rows(conn, t, list(keys)) if len(keys) <= RECOUNT_ROWS else {}


async def snapshot_writes(conn: Any, t: str) -> int:
    """Table `t`'s write counter, as the caller's transaction sees it."""
    cursor = await conn.execute(f"SELECT value FROM {t}_meta WHERE key = %s", [WRITES_KEY])
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


@dataclass
class Snapshot:
    """Collections read at write counter `writes`, while `skipped` were held; `complete` when
    every collection of the table was one or the other."""

    writes: int
    collections: dict[str, HeldCollection]
    skipped: set[str]
    complete: bool


class PgPostings:
    """The postings of table `name`'s collections kept between searches, at most `kept` (the
    index's own; used on its event loop only)."""

    def __init__(self, name: str, kept: int = DEFAULT_POSTINGS_KEPT) -> None:
        self.name = name
        self.kept = kept
        self.whole = False
        """Whether every collection within `kept` is held (read ahead since last dropped)."""
        self._complete_at: int | None = None
        """The write count at which every collection of the table was held (a write to a new
        collection is counted in from then on)."""
        self._dropped_at = 0
        """The write count after this index's last write that dropped a collection it held."""
        self._written_at = 0
        """The write count after this index's last write."""
        self._held: dict[str, HeldCollection] = {}

    @property
    def held(self) -> int:
        return sum(c.postings for c in self._held.values())

    def holding(self) -> set[str]:
        return set(self._held)

    def only(self, collection: str) -> bool:
        """Whether the table holds no collection but `collection`, as the postings last saw it
        (a vector search then asks Qdrant for the nearest points unfiltered)."""
        return self._complete_at is not None and set(self._held) == {collection}

    async def scores(
        self, conn: Any, collection: str, words: str, max_terms: int
    ) -> tuple[list[str], IDs, Floats]:
        """(the collection's record ids by slot, slots, bm25) of every record of `collection`
        holding a lexeme of the segmented query `words` (the `max_terms` rarest in the
        collection if there are more)."""
        import numpy as np

        cursor = await conn.execute(
            f"""SELECT (SELECT value FROM {self.name}_meta WHERE key = %s),
            ARRAY(SELECT DISTINCT lexeme FROM unnest(to_tsvector('{TEXT_CONFIG}', %s)))""",
            [WRITES_KEY, *tsvector_words([words])],
        )
        writes, lexemes = await cursor.fetchone()
        kept = self._held.get(collection)
        if kept is None:
            kept = await self._read(conn, collection)
        elif kept.writes != int(writes or 0):  # another writer wrote
            kept = await self.catch_up(conn, collection, kept)
        held = []
        for lexeme in lexemes:
            ids, tf = kept.terms.get(lexeme, (None, None))
            if ids is not None and kept.dead:
                keep = kept.live[ids]
                ids, tf = ids[keep], tf[keep]
            if ids is not None and len(ids):
                held.append((ids, tf))
        if not kept.records or not held:
            return kept.ids, np.empty(0, np.int64), np.empty(0, np.float64)
        count = kept.records
        found, scored = bm25_scores(
            held, count=count, average=kept.tokens / count, length=kept.length, max_terms=max_terms
        )
        return kept.ids, found, scored

    async def catch_up(self, conn: Any, collection: str, kept: HeldCollection) -> HeldCollection:
        """Bring `kept` to the table's current write count: the records written since its
        horizon and held at another version (or not held) are read, those removed dropped (all
        of the collection is read again past `RECOUNT_ROWS` changed records)."""
        t = self.name
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            writes, horizon = await snapshot_writes(conn, t), await read_horizon(conn)
            count, newer = await read_changes(conn, t, collection, kept.horizon)
            stale = kept.changed(newer)
            if len(stale) > RECOUNT_ROWS:
                read = await read_collections(conn, t, [collection], writes, horizon)
                self._held[collection] = read[collection]
                return read[collection]
            kept.add(
                (await read_rows(conn, t, [(collection, id_) for id_ in stale])).get(collection, {})
            )
            if kept.records > count:  # held records another writer removed
                ids = await read_ids(conn, t, collection)
                for id_ in [id_ for id_ in kept.slots if id_ not in ids]:
                    kept.remove(id_)
        kept.writes, kept.horizon = writes, horizon
        return kept

    def committed(
        self, before: int, after: int, keys: Iterable[tuple[str, str]], rows: Rows
    ) -> None:
        """This index's write that moved the counter from `before` to `after`, replacing or
        removing the records `keys` and storing `rows` (none read back past `RECOUNT_ROWS`:
        the collections written are dropped then, and read again)."""
        keys = list(keys)
        self._written_at = after
        large = len(keys) > RECOUNT_ROWS
        touched: dict[str, list[str]] = {}
        for collection, id_ in keys:
            touched.setdefault(collection, []).append(id_)
        if self._complete_at == before and not large:
            self._complete_at = after
            for collection in touched.keys() - self._held.keys():
                self._held[collection] = empty_collection(before)  # a new collection
        elif self._complete_at is not None:
            self._complete_at = None
        for name, kept in list(self._held.items()):
            if kept.writes != before:
                continue  # behind another writer's write: caught up at its next search
            if large and name in touched:
                del self._held[name]
                self.whole, self._dropped_at = False, after
                continue
            for id_ in touched.get(name, ()):
                kept.remove(id_)
            kept.add(rows.get(name, {}))
            kept.writes = after
        if self.held > self.kept:
            self._evict()

    def adopt(self, snapshot: Snapshot) -> bool:
        """Take the collections read ahead that are not held (each catches up at its next search
        if a write came after the read), unless this index dropped one after they were read
        (False: read again)."""
        if snapshot.writes < self._dropped_at:
            return False
        held = self.holding()
        budget = self.kept - self.held
        complete = snapshot.complete and snapshot.skipped <= held
        for name, collection in snapshot.collections.items():
            if name in self._held:
                continue
            if collection.postings > budget:
                complete = False
                continue
            self._held[name] = collection
            budget -= collection.postings
        if snapshot.writes >= self._written_at:  # else read again: a collection written since
            self.whole = True  # may have been left out
            if complete:
                self._complete_at = snapshot.writes
        return True

    def _evict(self) -> None:
        """Drop collections past `kept` (the largest first) and stop counting new ones in."""
        for name in sorted(self._held, key=lambda n: -self._held[n].postings):
            if self.held <= self.kept:
                break
            del self._held[name]
            self.whole, self._complete_at = False, None

    async def _read(self, conn: Any, collection: str) -> HeldCollection:
        """Read one collection now (a search asked for it before the read ahead took it)."""
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            writes, horizon = await snapshot_writes(conn, self.name), await read_horizon(conn)
            read = await read_collections(conn, self.name, [collection], writes, horizon)
            kept = read[collection]
        if self.held + kept.postings > self.kept:
            self._held.clear()
            self.whole, self._complete_at = False, None
        self._held[collection] = kept
        return kept


async def best_rows(
    rows: RowReader,
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
    order = np.argsort(-score, kind="stable")
    negated = -score[order]  # ascending: each score's matches are one run here
    chunk = max(limit, FILTERED_CHUNK) if clause else limit

    best: list[tuple[Any, ...]] = []
    pending: list[int] = []  # matches in order (score, then id), not read yet
    start = 0
    while pending or start < len(order):
        if len(pending) < chunk and start < len(order):
            end = min(start + chunk, len(order))
            # A tie is taken whole, to be ordered by id (by numpy: a Python sort of 200k tied
            # matches took 0.49 s of CPU).
            end = int(np.searchsorted(negated, negated[end - 1], side="right"))
            taken = order[start:end]
            taken_ids = np.array([ids[slot] for slot in found[taken].tolist()])
            pending += taken[np.lexsort((taken_ids, negated[start:end]))].tolist()
            start = end
        wanted = {ids[found[i]]: float(score[i]) for i in pending[:chunk]}
        pending = pending[chunk:]
        read = await rows(
            f"SELECT id, text, payload FROM {t} WHERE collection = %s AND id = ANY(%s){clause}",
            [collection, list(wanted), *params],
        )
        by_id = {r[0]: r for r in read}
        best += [(*by_id[key], value) for key, value in wanted.items() if key in by_id]
        if len(best) >= limit:
            break
    return best[:limit]
