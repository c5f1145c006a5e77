"""One collection's postings as `PostgresQdrantIndex` holds them (`_pg_postings`), and the queries
that read them: a whole collection (`read_collections`), some records (`read_rows`), and what
another writer changed (`read_changes`).

A record's version is its row's `xmin` (the transaction that wrote the row as it is). Every row
written after a snapshot was taken has an `xmin` at or past that snapshot's horizon (its oldest
transaction still running), so a collection held remembers the horizon of the snapshot it was
read (or last caught up) in, and `read_changes` returns the versions of the rows written from
it on (a superset of those changed: a record held at the same version is not read again) with
the collection's count of records, which tells whether any held record was removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Words = list[tuple[str, int]]
"""A record's (lexeme, frequency) pairs."""
Rows = dict[str, dict[str, tuple[int, Words]]]
"""Records read: collection -> id -> (version, words)."""
VERSION_SQL = "xmin::text::bigint"


@dataclass
class HeldCollection:
    """One collection's records (by slot: its position when read, or when written later), their
    versions, lengths (tokens), distinct words and postings, as of the table's write counter
    `writes`; a replaced or removed record's slot is dead (`live` False) until the collection is
    compacted (`postings` counts the live records' only)."""

    ids: list[str]
    versions: Any
    length: Any
    distinct: Any
    terms: dict[str, tuple[Any, Any]]
    writes: int
    horizon: int
    live: Any = None
    slots: dict[str, int] = field(default_factory=dict)
    records: int = 0
    tokens: float = 0.0
    postings: int = 0
    dead: int = 0

    def __post_init__(self) -> None:
        import numpy as np

        if self.live is None:
            self.live = np.ones(len(self.ids), bool)
        self.slots = {id_: n for n, id_ in enumerate(self.ids) if self.live[n]}
        self.records = len(self.slots)
        self.tokens = float(self.length[self.live].sum())
        self.postings = int(self.distinct[self.live].sum())

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
        self.versions, self.length = self.versions[keep], self.length[keep]
        self.distinct = self.distinct[keep]
        self.terms, self.dead, self.live = terms, 0, None
        self.__post_init__()

    def remove(self, id_: str) -> None:
        slot = self.slots.pop(id_, None)
        if slot is not None:
            self.live[slot] = False
            self.records -= 1
            self.tokens -= float(self.length[slot])
            self.postings -= int(self.distinct[slot])
            self.dead += 1

    def add(self, rows: dict[str, tuple[int, Words]]) -> None:
        """Count in records (id -> their version and words), replacing any held under their
        ids; compacted when most slots are dead."""
        import numpy as np

        for id_ in rows:
            self.remove(id_)
        first = len(self.ids)
        pairs: dict[str, list[tuple[int, int]]] = {}
        lengths, versions = [], []
        for slot, (id_, (version, words)) in enumerate(rows.items(), start=first):
            self.ids.append(id_)
            self.slots[id_] = slot
            versions.append(version)
            lengths.append(sum(tf for _, tf in words))
            for lexeme, tf in words:
                pairs.setdefault(lexeme, []).append((slot, tf))
        self.versions = np.concatenate([self.versions, np.array(versions, np.int64)])
        self.length = np.concatenate([self.length, np.array(lengths, np.float64)])
        distinct = [len(words) for _, words in rows.values()]
        self.distinct = np.concatenate([self.distinct, np.array(distinct, np.int64)])
        self.live = np.concatenate([self.live, np.ones(len(lengths), bool)])
        self.records += len(lengths)
        self.tokens += float(sum(lengths))
        for lexeme, found in pairs.items():
            new = np.array(found, np.int64)
            ids, tf = self.terms.get(lexeme, (np.empty(0, np.int64), np.empty(0)))
            self.terms[lexeme] = (np.concatenate([ids, new[:, 0]]), np.concatenate([tf, new[:, 1]]))
        self.postings += sum(distinct)
        if self.dead > self.records:
            self.compact()

    def changed(self, versions: dict[str, int]) -> list[str]:
        """The ids of `versions` (id -> stored version) not held at that version."""
        return [
            id_
            for id_, version in versions.items()
            if (slot := self.slots.get(id_)) is None or self.versions[slot] != version
        ]


def empty_collection(writes: int) -> HeldCollection:
    """A collection this index's write creates (its horizon 0: every row is newer)."""
    import numpy as np

    return HeldCollection(
        [], np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64), {}, writes, 0
    )


async def read_collections(
    conn: Any, t: str, collections: list[str], writes: int, horizon: int
) -> dict[str, HeldCollection]:
    """The postings of `collections`, read inside the caller's `REPEATABLE READ` transaction
    (at write counter `writes`, its snapshot's `horizon`)."""
    import numpy as np

    cursor = conn.cursor(binary=True)
    await cursor.execute(
        f"SELECT collection, array_agg(id ORDER BY id), array_agg({VERSION_SQL} ORDER BY id)"
        f" FROM {t} WHERE collection = ANY(%s) GROUP BY collection",
        [collections],
    )
    records = {name: (ids, versions) for name, ids, versions in await cursor.fetchall()}
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
        ids, versions = records.get(name, ([], []))
        length, distinct = np.zeros(len(ids)), np.zeros(len(ids), np.int64)
        for slots, tf in terms[name].values():
            length[slots] += tf  # a lexeme's records are distinct
            distinct[slots] += 1
        found[name] = HeldCollection(
            list(ids), np.array(versions, np.int64), length, distinct, terms[name], writes, horizon
        )
    return found


async def read_rows(conn: Any, t: str, keys: list[tuple[str, str]]) -> Rows:
    """The version and words of the records `keys` ((collection, id) pairs) that exist."""
    found: Rows = {}
    if not keys:
        return found
    cursor = await conn.execute(
        f"""SELECT r.collection, r.id, r.{VERSION_SQL}, u.lexeme,
            coalesce(array_length(u.positions, 1), 1)
        FROM {t} r LEFT JOIN LATERAL unnest(r.words) u ON true
        WHERE (r.collection, r.id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))""",
        [[k[0] for k in keys], [k[1] for k in keys]],
    )
    for collection, id_, version, lexeme, tf in await cursor.fetchall():
        _, words = found.setdefault(collection, {}).setdefault(id_, (int(version), []))
        if lexeme is not None:
            words.append((lexeme, tf))
    return found


async def read_horizon(conn: Any) -> int:
    """The horizon of the caller's snapshot, as a 32-bit transaction id (what `xmin` holds)."""
    cursor = await conn.execute(
        "SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::numeric % 4294967296)::bigint"
    )
    return int((await cursor.fetchone())[0])


async def read_changes(
    conn: Any, t: str, collection: str, horizon: int
) -> tuple[int, dict[str, int]]:
    """(the records of `collection`, id -> version of those written from `horizon` on)."""
    cursor = conn.cursor(binary=True)
    newer = "FILTER (WHERE age(xmin) <= age(%s::text::xid))"
    await cursor.execute(
        f"""SELECT count(*), coalesce(array_agg(id) {newer}, '{{}}'),
            coalesce(array_agg({VERSION_SQL}) {newer}, '{{}}')
        FROM {t} WHERE collection = %s""",
        [str(horizon), str(horizon), collection],
    )
    count, ids, versions = await cursor.fetchone()
    return int(count), dict(zip(ids, versions, strict=True))


async def read_ids(conn: Any, t: str, collection: str) -> set[str]:
    """The ids of every record of `collection`."""
    cursor = conn.cursor(binary=True)
    await cursor.execute(f"SELECT id FROM {t} WHERE collection = %s", [collection])
    return {row[0] for row in await cursor.fetchall()}
