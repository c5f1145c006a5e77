"""Word postings of `PostgresQdrantIndex` kept in memory, as `_sqlite_bm25` keeps the SQLite
index's: a keyword search scores every record of a collection that holds a query word with a few
numpy operations (`bm25_scores`), instead of a query that reads every matching tsvector.

A collection's postings are read in one snapshot (`REPEATABLE READ`, `read_collections`): every
record's id and, per lexeme, the records holding it with its frequency, aggregated by the server
(a record's length is the sum of its frequencies). `_pg_warm` reads every collection ahead in
the background, up to the index's `postings_kept`; a collection not held is read by the first
search that asks for it.

A statement-level trigger counts every write to the table's words (this process's, another
process's, another replica's) in the `<table>_meta` row `WRITES_KEY`. This index's own write
locks that row first (`lock_writes`), so the counter before and after it tells whether anyone
else wrote meanwhile; if not, the rows it wrote are read back in its transaction (`written`) and
counted into the postings held (`PgPostings.committed`), else everything held is dropped and read
again in the background. Each search reads the counter in the same round trip as its query's
lexemes: another writer's write drops everything held too (`PgPostings.scores`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolweave.storage.retrieval._live_vectors import WRITES_KEY
from toolweave.storage.retrieval._pg_bm25 import TEXT_CONFIG, bm25_scores, tsvector_words
from toolweave.storage.retrieval._sqlite_bm25 import RECOUNT_ROWS
from toolweave.storage.retrieval.index import DEFAULT_POSTINGS_KEPT

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IDs = npt.NDArray[np.int64]
    Floats = npt.NDArray[np.float64]

    Rows = Callable[[str, Sequence[Any]], Awaitable[list[tuple[Any, ...]]]]

FILTERED_CHUNK = 1_000
"""Best-scored records a filtered keyword search reads at a time until `limit` pass the filter."""
Written = dict[str, dict[str, list[tuple[str, int]]]]
"""Rows one write stored: collection -> id -> (lexeme, frequency) of each of its words."""


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


async def written(conn: Any, t: str, keys: Sequence[tuple[str, str]]) -> tuple[int, Written]:
    """The write counter after this transaction's writes, and the words of the rows `keys` as
    stored (empty past `RECOUNT_ROWS` rows: reading them back costs more than reading the
    collection again)."""
    cursor = await conn.execute(f"SELECT value FROM {t}_meta WHERE key = %s", [WRITES_KEY])
    after = int((await cursor.fetchone())[0])
    found: Written = {}
    if not keys or len(keys) > RECOUNT_ROWS:
        return after, found
    cursor = await conn.execute(
        f"""SELECT r.collection, r.id, u.lexeme, coalesce(array_length(u.positions, 1), 1)
        FROM {t} r LEFT JOIN LATERAL unnest(r.words) u ON true
        WHERE (r.collection, r.id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))""",
        [[k[0] for k in keys], [k[1] for k in keys]],
    )
    for collection, id_, lexeme, tf in await cursor.fetchall():
        words = found.setdefault(collection, {}).setdefault(id_, [])
        if lexeme is not None:
            words.append((lexeme, tf))
    return after, found


@dataclass
class _Collection:
    """One collection's records (by slot: its position when read, or when written later) and
    postings; a replaced or removed record's slot is dead (`live` False) until it is read again."""

    ids: list[str]
    length: Any
    live: Any
    terms: dict[str, tuple[Any, Any]]
    slots: dict[str, int] = field(default_factory=dict)
    records: int = 0
    tokens: float = 0.0
    postings: int = 0
    dead: int = 0

    def __post_init__(self) -> None:
        self.slots = {id_: n for n, id_ in enumerate(self.ids)}
        self.records = len(self.ids)
        self.tokens = float(self.length.sum())
        self.postings = sum(len(ids) for ids, _ in self.terms.values())

    def compact(self) -> None:
        """Forget the dead slots (the live records are numbered again, in their order)."""
        import numpy as np

        keep = np.flatnonzero(self.live)
        renumbered = np.full(len(self.ids), -1, np.int64)
        renumbered[keep] = np.arange(len(keep))
        terms = {}
        for lexeme, (ids, tf) in self.terms.items():
            alive = self.live[ids]
            if alive.any():
                terms[lexeme] = (renumbered[ids[alive]], tf[alive])
        self.ids = [self.ids[i] for i in keep]
        self.length, self.live, self.terms, self.dead = self.length[keep], self.live[keep], terms, 0
        self.__post_init__()

    def remove(self, id_: str) -> None:
        slot = self.slots.pop(id_, None)
        if slot is not None:
            self.live[slot] = False
            self.records -= 1
            self.tokens -= float(self.length[slot])
            self.dead += 1

    def add(self, rows: dict[str, list[tuple[str, int]]]) -> int:
        """Count in new records (id -> their words); the postings added."""
        import numpy as np

        first = len(self.ids)
        pairs: dict[str, list[tuple[int, int]]] = {}
        lengths = []
        for slot, (id_, words) in enumerate(rows.items(), start=first):
            self.ids.append(id_)
            self.slots[id_] = slot
            lengths.append(sum(tf for _, tf in words))
            for lexeme, tf in words:
                pairs.setdefault(lexeme, []).append((slot, tf))
        self.length = np.concatenate([self.length, np.array(lengths, np.float64)])
        self.live = np.concatenate([self.live, np.ones(len(lengths), bool)])
        self.records += len(lengths)
        self.tokens += float(sum(lengths))
        for lexeme, found in pairs.items():
            new = np.array(found, np.int64)
            ids, tf = self.terms.get(lexeme, (np.empty(0, np.int64), np.empty(0)))
            self.terms[lexeme] = (np.concatenate([ids, new[:, 0]]), np.concatenate([tf, new[:, 1]]))
        added = sum(map(len, pairs.values()))
        self.postings += added
        return added


async def read_collections(conn: Any, t: str, collections: list[str]) -> dict[str, _Collection]:
    """The postings of `collections`, read inside the caller's `REPEATABLE READ` transaction."""
    import numpy as np

    cursor = conn.cursor(binary=True)
    await cursor.execute(
        f"SELECT collection, array_agg(id ORDER BY id) FROM {t} WHERE collection = ANY(%s)"
        " GROUP BY collection",
        [collections],
    )
    ids = dict(await cursor.fetchall())
    await cursor.execute(
        f"""WITH d AS (SELECT collection, words,
            row_number() OVER (PARTITION BY collection ORDER BY id) - 1 AS n
            FROM {t} WHERE collection = ANY(%s))
        SELECT d.collection, u.lexeme, array_agg(d.n),
            array_agg(coalesce(array_length(u.positions, 1), 1))
        FROM d, unnest(d.words) u GROUP BY d.collection, u.lexeme""",
        [collections],
    )
    terms: dict[str, dict[str, tuple[Any, Any]]] = {name: {} for name in collections}
    for collection, lexeme, slots, tf in await cursor.fetchall():
        terms[collection][lexeme] = (np.array(slots, np.int64), np.array(tf, np.float64))
    found = {}
    for name in collections:
        count = len(ids.get(name, []))
        length = np.zeros(count)
        for slots, tf in terms[name].values():
            length[slots] += tf  # a lexeme's records are distinct
        found[name] = _Collection(
            list(ids.get(name, [])), length, np.ones(count, bool), terms[name]
        )
    return found


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
    collections: dict[str, _Collection]
    skipped: set[str]
    complete: bool


class PgPostings:
    """The postings of table `name`'s collections kept between searches, at most `kept` (the
    index's own; used under its connection lock)."""

    def __init__(self, name: str, kept: int = DEFAULT_POSTINGS_KEPT) -> None:
        self.name = name
        self.kept = kept
        self.whole = False
        """Whether every collection within `kept` is held (read ahead since last dropped)."""
        self.complete = False
        """Whether every collection of the table is held (a write to a new one counts it in)."""
        self._held: dict[str, _Collection] = {}
        self._writes: int | None = None

    @property
    def held(self) -> int:
        return sum(c.postings for c in self._held.values())

    def holding(self) -> set[str]:
        return set(self._held)

    def only(self, collection: str) -> bool:
        """Whether the table holds no collection but `collection`, as the postings last saw it
        (a vector search then asks Qdrant for the nearest points unfiltered)."""
        return self.complete and set(self._held) == {collection}

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
        if int(writes or 0) != self._writes:  # another writer's write
            self._drop(int(writes or 0))
        kept = self._held.get(collection) or await self._read(conn, collection)
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

    def committed(
        self, before: int, after: int, keys: Iterable[tuple[str, str]], rows: Written
    ) -> None:
        """This index's write that moved the counter from `before` to `after`, replacing or
        removing the records `keys` and storing `rows` (their words; none read back past
        `RECOUNT_ROWS`: the collections written are dropped then)."""
        keys = list(keys)
        if before != self._writes:
            self._drop(after)
            return
        self._writes = after
        touched: dict[str, list[str]] = {}
        for collection, id_ in keys:
            touched.setdefault(collection, []).append(id_)
        large = len(keys) > RECOUNT_ROWS
        for collection, ids in touched.items():
            kept = self._held.get(collection)
            if kept is None and self.complete and not large:
                kept = self._held[collection] = _new_collection()  # a new collection
            if kept is None:
                continue
            if not large:
                for id_ in ids:
                    kept.remove(id_)
                kept.add(rows.get(collection, {}))
            if kept.dead > kept.records:
                kept.compact()
            if large or self.held > self.kept:
                del self._held[collection]  # read again
                self.whole = self.complete = False

    def adopt(self, snapshot: Snapshot) -> bool:
        """Take the collections read ahead, unless a write came after them (False: read
        again)."""
        held = self.holding()
        if self._writes is not None and snapshot.writes < self._writes:
            return False  # this index wrote after it
        if held and snapshot.writes != self._writes:  # another writer wrote after them
            self._drop(None)
            return False
        self._writes = snapshot.writes
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
        self.whole, self.complete = True, complete
        return True

    def _drop(self, writes: int | None) -> None:
        self._held.clear()
        self._writes = writes
        self.whole = self.complete = False

    async def _read(self, conn: Any, collection: str) -> _Collection:
        """Read one collection now (a search asked for it before the read ahead took it)."""
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            writes = await snapshot_writes(conn, self.name)
            kept = (await read_collections(conn, self.name, [collection]))[collection]
        if writes != self._writes:
            self._drop(writes)
        if self.held + kept.postings > self.kept:
            self._held.clear()
            self.whole = self.complete = False
        self._held[collection] = kept
        return kept


def _new_collection() -> _Collection:
    import numpy as np

    return _Collection([], np.zeros(0), np.ones(0, bool), {})


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
    order = np.argsort(-score, kind="stable")
    chunk = max(limit, FILTERED_CHUNK) if clause else limit

    def by_score_then_id(i: int) -> tuple[float, str]:
        return -float(score[i]), ids[found[i]]

    best: list[tuple[Any, ...]] = []
    pending: list[int] = []  # matches in order (score, then id), not read yet
    start = 0
    while pending or start < len(order):
        if len(pending) < chunk and start < len(order):
            end = min(start + chunk, len(order))
            while end < len(order) and score[order[end]] == score[order[end - 1]]:
                end += 1  # a tie is taken whole, to be ordered by id
            pending += sorted(order[start:end].tolist(), key=by_score_then_id)
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
