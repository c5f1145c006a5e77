"""A record of empty text (the knowledge base's document records): nothing to embed, so no
vector and none missing, read by id and payload, never found by search; on both backends, also
while the embedder is down and after a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.outage_embedder import NO_WAIT, Endpoint, endpoint, spec
from tests.storage.retrieval.test_index import CountingEmbedder, ids
from toolweave.storage.retrieval import PostgresQdrantIndex, Record

from .conftest import IndexFactory

__all__ = ["endpoint"]  # the fixture

PYTHON = "Python is a programming language"
CAT = "猫在沙发上睡觉"
# Empty records first and between: the write must not shift the vectors of the others.
MIXED = [
    Record("d1", "", {"kind": "document", "title": "Languages"}, "docs"),
    Record("py", PYTHON, {"doc": "d1"}, "chunks"),
    Record("d2", "", {"kind": "document", "title": "猫"}, "docs"),
    Record("cat", CAT, {"doc": "d2"}, "chunks"),
]


async def test_a_record_of_empty_text_costs_no_embedding_and_misses_no_vector(
    make_index: IndexFactory,
) -> None:
    embedder = CountingEmbedder()
    index = make_index(embedder)
    await index.write(MIXED)
    assert embedder.texts == [PYTHON, CAT]
    assert await index.missing_vectors() == 0 and await index.reembed() == 0
    found = await index.find("docs", {"kind": "document"})
    assert sorted((r.id, r.text, r.payload["title"]) for r in found) == [
        ("d1", "", "Languages"),
        ("d2", "", "猫"),
    ]
    for record_id, text in (("py", PYTHON), ("cat", CAT)):
        hits = await index.search(text, collection="chunks", mode="vector", limit=2)
        assert hits[0].record.id == record_id
        assert hits[0].vector_score == pytest.approx(1.0, abs=1e-5)
    for mode in ("hybrid", "keyword", "vector"):
        assert await ids(index, "Languages 猫", collection="docs", mode=mode) == []

    # A record that had text and a vector loses the vector when its text becomes empty.
    await index.write([Record("old", PYTHON, {"kind": "document"}, "docs")])
    assert await ids(index, PYTHON, collection="docs", mode="vector") == ["old"]
    calls = embedder.calls
    await index.write([Record("old", "", {"kind": "document"}, "docs")])
    assert embedder.calls == calls
    assert await ids(index, PYTHON, collection="docs", mode="vector") == []
    assert await index.missing_vectors() == 0
    await index.close()

    reopened = make_index(embedder)  # a restart: still nothing missing, nothing to re-embed
    assert await reopened.missing_vectors() == 0 and await reopened.reembed() == 0
    assert await ids(reopened, CAT, collection="chunks", mode="vector", limit=1) == ["cat"]


async def test_while_the_embedder_is_down_only_records_with_text_miss_a_vector(
    make_index: IndexFactory, endpoint: Endpoint
) -> None:
    endpoint.down()
    index = make_index(spec(endpoint), embed_retry=NO_WAIT)
    await index.write(MIXED)
    assert await index.missing_vectors() == 2
    assert await index.missing_vectors("docs") == 0
    endpoint.up()
    assert await index.reembed() == 2
    assert await index.missing_vectors() == 0
    assert await ids(index, CAT, collection="chunks", mode="vector", limit=1) == ["cat"]


async def test_empty_rows_an_older_version_left_unvectored_are_owed_nothing(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """Rows of empty text an older version left unvectored (a knowledge base's document
    records written during an embedder outage, their text emptied since): Postgres owes them no
    vector, as SQLite (which has no such flag) does not, at open and after."""
    import psycopg

    embedder = CountingEmbedder()

    def opened() -> PostgresQdrantIndex:
        return PostgresQdrantIndex(
            postgres_dsn, embedder, qdrant_path=str(tmp_path), name="old_empty"
        )

    index = opened()
    await index.write(MIXED)
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
        await conn.execute("UPDATE old_empty SET vectored = false WHERE text = ''")
    assert await index.missing_vectors() == 0 and await index.reembed() == 0
    await index.close()
    reopened, calls = opened(), embedder.calls
    assert await reopened.missing_vectors() == 0 and await reopened.reembed() == 0
    assert embedder.calls == calls
    await reopened.close()
