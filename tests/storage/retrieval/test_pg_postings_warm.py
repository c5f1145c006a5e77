"""Postings of `PostgresQdrantIndex` read ahead (`_pg_warm`): when the index opens and after a
large write, every collection's postings are read in the background, so no search reads a
collection itself; this index's small writes and deletions are counted in, another writer's
(another process, another replica: any connection to the same Postgres) are caught up by record
version; the scores equal postings read afresh, and `postings_kept` bounds them.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.storage.retrieval.test_keyword_postings import QUERIES, text
from toolweave.storage.retrieval import (
    IndexSettings,
    PostgresQdrantIndex,
    Record,
    _pg_postings,
    open_index,
)
from toolweave.storage.retrieval._pg_postings import PgPostings
from toolweave.storage.retrieval._sqlite_bm25 import RECOUNT_ROWS
from toolweave.storage.text import keyword_terms

COLLECTIONS = ["a", "b"]
Opener = Callable[..., PostgresQdrantIndex]
Reads = Callable[[PostgresQdrantIndex], list[list[str]]]


def records(rng: random.Random, count: int, prefix: str, collections: list[str]) -> list[Record]:
    return [
        Record(f"{prefix}{i}", text(rng), collection=rng.choice(collections)) for i in range(count)
    ]


async def postings_in(dsn: str, name: str) -> int:
    """(record, lexeme) pairs of the table, counted by the server."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cursor = await conn.execute(f"SELECT count(*) FROM {name}, unnest(words)")
        return int((await cursor.fetchone())[0])


async def scores_by_id(postings: PgPostings, conn: Any, collection: str, query: str) -> Any:
    ids, found, scored = await postings.scores(conn, collection, " ".join(keyword_terms(query)), 64)
    return {ids[slot]: float(score) for slot, score in zip(found, scored, strict=True)}


async def agree(index: PostgresQdrantIndex, dsn: str, collections: list[str]) -> None:
    """The index's kept scores equal scores from postings read afresh, for every query."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for collection in collections:
            for query in QUERIES:
                fresh = await scores_by_id(PgPostings(index.name), conn, collection, query)
                async with index._lock:
                    kept = await scores_by_id(index._postings, index._conn, collection, query)
                assert kept.keys() == fresh.keys()
                for id_, score in fresh.items():
                    assert abs(kept[id_] - score) < 1e-9


@pytest.fixture
def opened(postgres_dsn: str, tmp_path: Path) -> Opener:
    name = f"warm_{uuid.uuid4().hex[:10]}"

    def opener(**kwargs: Any) -> PostgresQdrantIndex:
        folder = tmp_path / uuid.uuid4().hex[:6]
        return PostgresQdrantIndex(
            postgres_dsn, "hash:64", qdrant_path=str(folder), name=name, **kwargs
        )

    return opener


@pytest.fixture
def searches_read(monkeypatch: pytest.MonkeyPatch) -> Reads:
    """`searches_read(index)`: the collections the index's searches read themselves on its own
    connection, from the test's start (the read ahead uses a connection of its own)."""
    reads: list[tuple[Any, list[str]]] = []
    real: Callable[..., Awaitable[Any]] = _pg_postings.read_collections

    async def read_collections(conn: Any, t: str, collections: list[str], *at: int) -> Any:
        reads.append((conn, collections))
        return await real(conn, t, collections, *at)

    monkeypatch.setattr(_pg_postings, "read_collections", read_collections)
    return lambda index: [names for conn, names in reads if conn is index._conn]


async def test_postings_are_read_ahead_and_no_search_reads_a_collection(
    opened: Opener, postgres_dsn: str, searches_read: Reads
) -> None:
    rng = random.Random(3)
    writer = opened()
    await writer.write(records(rng, 300, "r", COLLECTIONS))

    index = opened()
    name = index.name
    assert await index.warm_postings() == await postings_in(postgres_dsn, name)
    for collection in COLLECTIONS:
        for query in QUERIES:
            assert await index.keyword_search(query, limit=5, collection=collection)
    await agree(index, postgres_dsn, COLLECTIONS)

    # Small writes of this index are counted in: a new word, a replacement, a deletion, a
    # delete_where, a collection no record was in before.
    await index.write(
        [Record("z", "zorblax tea garden", collection="a"), Record("r1", "spring", collection="a")],
        delete=[("a", "r2"), ("b", "r3")],
    )
    await index.write([Record("n", "tea", {"k": 1}, collection="c")])
    await index.delete_where("b", {"k": None})  # every record of b
    hits = await index.keyword_search("zorblax", limit=5, collection="a")
    assert [h.record.id for h in hits] == ["z"]
    assert [h.record.id for h in await index.keyword_search("tea", limit=5, collection="c")]
    assert not await index.keyword_search("tea", limit=5, collection="b")
    assert await index.warm_postings() == await postings_in(postgres_dsn, name)
    assert not searches_read(index)
    await agree(index, postgres_dsn, [*COLLECTIONS, "c"])

    # Another writer's writes (new records, replacements, deletions, in both collections): the
    # next search of a collection reads its record versions and the records that changed.
    await writer.write(
        [*records(rng, 50, "s", COLLECTIONS), Record("r5", "report runs", collection="b")],
        delete=[("a", "z"), ("a", "r7"), ("b", "r8")],
    )
    for collection in COLLECTIONS:
        await index.keyword_search(QUERIES[0], limit=5, collection=collection)
    assert not await index.keyword_search("zorblax", limit=5, collection="a")
    assert await index.warm_postings() == await postings_in(postgres_dsn, name)
    assert not searches_read(index)
    await agree(index, postgres_dsn, [*COLLECTIONS, "c"])

    # This index's own write too large to count in drops the collection; it is read again.
    await index.write(records(rng, RECOUNT_ROWS + 1, "t", ["a"]))
    assert await index.warm_postings() == await postings_in(postgres_dsn, name)
    await index.keyword_search(QUERIES[1], limit=5, collection="a")
    assert not searches_read(index)
    await agree(index, postgres_dsn, [*COLLECTIONS, "c"])
    await writer.close()
    await index.close()


async def test_postings_kept_bounds_the_read_ahead(
    opened: Opener, postgres_dsn: str, searches_read: Reads
) -> None:
    """Collections are read ahead whole while they fit `postings_kept`; a collection past it is
    read by the search that asks, scoring the same."""
    rng = random.Random(5)
    writer = opened()
    await writer.write(records(rng, 40, "a", ["a"]) + records(rng, 200, "b", ["b"]))
    index = opened(postings_kept=300)
    held = await index.warm_postings()
    assert 0 < held <= 300 < await postings_in(postgres_dsn, index.name)
    assert not searches_read(index)
    await agree(index, postgres_dsn, ["a", "b"])
    await writer.close()
    await index.close()
    with pytest.raises(ValueError, match="postings_kept"):
        opened(postings_kept=0)
    with pytest.raises(ValueError, match="postings_kept"):
        IndexSettings(dsn=postgres_dsn, qdrant_path="q", postings_kept=0)


async def test_index_settings_postings_kept_reaches_postgres(
    postgres_dsn: str, tmp_path: Path
) -> None:
    settings = IndexSettings(dsn=postgres_dsn, qdrant_path=str(tmp_path / "q"), postings_kept=7)
    index = open_index(
        tmp_path / "unused.db", "hash:64", name=f"s_{uuid.uuid4().hex[:8]}", settings=settings
    )
    assert isinstance(index, PostgresQdrantIndex)
    assert index._postings.kept == 7
    await index.close()


async def test_a_vector_search_of_the_only_collection_is_exact_even_after_another_writes(
    opened: Opener,
) -> None:
    """A table seen holding one collection is searched in Qdrant without a payload filter; a
    collection another writer adds meanwhile is filtered out all the same (oracle: cosine over
    the embedder's vectors of the collection's records)."""
    import numpy as np

    rng = random.Random(9)
    index, writer = opened(), opened()
    mine = records(rng, 80, "a", ["a"])
    await index.write(mine)
    await index.warm_postings()
    assert index._postings.only("a")

    def nearest(query: str, texts: list[Record], k: int) -> list[float]:
        """The `k` best cosines (ties make ids ambiguous, not scores)."""
        vectors = np.asarray(index.embedder.embed([r.text for r in texts]), np.float64)
        asked = np.asarray(index.embedder.embed([query])[0], np.float64)
        cosine = vectors @ asked / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(asked))
        return [round(float(c), 5) for c in sorted(cosine, reverse=True)[:k]]

    def found(hits: list[Any]) -> list[float]:
        return [round(h.vector_score, 5) for h in hits]

    for query in QUERIES:
        hits = await index.vector_search(query, limit=5, collection="a", where=None)
        assert found(hits) == nearest(query, mine, 5)
    await writer.write([Record(f"b{r.id}", r.text, collection="b") for r in mine])
    assert index._postings.only("a")  # not searched by keywords since: it has not seen "b"
    for query in QUERIES:
        hits = await index.vector_search(query, limit=5, collection="a", where=None)
        assert {h.record.collection for h in hits} == {"a"}
        assert found(hits) == nearest(query, mine, 5)
    await writer.close()
    await index.close()


async def test_ties_are_ordered_by_id_within_each_score(opened: Opener) -> None:
    """Equal scores go by id (the shorter records, named last, score higher and come first);
    a tie cut by the limit is taken whole, then ordered (in numpy: the chunk spans two scores)."""
    index = opened()
    shorter = [Record(f"z{i:02d}", "oolong tea") for i in (7, 3, 9)]
    tied = [
        Record(f"t{i:03d}", "oolong tea with milk")
        for i in random.Random(5).sample(range(300), 300)
    ]
    await index.write(shorter + tied)
    found = await index.keyword_search("oolong", limit=40)
    assert [h.record.id for h in found] == ["z03", "z07", "z09", *[f"t{i:03d}" for i in range(37)]]
    await index.close()
